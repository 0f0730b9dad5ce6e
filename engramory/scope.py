"""Which files the guard looks at, decided before anything heavy is imported.

The hook runs on every Edit/Write the host makes, and nearly all of them touch files that
are none of its business. This module answers "is this an index, or a file in a store with
a config?" with a few string operations and stat calls, so the hook can leave at once.
Imports only `engramory._fs` (no `os`: see there why).
"""

from engramory import _fs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

INDEX_NAME = "MEMORY.md"
CONFIG_NAME = ".engramory.json"
ENV_INDEX_NAME = "ENGRAMORY_INDEX_NAME"
ENV_INDEX_PATH = "ENGRAMORY_INDEX_PATH"

# Where a file path may sit in a tool's input, across the host dialects the guard is handed
# (Claude Code; Cursor, natively or through its loading of Claude hooks; Hermes; Kiro; ...).
PATH_KEYS = ("file_path", "path", "target_file", "relative_path", "filePath", "notebook_path")


def index_name(env: "Mapping[str, str]") -> "tuple[str, str | None]":
    """The index file name in force, and a note when the environment's value was unusable.
    An empty value never turns the guard off: it means the default."""
    name = env.get(ENV_INDEX_NAME, "").strip()
    if not name:
        return INDEX_NAME, None
    if "/" in name or "\\" in name or name in (".", ".."):
        return INDEX_NAME, "%s=%r is not a file name; using %s" % (ENV_INDEX_NAME, name[:80], INDEX_NAME)
    return name, None


def index_paths(env: "Mapping[str, str]") -> "list[str] | None":
    """The explicitly guarded index files (realpaths), or None when any file with the index
    name is guarded."""
    raw = env.get(ENV_INDEX_PATH, "")
    if not raw.strip():
        return None
    return [_fs.realpath(_fs.expanduser(p.strip())) for p in raw.split(_fs.pathsep) if p.strip()]


def is_index(path: str, name: str, paths: "Sequence[str] | None") -> bool:
    """Whether `path` is an index this guard keeps. No file is opened."""
    if paths is not None:
        return _fs.realpath(path) in paths
    if _fs.basename(path) == name:
        return True
    # A link named otherwise but pointing at an index is the index: the host writes through it.
    return _fs.islink(path) and _fs.basename(_fs.realpath(path)) == name


def find_store_root(path: str, limit: int = 64) -> "str | None":
    """The nearest folder at or above `path`'s folder that holds a store config."""
    d = _fs.dirname(path)
    for _ in range(limit):
        if _fs.isfile(_fs.join(d, CONFIG_NAME)):
            return d
        parent = _fs.dirname(d)
        if parent == d:
            return None
        d = parent
    return None


def store_root_for(path: str, paths: "Sequence[str] | None") -> "str | None":
    """The store a non-index file belongs to, for its read-only rules: with explicit index
    paths, the folder of the index it sits under; otherwise the nearest config above it."""
    if paths is not None:
        real = _fs.realpath(path)
        for p in paths:
            root = _fs.dirname(p)
            if real.startswith(root + _fs.sep):
                return root
        return None
    return find_store_root(path)


def resolve_path(raw: str, cwd: "str | None", roots: "Sequence[str]" = ()) -> str:
    """An absolute path: `~` expanded, a relative one joined to the first base that is set
    (the payload's cwd, then workspace roots, as hosts that send relative paths intend)."""
    raw = _fs.expanduser(raw)
    if _fs.isabs(raw):
        return _fs.normpath(raw)
    for base in (cwd, *roots):
        if isinstance(base, str) and base and _fs.isabs(base):
            return _fs.normpath(_fs.join(base, raw))
    return _fs.abspath(raw)


def raw_path(tool_input: "Any") -> "str | None":
    """The path a tool input names, unresolved, or None."""
    if not isinstance(tool_input, dict):
        return None
    for key in PATH_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return None if "\x00" in value else value
    return None


def interesting(path: str, env: "Mapping[str, str]") -> bool:
    """Whether the guard has anything to say about a change to `path`: it is an index, or it
    lies in a store whose config may mark it read-only."""
    paths = index_paths(env)
    if is_index(path, index_name(env)[0], paths):
        return True
    return store_root_for(path, paths) is not None
