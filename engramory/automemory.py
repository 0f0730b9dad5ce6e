"""Where Claude Code keeps a project's auto memory: `<config>/projects/<name>/memory/`.

Measured on the Claude Code 2.1.332 CLI: <config> is $CLAUDE_CONFIG_DIR or ~/.claude; the
project is the real path (symlinks resolved) of the git work tree holding the session's
folder, the main repository for a linked worktree (worktrees share one memory), or the
folder itself outside git; <name> replaces every UTF-16 unit of that path that is not an
ASCII letter or digit with '-', and past 200 units cuts it and appends a hash.
$CLAUDE_CODE_PROJECT_DIR_NAME overrides <name>. The doctor (its default root) and the
backstop hooks (which index to watch) both ask here. No git process is started: plain
stats and one small read of a `.git` file.
"""

from __future__ import annotations

import os

from engramory import config

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

PROJECT_NAME_MAX = 200  # the host cuts longer project folder names and appends a hash


def claude_config_dir(env: Mapping[str, str] | None = None) -> str:
    """`$CLAUDE_CONFIG_DIR`, else `~/.claude`: where Claude Code keeps user settings,
    skills and per-project data."""
    if env is None:
        env = os.environ
    configured = env.get("CLAUDE_CONFIG_DIR", "").strip()
    if configured:
        return os.path.abspath(os.path.expanduser(configured))
    home = env.get("HOME") or os.path.expanduser("~")
    return os.path.join(home, ".claude")


def sanitize_project_path(path: str) -> str:
    """The folder name Claude Code gives a project under `<config>/projects/`: every UTF-16
    code unit of the absolute project path that is not an ASCII letter or digit becomes '-'
    (`/home/u/my.proj` -> `-home-u-my-proj`); a name past 200 characters is cut there and
    `-<base-36 hash of the path>` appended. Read from the 2.1.332 CLI and measured on it for
    '/', '.', '_', spaces, non-BMP characters and paths past 200 units."""
    units = path.encode("utf-16-le", "surrogatepass")
    out = []
    h = 0
    for i in range(0, len(units), 2):
        code = units[i] | (units[i + 1] << 8)
        h = (h * 31 + code) & 0xFFFFFFFF  # JavaScript's 32-bit string hash
        out.append(chr(code) if code < 128 and chr(code).isalnum() else "-")
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


def git_roots(path: str, limit: int = 64) -> list[str]:
    """The work tree holding `path` (nearest folder with a `.git` entry) and, for a linked
    worktree, its main repository's folder first: auto memory is shared by a repository's
    worktrees and subfolders. Plain stats and one small read, no git process."""
    d = path
    for _ in range(limit):
        dotgit = os.path.join(d, ".git")
        if os.path.isdir(dotgit):
            return [d]
        if os.path.isfile(dotgit):
            try:
                with open(dotgit, "rb") as f:
                    line = f.read(4096).decode("utf-8", "replace").strip()
            except OSError:
                return [d]
            gitdir = line[len("gitdir:"):].strip() if line.startswith("gitdir:") else ""
            if gitdir and not os.path.isabs(gitdir):
                gitdir = os.path.normpath(os.path.join(d, gitdir))
            marker = os.sep + os.path.join(".git", "worktrees") + os.sep
            cut = gitdir.find(marker)
            return [gitdir[:cut], d] if cut > 0 else [d]
        parent = os.path.dirname(d)
        if parent == d:
            return []
        d = parent
    return []


def project_candidates(payload: Mapping[str, Any], env: Mapping[str, str]) -> list[str]:
    """Absolute project paths this session may be keyed under: the git root of the project
    (auto memory is shared by a repository's worktrees and subfolders), the session's start
    folder (CLAUDE_PROJECT_DIR) and the hook's cwd. Duplicates removed, order kept."""
    seen: list[str] = []
    raw = [env.get("CLAUDE_PROJECT_DIR"), payload.get("cwd")]
    for p in raw:
        if not isinstance(p, str) or not p.strip() or not os.path.isabs(p):
            continue
        p = os.path.realpath(p)  # the host keys the folder by the real path
        for candidate in git_roots(p) + [p]:
            if candidate not in seen:
                seen.append(candidate)
    return seen


def auto_memory_index(project: str, env: Mapping[str, str]) -> str | None:
    """`<config>/projects/<sanitized project>/memory/<index name>`, or None when an explicit
    folder name (CLAUDE_CODE_PROJECT_DIR_NAME) is not a plain name."""
    name = env.get("CLAUDE_CODE_PROJECT_DIR_NAME", "").strip() or sanitize_project_path(project)
    if "/" in name or "\\" in name or name in (".", ".."):
        return None
    index_name = config.from_env(env).index_name
    return os.path.join(claude_config_dir(env), "projects", name, "memory", index_name)


def memory_dir(cwd: str, env: Mapping[str, str] | None = None) -> str | None:
    """The auto-memory folder of the project `cwd` belongs to (the first candidate)."""
    env = os.environ if env is None else env
    for project in project_candidates({"cwd": os.path.abspath(cwd)}, {}):
        index = auto_memory_index(project, env)
        return os.path.dirname(index) if index else None
    return None
