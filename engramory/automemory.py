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

import sys

from engramory import scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
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


# --- what the backstop watches, and whether any of it moved ---------------------------------
#
# engramory.notices (the PostToolUse and SessionStart backstops) watches the known indexes of a
# session, their store folders and their store configs by size:mtime stamps kept in a small
# per-session state file. Those pieces live here, beside the auto-memory index they start
# from, so that an after-tool hook can tell with one stat per watched file, before it imports
# notices (and the size and config modules under it), that nothing moved since the last look:
# the common case, a shell command that touched no index (`unchanged`). notices re-exports them.

STATE_MAX_BYTES = 1 << 16


def known_indexes(payload: "Mapping[str, Any]", env: "Mapping[str, str] | None" = None) -> "list[str]":
    """Every index this session is known to use: ENGRAMORY_INDEX_PATH entries, then the
    auto-memory index of each project candidate. Paths may not exist."""
    if env is None:
        env = scope.environ()
    out: list[str] = []
    for p in scope.index_paths(env) or ():
        if p not in out:
            out.append(p)
    for project in project_candidates(payload, env):
        index = auto_memory_index(project, env)
        if index is not None and index not in out:
            out.append(index)
    return out


def state_dir(env: "Mapping[str, str]") -> "str | None":
    """Where per-session state lives: the plugin's data folder when run as a plugin, else a
    private folder of this user under the system temp dir. None when neither is usable."""
    plugin_data = env.get("CLAUDE_PLUGIN_DATA", "").strip()
    if plugin_data and scope.isabs(plugin_data):
        return scope.join(plugin_data, "backstop")
    # tempfile.gettempdir() imports random and friends: read the usual variables instead.
    tmp = env.get("TMPDIR") or env.get("TEMP") or env.get("TMP")
    if not tmp:
        tmp = "/tmp" if sys.platform != "win32" else None
    if not tmp:
        return None
    uid = scope.getuid()
    return scope.join(tmp, "engramory-backstop-%s" % (uid if uid is not None else "user"))


def _session_key(session_id: object) -> str:
    text = session_id if isinstance(session_id, str) else ""
    key = "".join(c for c in text if c.isascii() and (c.isalnum() or c in "-_"))[:100]
    return key or "no-session"


def state_path(env: "Mapping[str, str]", session_id: object) -> "str | None":
    folder = state_dir(env)
    if folder is None:
        return None
    return scope.join(folder, "%s.state" % _session_key(session_id))


def config_state_path(spath: "str | None") -> "str | None":
    """The state file of the store configs, beside the session's state file `spath`."""
    return spath[: -len(".state")] + ".config.state" if spath else None


def signature(path: str) -> str:
    """size:mtime_ns of `path`, or "-" when it is missing: a change means "look again"."""
    try:
        st = scope.stat(path)
    except (OSError, ValueError):
        return "-"
    return "%d:%d" % (st.st_size, st.st_mtime_ns)


def folder_key(index: str) -> str:
    """The state key of an index's store folder (a trailing slash: never an index path)."""
    return scope.dirname(index) + "/"


def load_state(path: "str | None") -> "dict[str, str]":
    """{index path: signature} as last seen; empty when there is no usable state."""
    if path is None:
        return {}
    try:
        # stat first: never blocks on a FIFO (config.read_bounded's reading)
        raw = scope.read_bounded(path, STATE_MAX_BYTES - 1)[0][:STATE_MAX_BYTES]
    except OSError:
        return {}
    out: dict[str, str] = {}
    for line in raw.decode("utf-8", "replace").splitlines():
        sig, sep, index = line.partition(" ")
        if sep and index:
            out[index] = sig
    return out


def config_paths(indexes: "Sequence[str]") -> "list[str]":
    """The store config beside each index, once each."""
    out = []
    for index in indexes:
        p = scope.join(scope.dirname(index), scope.CONFIG_NAME)
        if p not in out:
            out.append(p)
    return out


def unchanged(payload: "Mapping[str, Any]", env: "Mapping[str, str]", configs: bool = True) -> bool:
    """Whether an after-tool hook (PostToolUse, or the late re-check on UserPromptSubmit) has
    nothing to say and nothing to record: no known index, or every one of them, its store
    folder and (`configs`: for the hooks that watch them, notices.after_tool_or_late) its
    store config stamped in the session's state files as they are now. Then engramory.notices
    would report nothing, review nothing and write no state, so the hook answers without
    importing it. Any doubt (no state file, a stamp missing or moved) is False: notices looks,
    as it always did."""
    indexes = known_indexes(payload, env)
    if not indexes:
        return True
    spath = state_path(env, payload.get("session_id"))
    if spath is None:
        return False
    state = load_state(spath)
    for p in indexes:
        if state.get(p) != signature(p) or state.get(folder_key(p)) != signature(scope.dirname(p)):
            return False
    if not configs:
        return True
    seen = load_state(config_state_path(spath))
    return all(seen.get(p) == signature(p) for p in config_paths(indexes))


def watch_env(payload: "Mapping[str, Any]", index_paths: "Callable[[str, Mapping[str, str]], list[str]]",
              env: "Mapping[str, str]") -> "dict[str, str]":
    """`env` with a host's own indexes (`index_paths(cwd, env)`) added to the ones the backstop
    watches (ENGRAMORY_INDEX_PATH)."""
    cwd = payload.get("cwd")
    extra = index_paths(cwd if isinstance(cwd, str) and cwd else scope.environ().get("PWD", ""), env)
    out = dict(env)
    if extra:
        have = [p for p in env.get(scope.ENV_INDEX_PATH, "").split(scope.pathsep) if p.strip()]
        out[scope.ENV_INDEX_PATH] = scope.pathsep.join(have + [p for p in extra if p not in have])
    return out


def watched(event: str, payload: "Mapping[str, Any]", index_paths: "Callable[[str, Mapping[str, str]], list[str]]",
            env: "Mapping[str, str] | None") -> "dict[str, str] | None":
    """The environment engramory.notices answers `event` ("PostToolUse" after a shell tool,
    "SessionStart") in for a host whose own indexes `index_paths` names (`watch_env`), or None
    when there is nothing to answer: after a tool whose call moved nothing the backstop watches
    (`unchanged`; notices.post_tool watches no store config), which most shell commands are.
    The caller imports notices only for a mapping (notices.backstop)."""
    notice_env = watch_env(payload, index_paths, dict(scope.environ() if env is None else env))
    if event == "PostToolUse" and unchanged(payload, notice_env, configs=False):
        return None
    return notice_env
