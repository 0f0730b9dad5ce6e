"""The few path and file operations the hook's hot path needs, without importing `os`.

With `python3 -I -S`, `os` is not loaded at interpreter start, and importing it (with
`_collections_abc`, `posixpath`, `stat`) costs about 1.5 ms: an eighth of the whole process.
The hook runs on every Edit/Write, so on POSIX these functions sit directly on the built-in
`posix` module; they follow `posixpath` line for line where they overlap (tested against it).
Elsewhere (Windows) they are simply `os` and `os.path`.
"""

import sys

try:
    import posix as _posix
except ImportError:  # pragma: no cover - Windows: plain os
    _posix = None  # type: ignore[assignment]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

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
    readlink = _posix.readlink
    getcwd = _posix.getcwd

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

    def _joinrealpath(path: str, rest: str, seen: "dict[str, str | None]") -> "tuple[str, bool]":
        if rest.startswith("/"):
            rest = rest[1:]
            path = "/"
        while rest:
            name, _, rest = rest.partition("/")
            if not name or name == ".":
                continue
            if name == "..":
                if path:
                    path, name = split(path)
                    if name == "..":
                        path = join(path, "..", "..")
                else:
                    path = ".."
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

else:  # pragma: no cover - exercised on Windows only
    import os
    import os.path

    sep = os.sep
    pathsep = os.pathsep
    stat = os.stat
    lstat = os.lstat
    readlink = os.readlink
    getcwd = os.getcwd
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

    def is_regular(mode: int) -> bool:
        return mode & _S_IFMT == _S_IFREG
