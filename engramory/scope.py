"""Which files the guard looks at, decided before anything heavy is imported.

The hook runs on every Edit/Write the host makes, and nearly all of them touch files that
are none of its business. This module answers "is this an index, or a file in a store with
a config?" with a few string operations and stat calls, so the hook can leave at once.

It also carries the few path and file operations the hot path needs, without `os`: under
`python3 -I -S`, `os` is not loaded at interpreter start, and importing it (with
`_collections_abc`, `posixpath`, `stat`) costs about 1.5 ms, an eighth of the whole process.
On POSIX they sit directly on the built-in `posix` module and follow `posixpath` line for
line (tested against it); elsewhere (Windows) they are simply `os` and `os.path`. They live
here rather than in a module of their own because every module import costs the hook 0.2 ms.
"""

import sys

try:
    import posix as _posix
except ImportError:  # pragma: no cover - Windows: plain os
    _posix = None  # type: ignore[assignment]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

_S_IFMT = 0o170000
_S_IFREG = 0o100000
_S_IFLNK = 0o120000
_S_IFDIR = 0o040000

if _posix is not None:
    sep = "/"
    pathsep = ":"
    _ENC = sys.getfilesystemencoding()
    _environ: "dict[str, str] | None" = None

    stat = _posix.stat
    lstat = _posix.lstat

    def getuid() -> "int | None":
        return _posix.getuid()

    readlink = _posix.readlink
    getcwd = _posix.getcwd
    listdir = _posix.listdir

    def environ() -> "Mapping[str, str]":
        """The process environment as text, decoded as `os.environ` does. When `os` is loaded
        (the guard running inside a host process, or a test) its live `os.environ` is used, so
        later changes are seen; the hook process itself never changes its environment."""
        global _environ
        loaded = sys.modules.get("os")
        if loaded is not None:
            return loaded.environ  # type: ignore[no-any-return]
        if _environ is None:
            raw = _posix.environ
            _environ = {
                k.decode(_ENC, "surrogateescape"): v.decode(_ENC, "surrogateescape") for k, v in raw.items()
            }
        return _environ

    def isabs(p: str) -> bool:
        return p.startswith("/")

    def join(a: str, *p: str) -> str:
        path = a
        for b in p:
            if b.startswith("/"):
                path = b
            elif not path or path.endswith("/"):
                path += b
            else:
                path += "/" + b
        return path

    def split(p: str) -> "tuple[str, str]":
        i = p.rfind("/") + 1
        head, tail = p[:i], p[i:]
        if head and head != "/" * len(head):
            head = head.rstrip("/")
        return head, tail

    def basename(p: str) -> str:
        return p[p.rfind("/") + 1 :]

    def dirname(p: str) -> str:
        return split(p)[0]

    def normpath(path: str) -> str:
        if not path:
            return "."
        initial_slashes = 1 if path.startswith("/") else 0
        if initial_slashes and path.startswith("//") and not path.startswith("///"):
            initial_slashes = 2
        comps = path.split("/")
        new_comps: list[str] = []
        for comp in comps:
            if comp in ("", "."):
                continue
            if comp != ".." or (not initial_slashes and not new_comps) or (new_comps and new_comps[-1] == ".."):
                new_comps.append(comp)
            elif new_comps:
                new_comps.pop()
        path = "/".join(new_comps)
        if initial_slashes:
            path = "/" * initial_slashes + path
        return path or "."

    def abspath(p: str) -> str:
        if not p.startswith("/"):
            p = join(getcwd(), p)
        return normpath(p)

    def expanduser(p: str) -> str:
        if not p.startswith("~"):
            return p
        if p != "~" and not p.startswith("~/"):
            import os.path  # ~user: needs the password database

            return os.path.expanduser(p)
        home = environ().get("HOME")
        if home is None:
            import os.path

            return os.path.expanduser(p)
        home = home.rstrip("/") or "/"
        return (home + p[1:]) or "/"

    def _mode(p: str, follow: bool) -> int:
        try:
            return (stat(p) if follow else lstat(p)).st_mode
        except (OSError, ValueError):
            return 0

    def isfile(p: str) -> bool:
        return _mode(p, True) & _S_IFMT == _S_IFREG

    def isdir(p: str) -> bool:
        return _mode(p, True) & _S_IFMT == _S_IFDIR

    def islink(p: str) -> bool:
        return _mode(p, False) & _S_IFMT == _S_IFLNK

    def realpath(filename: str) -> str:
        path, _ = _joinrealpath("", filename, {})
        return abspath(path)

    def _parent(path: str) -> str:
        """`path` with one ".." applied, as posixpath.realpath does it."""
        if not path:
            return ".."
        path, name = split(path)
        if name == "..":
            path = join(path, "..", "..")
        return path

    def _joinrealpath(path: str, rest: str, seen: "dict[str, str | None]") -> "tuple[str, bool]":
        if rest.startswith("/"):
            rest = rest[1:]
            path = "/"
        while rest:
            name, _, rest = rest.partition("/")
            if not name or name == ".":
                continue
            if name == "..":
                path = _parent(path)
                continue
            newpath = join(path, name)
            if not islink(newpath):
                path = newpath
                continue
            if newpath in seen:
                cached = seen[newpath]
                if cached is not None:
                    path = cached
                    continue
                return join(newpath, rest), False  # a symlink loop: leave the rest as it is
            seen[newpath] = None
            try:
                target = readlink(newpath)
            except OSError:
                path = newpath
                continue
            path, ok = _joinrealpath(path, target, seen)
            if not ok:
                return join(path, rest), False
            seen[newpath] = path
        return path, True

    def is_regular(mode: int) -> bool:
        return mode & _S_IFMT == _S_IFREG

    def calls() -> "Any":
        """`os` when it is loaded (a library caller, a test that patches it), else the built-in
        `posix` it wraps, for the calls `os` only passes on (open, write, replace, mkdir, ...):
        a hook that writes one small file does not pay for importing `os`."""
        return sys.modules.get("os") or _posix

else:  # pragma: no cover - exercised on Windows only
    import os
    import os.path

    sep = os.sep
    pathsep = os.pathsep
    stat = os.stat
    lstat = os.lstat
    readlink = os.readlink
    getcwd = os.getcwd
    listdir = os.listdir
    isabs = os.path.isabs
    join = os.path.join
    split = os.path.split
    basename = os.path.basename
    dirname = os.path.dirname
    normpath = os.path.normpath
    abspath = os.path.abspath
    expanduser = os.path.expanduser
    isfile = os.path.isfile
    isdir = os.path.isdir
    islink = os.path.islink
    realpath = os.path.realpath

    def environ() -> "Mapping[str, str]":
        return os.environ

    def getuid() -> "int | None":
        return getattr(os, "getuid", lambda: None)()

    def is_regular(mode: int) -> bool:
        return mode & _S_IFMT == _S_IFREG

    def calls() -> "Any":
        return os


# --- the one bounded reader ------------------------------------------------------------------
READ_CHUNK = 1 << 16
if _posix is not None:
    _RD_FLAGS = _posix.O_RDONLY | getattr(_posix, "O_NONBLOCK", 0) | getattr(_posix, "O_CLOEXEC", 0)
    _open, _fstat, _read, _close, _lseek = _posix.open, _posix.fstat, _posix.read, _posix.close, _posix.lseek
else:  # pragma: no cover - Windows
    _RD_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0)
    _open, _fstat, _read, _close, _lseek = os.open, os.fstat, os.read, os.close, os.lseek


def read_bounded(path: str, limit: int, regular_only: bool = True, offset: int = 0) -> "tuple[bytes, Any]":
    """At most `limit` + 1 bytes of the file at `path`, and its fstat: the one way engramory
    reads a file of a store (a note, an index, a config, the journal and its state). The open
    is non-blocking, so a FIFO never hangs it; the fstat refuses anything but a regular file
    (a FIFO, a device such as /dev/zero, a folder) before a byte is read, with OSError(EINVAL).
    Reading `limit` + 1 lets the caller tell "exactly at the limit" from "past it" without
    ever holding more than that in memory. Links are followed (a store may link its index).
    `offset` starts the read there (a negative one counts from the end, clamped to the start),
    so the journal's newest entries are read without reading the rest."""
    fd = _open(path, _RD_FLAGS)
    try:
        st = _fstat(fd)
        if regular_only and st.st_mode & _S_IFMT != _S_IFREG:
            raise OSError(22, "not a regular file (a folder, FIFO or device)", path)
        if offset:
            _lseek(fd, max(0, st.st_size + offset) if offset < 0 else offset, 0)
        want = limit + 1
        data = _read(fd, min(READ_CHUNK, want))
        if len(data) == READ_CHUNK and want > READ_CHUNK:
            parts = [data]
            total = len(data)
            while total < want:
                more = _read(fd, min(READ_CHUNK, want - total))
                if not more:
                    break
                parts.append(more)
                total += len(more)
            data = b"".join(parts)
        return data, st
    finally:
        _close(fd)


def encode(text: str) -> bytes:
    """UTF-8 as the host's runtime writes it: a lone surrogate becomes U+FFFD. (Here, not in
    engramory.edits, which re-exports it: the hosts that predict their own bytes encode them
    on a deny that needs nothing else of edits.)"""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        fixed = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        return fixed.encode("utf-8")


# --- the one sha256 (the stale-write record's hashes and its file names) ------------------
_SHA256: "Any" = None


def sha256_hex(data: bytes) -> str:
    """The sha256 of `data`, in hex: CPython's own C module (`_sha256`, `_sha2` from 3.12),
    about 0.8 ms to load; hashlib loads OpenSSL (measured: 2.3 ms of a 6 ms process). The digest
    is the same either way, so a record written with one is read with the other."""
    global _SHA256
    if _SHA256 is None:
        try:
            from _sha256 import sha256 as found  # type: ignore[import-not-found, unused-ignore]
        except ImportError:
            try:
                from _sha2 import sha256 as found  # type: ignore[import-not-found, no-redef, unused-ignore]
            except ImportError:
                from hashlib import sha256 as found  # type: ignore[assignment, unused-ignore]
        _SHA256 = found
    return str(_SHA256(data).hexdigest())


def record_key(host: str, session_id: str) -> str:
    """The name (without `.json`) of the stale-write record of `host`'s session `session_id`
    (engramory.stale): here, so that the guard can see whether this session keeps a record
    with one stat, before engramory.stale is imported."""
    return sha256_hex(("%s\0%s" % (host, session_id)).encode("utf-8", "surrogatepass"))[:16]


# --- which files the guard keeps -----------------------------------------------------------
# Past this the index is not read: an Edit is then judged from its payload (every Edit that
# reaches PreToolUse is applied by Claude Code 2.1.332), a Write from its content. 1 MiB is
# 40 times the size cap and reads, predicts and measures in about 30 ms; a 60 MB index used
# to take 12.6 s, past the host's 10 s hook timeout (after which the host applies the edit).
READ_LIMIT = 1 << 20


def read_regular(path: str) -> "bytes | None":
    """A regular file's bytes, or None when it is missing, not a regular file (a FIFO would
    block, a device may never end), larger than READ_LIMIT, or unreadable. For adapters that
    must predict a file other than the one `guard.evaluate` reads (patch sources, Hermes files).
    Read through the one bounded reader (a FIFO swapped in after a stat cannot block it)."""
    try:
        st = stat(path)  # a size past the limit is answered without opening the file
        if st.st_mode & _S_IFMT != _S_IFREG or st.st_size > READ_LIMIT:
            return None
        data = read_bounded(path, READ_LIMIT)[0]
    except (OSError, ValueError):
        return None
    return data if len(data) <= READ_LIMIT else None


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


def index_name_for(root: str, env: "Mapping[str, str] | None" = None) -> str:
    """The file name of the index of the store at `root`, as the guard keeps it: the first
    ENGRAMORY_INDEX_PATH entry that lies directly in `root` (the guard then keeps exactly that
    file), else ENGRAMORY_INDEX_NAME, else MEMORY.md. What `store.load` reads (so the doctor,
    compact and search), what new / update / archive / restore write and what review watches
    (here, not in engramory.store, so that a hook's review does not load the store reader)."""
    environ_ = environ() if env is None else env
    raw = environ_.get(ENV_INDEX_PATH, "")
    if raw.strip():
        real_root = realpath(root)
        for entry in raw.split(pathsep):
            path = abspath(expanduser(entry.strip()))
            name = basename(path)
            if entry.strip() and name and realpath(dirname(path)) == real_root:
                return name
    return index_name(environ_)[0]


def index_paths(env: "Mapping[str, str]") -> "list[str] | None":
    """The explicitly guarded index files (realpaths), or None when any file with the index
    name is guarded."""
    raw = env.get(ENV_INDEX_PATH, "")
    if not raw.strip():
        return None
    return [realpath(expanduser(p.strip())) for p in raw.split(pathsep) if p.strip()]


def is_index(path: str, name: str, paths: "Sequence[str] | None") -> bool:
    """Whether `path` is an index this guard keeps, by name or by where links lead. No file
    is opened; one lstat when the name does not already say so."""
    if paths is not None:
        return realpath(path) in paths
    if basename(path) == name:
        return True
    # A link named otherwise but pointing at an index is the index: the host writes through it.
    if islink(path) and basename(realpath(path)) == name:
        return True
    # The target of the index-named link beside it (`mv MEMORY.md data.md && ln -s data.md
    # MEMORY.md`): Claude Code refuses to write through the link and tells the model to write
    # its target, and the next session loads that file through the link.
    return links_to(join(dirname(path), name), path)


def guards_index(path: str, env: "Mapping[str, str]") -> bool:
    """`is_index` with the index name and paths `env` sets (what a read hook asks first)."""
    return is_index(path, index_name(env)[0], index_paths(env))


def links_to(link: str, path: str) -> bool:
    """Whether `link` is a symbolic link whose realpath is `path`'s."""
    return islink(link) and realpath(link) == realpath(path)


def index_alias(path: str, known: "Sequence[str]") -> "str | None":
    """The known index (e.g. the project's auto-memory MEMORY.md) that is a link leading to
    `path`, or None. `path` is then that index under another name: a dotfiles file, or
    docs/agent-memory.md, which the host loads through the link."""
    for index in known:
        if index != path and links_to(index, path):
            return index
    return None


def find_store_root(path: str, limit: int = 64) -> "str | None":
    """The nearest folder at or above `path`'s folder that holds a store config."""
    d = dirname(path)
    for _ in range(limit):
        if isfile(join(d, CONFIG_NAME)):
            return d
        parent = dirname(d)
        if parent == d:
            return None
        d = parent
    return None


def store_root_for(path: str, paths: "Sequence[str] | None") -> "str | None":
    """The store a non-index file belongs to, for its read-only rules: with explicit index
    paths, the folder of the index it sits under; otherwise the nearest config above it."""
    if paths is not None:
        real = realpath(path)
        for p in paths:
            root = dirname(p)
            if real.startswith(root + sep):
                return root
        return None
    return find_store_root(path)


def resolve_path(raw: str, cwd: "str | None", roots: "Sequence[str]" = ()) -> str:
    """An absolute path: `~` expanded, a relative one joined to the first base that is set
    (the payload's cwd, then workspace roots, as hosts that send relative paths intend)."""
    raw = expanduser(raw)
    if isabs(raw):
        return normpath(raw)
    for base in (cwd, *roots):
        if isinstance(base, str) and base and isabs(base):
            return normpath(join(base, raw))
    return abspath(raw)


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
    lies in a store whose config may mark it read-only, or it is a store config itself
    (read-only to the agent: config.protect_config)."""
    if basename(path) == CONFIG_NAME:
        return True
    paths = index_paths(env)
    if is_index(path, index_name(env)[0], paths):
        return True
    return store_root_for(path, paths) is not None
