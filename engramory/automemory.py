"""Where Claude Code keeps a project's auto memory: `<config>/projects/<name>/memory/`, or
the folder an `autoMemoryDirectory` setting names.

Measured on the Claude Code 2.1.332 CLI: <config> is $CLAUDE_CONFIG_DIR or ~/.claude; the
project is the real path (symlinks resolved) of the git work tree holding the session's
folder, the main repository for a linked worktree (worktrees share one memory), or the
folder itself outside git; <name> replaces every UTF-16 unit of that path that is not an
ASCII letter or digit with '-', and past 200 units cuts it and appends a hash.
$CLAUDE_CODE_PROJECT_DIR_NAME overrides <name>.

`autoMemoryDirectory` (read from the 2.1.332 CLI and measured on it): the first of the
project's local settings (`<project>/.claude/settings.local.json`) and the user settings
(`<config>/settings.json`) that holds the key decides; project settings
(`.claude/settings.json`) are not read for it. A value starting with `~/` is taken under
HOME (one that climbs out with `..` is refused), the rest is normalised, trailing slashes
dropped; a value that is not absolute, shorter than 3 characters or holds NUL is ignored
(the default folder is used). The host then loads `<dir>/MEMORY.md`.

The doctor (its default root), the backstop hooks (which index to watch), SessionStart and
the guard (a symlinked index's target is the index) all ask here. No git process is started
and `os` is not imported (the guard's hot path): plain stats through engramory.scope and one
small read of a `.git` file and of each settings file.
"""

from engramory import scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

PROJECT_NAME_MAX = 200  # the host cuts longer project folder names and appends a hash
SETTING = "autoMemoryDirectory"
SETTINGS_MAX = 1 << 20


def claude_config_dir(env: "Mapping[str, str] | None" = None) -> str:
    """`$CLAUDE_CONFIG_DIR`, else `~/.claude`: where Claude Code keeps user settings,
    skills and per-project data."""
    if env is None:
        env = scope.environ()
    configured = env.get("CLAUDE_CONFIG_DIR", "").strip()
    if configured:
        return scope.abspath(scope.expanduser(configured))
    home = env.get("HOME") or scope.expanduser("~")
    return scope.join(home, ".claude")


def sanitize_project_path(path: str) -> str:
    """The folder name Claude Code gives a project under `<config>/projects/`: every UTF-16
    code unit of the absolute project path that is not an ASCII letter or digit becomes '-'
    (`/home/u/my.proj` -> `-home-u-my-proj`); a name past 200 characters is cut there and
    `-<base-36 hash of the path>` appended. Read from the 2.1.332 CLI and measured on it for
    '/', '.', '_', spaces, non-BMP characters and paths past 200 units."""
    out = []
    h = 0
    for ch in path:  # UTF-16 units without the utf-16 codec (an import the hook would pay)
        o = ord(ch)
        codes = (o,) if o < 0x10000 else (0xD800 + ((o - 0x10000) >> 10), 0xDC00 + ((o - 0x10000) & 0x3FF))
        for code in codes:
            h = (h * 31 + code) & 0xFFFFFFFF  # JavaScript's 32-bit string hash
            out.append(ch if code < 128 and ch.isalnum() else "-")
    name = "".join(out)
    if len(name) <= PROJECT_NAME_MAX:
        return name
    if h >= 0x80000000:
        h = 0x100000000 - h  # Math.abs of the signed value
    digits = ""
    while True:
        h, r = divmod(h, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[r] + digits
        if not h:
            break
    return name[:PROJECT_NAME_MAX] + "-" + digits


def git_roots(path: str, limit: int = 64) -> "list[str]":
    """The work tree holding `path` (nearest folder with a `.git` entry) and, for a linked
    worktree, its main repository's folder first: auto memory is shared by a repository's
    worktrees and subfolders. Plain stats and one small read, no git process."""
    d = path
    for _ in range(limit):
        dotgit = scope.join(d, ".git")
        if scope.isdir(dotgit):
            return [d]
        if scope.isfile(dotgit):
            try:
                line = scope.read_bounded(dotgit, 4095)[0].decode("utf-8", "replace").strip()
            except OSError:
                return [d]
            gitdir = line[len("gitdir:"):].strip() if line.startswith("gitdir:") else ""
            if gitdir and not scope.isabs(gitdir):
                gitdir = scope.normpath(scope.join(d, gitdir))
            marker = scope.sep + ".git" + scope.sep + "worktrees" + scope.sep
            cut = gitdir.find(marker)
            return [gitdir[:cut], d] if cut > 0 else [d]
        parent = scope.dirname(d)
        if parent == d:
            return []
        d = parent
    return []


def project_candidates(payload: "Mapping[str, Any]", env: "Mapping[str, str]") -> "list[str]":
    """Absolute project paths this session may be keyed under: the git root of the project
    (auto memory is shared by a repository's worktrees and subfolders), the session's start
    folder (CLAUDE_PROJECT_DIR) and the hook's cwd. Duplicates removed, order kept."""
    seen: list[str] = []
    raw = [env.get("CLAUDE_PROJECT_DIR"), payload.get("cwd")]
    for p in raw:
        if not isinstance(p, str) or not p.strip() or not scope.isabs(p):
            continue
        p = scope.realpath(p)  # the host keys the folder by the real path
        for candidate in git_roots(p) + [p]:
            if candidate not in seen:
                seen.append(candidate)
    return seen


def _setting_in(path: str) -> "tuple[bool, Any]":
    """(whether the settings file at `path` holds autoMemoryDirectory, its value)."""
    try:
        raw = scope.read_bounded(path, SETTINGS_MAX)[0]  # a FIFO here must not hang the hook
    except OSError:
        return False, None
    if SETTING.encode() not in raw or len(raw) > SETTINGS_MAX:
        return False, None  # the common case, decided without parsing
    from engramory import jsonlite  # lazy: hot path, the common case above decides without parsing

    try:
        obj = jsonlite.loads(jsonlite.decode_payload(raw))
    except ValueError:
        return False, None
    if not isinstance(obj, dict) or obj.get(SETTING) is None:
        return False, None
    return True, obj[SETTING]


def configured_dir(project: "str | None", env: "Mapping[str, str]") -> "tuple[str | None, str | None]":
    """(the folder autoMemoryDirectory names, or None; the settings file it came from). A
    value the host ignores gives (None, file): the default folder is used."""
    files = []
    if project:
        files.append(scope.join(project, ".claude", "settings.local.json"))
    files.append(scope.join(claude_config_dir(env), "settings.json"))
    for path in files:
        found, value = _setting_in(path)
        if found:
            return _usable_dir(value, env), path
    return None, None


def _usable_dir(value: "Any", env: "Mapping[str, str]") -> "str | None":
    if not isinstance(value, str) or not value:
        return None
    if value.startswith("~/"):
        rest = scope.normpath(value[2:] or ".")
        if rest in (".", "..") or rest.startswith("../"):
            return None
        home = env.get("HOME") or scope.expanduser("~")
        value = scope.join(home, value[2:])
    d = scope.normpath(value).rstrip("/")
    if not scope.isabs(d) or len(d) < 3 or "\x00" in d:
        return None
    import unicodedata  # only with the setting in force: NFC, as the host normalises it

    return unicodedata.normalize("NFC", d)


def auto_memory_index(project: str, env: "Mapping[str, str]") -> "str | None":
    """The index the host loads for `project`: `<autoMemoryDirectory>/<index name>` when that
    setting is in force, else `<config>/projects/<sanitized project>/memory/<index name>`;
    None when an explicit folder name (CLAUDE_CODE_PROJECT_DIR_NAME) is not a plain name."""
    index_name = scope.index_name(env)[0]
    override, _ = configured_dir(project, env)
    if override:
        return scope.join(override, index_name)
    name = env.get("CLAUDE_CODE_PROJECT_DIR_NAME", "").strip() or sanitize_project_path(project)
    if "/" in name or "\\" in name or name in (".", ".."):
        return None
    return scope.join(claude_config_dir(env), "projects", name, "memory", index_name)


def memory_dir(cwd: str, env: "Mapping[str, str] | None" = None) -> "str | None":
    """The auto-memory folder of the project `cwd` belongs to (the first candidate)."""
    env = scope.environ() if env is None else env
    for project in project_candidates({"cwd": scope.abspath(cwd)}, {}):
        index = auto_memory_index(project, env)
        return scope.dirname(index) if index else None
    return None


def index_for(cwd: "str | None", env: "Mapping[str, str]") -> "str | None":
    """The auto-memory index of the session at `cwd` (CLAUDE_PROJECT_DIR first), or None."""
    for project in project_candidates({"cwd": cwd}, env):
        return auto_memory_index(project, env)
    return None
