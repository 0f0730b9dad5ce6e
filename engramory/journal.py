"""The store lock, atomic writes and the journal: every write an engramory command makes to a
memory store, recorded so that it can be put back byte for byte.

    with journal.transaction(root, command="new", argv=[...]) as tx:   # takes the store lock
        data = tx.read("MEMORY.md")      # bytes or None; records a precondition (sha256)
        tx.write("x.md", b"...")         # staged; a replaced file keeps its mode
        tx.move("a.md", "archive/a.md")  # staged
        tx.delete("b.md")                # staged

On a clean exit of the block every precondition is checked again under the lock (a file that
changed since it was read raises JournalConflict and nothing is written), each file is written
through a temp file in its own folder, fsync and os.replace, and ONE entry is appended to
`<root>/.engramory/journal.jsonl`: time, command, argv, and per path the sha256 and size
before and after. The prior bytes of every changed file go to a bounded blob store
(`.engramory/blobs/`, oldest pruned past BLOB_CAP bytes; files flagged as holding a secret are
never copied there). An exception inside the block writes nothing.

Crash safety: before the first file is touched an intent record (`.engramory/pending.json`)
is written; if the process dies mid-way, the next transaction on the store journals what was
really left on disk as an "interrupted" entry, so it can be inspected and undone too.

The lock is `flock` on `.engramory/lock`; where flock is missing or refused (some network
file systems), an O_EXCL lock file `.engramory/lock.excl` holding pid, host and time, taken
over when its process is gone or it is older than STALE_SECONDS.

Standard library only; Python 3.9+.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import socket
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence
    from types import TracebackType

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

DIR = ".engramory"
JOURNAL = "journal.jsonl"
BLOBS = "blobs"
PENDING = "pending.json"
LOCK = "lock"
LOCK_EXCL = "lock.excl"
FORMAT = 1

BLOB_CAP = 64 << 20  # bytes of prior versions kept; the oldest go first past this
BLOB_FILE_MAX = 8 << 20  # a single prior version larger than this is not kept
LOCK_TIMEOUT = 30.0  # seconds to wait for another engramory command to finish
STALE_SECONDS = 600.0  # an O_EXCL lock file older than this is taken over
TMP_MARK = ".engramory-tmp-"
# entries `undo` with no ID passes over: what a sync pulled in is other machines' notes, and
# taking it back would delete them everywhere at the next sync; undo them by ID only
BY_ID_ONLY = ("sync",)

# Test seam: called with (temp path, final path) after a temp file is written and fsynced,
# before os.replace. A test sets it to crash the process exactly there.
_before_replace = None
# Test seam: force the O_EXCL fallback lock even where flock works.
_force_fallback = False


class JournalError(Exception):
    """Anything that stops a transaction or an undo; the message says what to do next."""


class JournalConflict(JournalError):
    """A file is not what the transaction (or the undo) expected: nothing was written."""


class LockTimeout(JournalError):
    """Another process held the store lock for longer than the timeout."""


def sha256(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


class Change:
    """One file's change: `before` / `after` are its bytes, None when it did not / does not
    exist. Used by `record()` for changes something else already made on disk."""

    __slots__ = ("rel", "before", "after")

    def __init__(self, rel: str, before: bytes | None, after: bytes | None) -> None:
        self.rel = rel
        self.before = before
        self.after = after


class FileChange:
    """One path in a journal entry, as recorded (hashes and sizes, not bytes). `kept` says
    whether the prior bytes are in the blob store (absent files need none); `why_not` why not."""

    __slots__ = ("path", "before", "after", "before_size", "after_size", "mode", "kept", "why_not")

    def __init__(self, path: str, before: str | None, after: str | None, before_size: int | None,
                 after_size: int | None, mode: int | None = None, kept: bool = True, why_not: str = "") -> None:
        self.path = path
        self.before = before
        self.after = after
        self.before_size = before_size
        self.after_size = after_size
        self.mode = mode
        self.kept = kept
        self.why_not = why_not

    def as_dict(self) -> dict[str, object]:
        d: dict[str, object] = {
            "path": self.path, "before": self.before, "after": self.after,
            "before_size": self.before_size, "after_size": self.after_size,
            "mode": self.mode, "kept": self.kept,
        }
        if self.why_not:
            d["why_not"] = self.why_not
        return d

    @classmethod
    def from_dict(cls, d: dict[str, object]) -> FileChange:
        def opt_int(v: object) -> int | None:
            return v if isinstance(v, int) and not isinstance(v, bool) else None

        def opt_str(v: object) -> str | None:
            return v if isinstance(v, str) else None

        path = d.get("path")
        if not isinstance(path, str):
            raise ValueError("change without a path")
        return cls(path, opt_str(d.get("before")), opt_str(d.get("after")), opt_int(d.get("before_size")),
                   opt_int(d.get("after_size")), opt_int(d.get("mode")), bool(d.get("kept", True)),
                   str(d.get("why_not") or ""))


class Entry:
    """One journal entry: one transaction."""

    __slots__ = ("id", "time", "command", "argv", "changes", "undoes", "interrupted", "undone")

    def __init__(self, id: int, time: str, command: str, argv: list[str], changes: list[FileChange],
                 undoes: int | None = None, interrupted: bool = False) -> None:
        self.id = id
        self.time = time
        self.command = command
        self.argv = argv
        self.changes = changes
        self.undoes = undoes
        self.interrupted = interrupted
        self.undone = False  # filled in by entries(): a later undo took this entry back

    @property
    def paths(self) -> list[str]:
        return [c.path for c in self.changes]

    def as_dict(self) -> dict[str, object]:
        d: dict[str, object] = {
            "format": FORMAT, "id": self.id, "time": self.time, "command": self.command,
            "argv": list(self.argv), "changes": [c.as_dict() for c in self.changes],
        }
        if self.undoes is not None:
            d["undoes"] = self.undoes
        if self.interrupted:
            d["interrupted"] = True
        return d

    @classmethod
    def from_dict(cls, d: dict[str, object]) -> Entry:
        id_ = d.get("id")
        if not isinstance(id_, int) or isinstance(id_, bool):
            raise ValueError("entry without an integer id")
        changes = d.get("changes")
        if not isinstance(changes, list):
            raise ValueError("entry without changes")
        argv = d.get("argv")
        undoes = d.get("undoes")
        return cls(id_, str(d.get("time") or ""), str(d.get("command") or ""),
                   [str(a) for a in argv] if isinstance(argv, list) else [],
                   [FileChange.from_dict(c) for c in changes if isinstance(c, dict)],
                   undoes if isinstance(undoes, int) and not isinstance(undoes, bool) else None,
                   bool(d.get("interrupted", False)))

    def __repr__(self) -> str:
        return "Entry(%d, %s, %r)" % (self.id, self.command, self.paths)


# -- paths -----------------------------------------------------------------------------------

def check_rel(rel: str) -> str:
    """A path inside the store, relative, '/'-separated, without '.', '..' or a leading '/',
    and not inside `.engramory/`. Returned as given; raises JournalError otherwise."""
    if not isinstance(rel, str) or not rel or "\x00" in rel or "\\" in rel or rel.startswith("/"):
        raise JournalError("not a path inside the store: %r" % (rel,))
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts) or parts[0] == DIR:
        raise JournalError("not a path inside the store: %r" % (rel,))
    return rel


def _abs(root: str, rel: str) -> str:
    return os.path.join(root, *rel.split("/"))


def _inside(root: str, path: str) -> bool:
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def _read_file(root: str, rel: str) -> tuple[bytes | None, int | None]:
    """(bytes, permission bits) of a regular file in the store, (None, None) when absent.
    A symlink, FIFO or folder in the way raises JournalError: never followed, never replaced."""
    path = _abs(root, rel)
    if not _inside(root, os.path.dirname(path)):
        raise JournalError("%s: its folder leads outside the store; nothing was written" % rel)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None, None
    except NotADirectoryError:
        return None, None
    import stat as stat_mod
    if not stat_mod.S_ISREG(st.st_mode):
        kind = "a symlink" if stat_mod.S_ISLNK(st.st_mode) else "not a regular file"
        raise JournalError("%s is %s; engramory changes only regular files (move it aside by hand)" % (rel, kind))
    with open(path, "rb") as f:
        return f.read(), st.st_mode & 0o7777


def _umask_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _fsync_dir(folder: str) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_atomic(path: str, data: bytes, mode: int) -> None:
    """Temp file beside `path` (a dot name: never taken for a note), fsync, chmod, os.replace."""
    folder = os.path.dirname(path)
    tmp = os.path.join(folder, ".%s%s%d-%s" % (os.path.basename(path), TMP_MARK, os.getpid(), os.urandom(3).hex()))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        if _before_replace is not None:
            _before_replace(tmp, path)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(folder)


# -- the lock --------------------------------------------------------------------------------

def _meta_dir(root: str) -> str:
    d = os.path.join(root, DIR)
    try:
        os.mkdir(d, 0o700)
    except FileExistsError:
        if os.path.islink(d) or not os.path.isdir(d):
            raise JournalError("%s exists and is not a folder; move it aside" % d) from None
    return d


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


class StoreLock:
    """The one lock of a store. Re-entrant within a process (a nested transaction on the same
    store would otherwise wait for itself)."""

    _held: dict[str, int] = {}

    def __init__(self, root: str, timeout: float | None = None) -> None:
        self.root = root
        self.key = os.path.realpath(root)
        self.timeout = LOCK_TIMEOUT if timeout is None else timeout
        self.fd: int | None = None
        self.excl: str | None = None

    def __enter__(self) -> StoreLock:
        if StoreLock._held.get(self.key):
            StoreLock._held[self.key] += 1
            return self
        meta = _meta_dir(self.root)
        deadline = time.monotonic() + self.timeout
        if fcntl is not None and not _force_fallback and self._flock(meta, deadline):
            pass
        else:
            self._excl(meta, deadline)
        StoreLock._held[self.key] = 1
        return self

    def _flock(self, meta: str, deadline: float) -> bool:
        fd = os.open(os.path.join(meta, LOCK), os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
        delay = 0.002
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self.fd = fd
                return True
            except OSError as exc:
                if exc.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL):
                    os.close(fd)
                    return False  # no flock here: the O_EXCL file instead
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    os.close(fd)
                    raise
            if time.monotonic() > deadline:
                os.close(fd)
                raise LockTimeout(
                    "another engramory command has held the lock of this store for over %.0f s; "
                    "wait for it to finish and run this again" % self.timeout)
            time.sleep(delay)
            delay = min(delay * 2, 0.05)

    def _excl(self, meta: str, deadline: float) -> None:
        path = os.path.join(meta, LOCK_EXCL)
        me = "%d %s %f\n" % (os.getpid(), socket.gethostname(), time.time())
        delay = 0.002
        while True:
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                if self._stale(path):
                    try:
                        os.unlink(path)
                    except FileNotFoundError:
                        pass
                    continue
                if time.monotonic() > deadline:
                    raise LockTimeout(
                        "the store is locked by %s (%s); if no engramory command is running, delete "
                        "that file and run this again" % (path, _read_small(path).strip() or "unknown")) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
                continue
            with os.fdopen(fd, "w") as f:
                f.write(me)
            self.excl = path
            return

    @staticmethod
    def _stale(path: str) -> bool:
        text = _read_small(path)
        parts = text.split()
        try:
            age = time.time() - os.stat(path).st_mtime
        except FileNotFoundError:
            return False
        if age > STALE_SECONDS:
            return True
        if len(parts) >= 2 and parts[0].isdigit() and parts[1] == socket.gethostname():
            return not _pid_alive(int(parts[0]))
        return not parts and age > 5.0  # an empty file: its writer died between create and write

    def __exit__(self, *exc: object) -> None:
        n = StoreLock._held.get(self.key, 0)
        if n > 1:
            StoreLock._held[self.key] = n - 1
            return
        StoreLock._held.pop(self.key, None)
        if self.fd is not None:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_UN)
            finally:
                os.close(self.fd)
                self.fd = None
        if self.excl is not None:
            try:
                os.unlink(self.excl)
            except FileNotFoundError:
                pass
            self.excl = None


def lock(root: str, timeout: float | None = None) -> StoreLock:
    """The store lock alone, for a command that must read a consistent store and write nothing."""
    return StoreLock(root, timeout)


def _read_small(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return f.read(4096).decode("utf-8", "replace")
    except OSError:
        return ""


# -- blobs and the journal file ------------------------------------------------------------------

def is_secret(data: bytes) -> bool:
    """Whether the doctor's secret scan flags these bytes: such prior versions are not copied."""
    from engramory import doctor
    from engramory.store import Note

    note = Note("", "x.md", False)
    note.text = data.decode("utf-8", "replace")
    return any(f.code == "secret" for f in doctor.scan_note(note))


def _blob_dir(root: str) -> str:
    d = os.path.join(_meta_dir(root), BLOBS)
    os.makedirs(d, mode=0o700, exist_ok=True)
    return d


def _keep_blob(root: str, data: bytes, digest: str) -> tuple[bool, str]:
    if len(data) > min(BLOB_FILE_MAX, BLOB_CAP):
        return False, "larger than the blob store keeps (%s bytes)" % "{:,}".format(min(BLOB_FILE_MAX, BLOB_CAP))
    if is_secret(data):
        return False, "flagged as holding a secret, so its bytes were not copied"
    path = os.path.join(_blob_dir(root), digest)
    if os.path.exists(path):
        os.utime(path)  # recently needed: pruned last
    else:
        write_atomic(path, data, 0o600)
    return True, ""


def read_blob(root: str, digest: str) -> bytes | None:
    path = os.path.join(root, DIR, BLOBS, digest)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    return data if sha256(data) == digest else None


def prune_blobs(root: str, protect: Iterable[str]) -> None:
    """Bring the blob store under BLOB_CAP bytes, oldest first (a blob read or kept again is
    touched: pruned last), never removing a digest in `protect`."""
    d = os.path.join(root, DIR, BLOBS)
    keep = set(protect)
    items = []
    total = 0
    try:
        with os.scandir(d) as it:
            for e in it:
                if e.name.startswith("."):
                    continue
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                items.append((st.st_mtime, e.name, st.st_size))
                total += st.st_size
    except OSError:
        return
    if total <= BLOB_CAP:
        return
    items.sort()
    for _, name, size in items:
        if total <= BLOB_CAP:
            break
        if name in keep:
            continue
        try:
            os.unlink(os.path.join(d, name))
            total -= size
        except OSError:
            pass


def keep_blobs(root: str, items: list[tuple[str, bytes, str]], deadline: float | None = None) -> list[str]:
    """Copy each (rel, bytes, sha256) into the blob store (for engramory.review, which keeps the notes it saw) (`.engramory/blobs/<sha>`,
    where `read_blob` and `undo` find prior versions), so a later deletion can be
    undone. As the journal does: never a file the doctor's secret scan flags, never one past
    BLOB_FILE_MAX, and the store pruned to BLOB_CAP. Secrets are scanned in one batch and the
    copies are not fsynced one by one (a lost copy is only an undo that cannot happen; the
    reader checks the hash). Past `deadline` (time.monotonic()) the rest is left: their rels
    are returned, and the next reconcile keeps them (a hook must end within its timeout)."""
    from engramory import doctor
    from engramory.store import Note

    todo = []
    folder = os.path.join(root, DIR, BLOBS)
    for rel, data, digest in items:
        if len(data) > min(BLOB_FILE_MAX, BLOB_CAP) or os.path.exists(os.path.join(folder, digest)):
            continue
        note = Note("", rel, False)
        note.text = data.decode("utf-8", "replace")
        todo.append((note, data, digest))
    if not todo:
        return []
    secret = {f.path for f in doctor.scan_notes([n for n, _, _ in todo]) if f.code == "secret"}
    left: list[str] = []
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        for note, data, digest in todo:
            if note.rel in secret:
                continue
            if deadline is not None and time.monotonic() > deadline:
                left.append(note.rel)
                continue
            path = os.path.join(folder, digest)
            tmp = "%s.%d.tmp" % (path, os.getpid())
            with open(tmp, "wb") as f:
                f.write(data)
            os.chmod(tmp, 0o600)
            os.replace(tmp, path)
        prune_blobs(root, [d for _, _, d in todo])
    except OSError:
        pass
    return left


def _journal_path(root: str) -> str:
    return os.path.join(root, DIR, JOURNAL)


def _load(root: str) -> list[Entry]:
    try:
        with open(_journal_path(root), "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        return []
    out = []
    for line in raw.split(b"\n"):
        if not line.strip():
            continue
        try:
            d = json.loads(line.decode("utf-8"))
            if isinstance(d, dict):
                out.append(Entry.from_dict(d))
        except (ValueError, UnicodeDecodeError):
            continue  # a torn last line after a crash, or a hand edit: skipped, never fatal
    return out


def _mark_undone(found: list[Entry]) -> None:
    by_id = {e.id: e for e in found}

    def set_undone(target: int, flag: bool, depth: int = 0) -> None:
        e = by_id.get(target)
        if e is None or depth > 1000:
            return
        e.undone = flag
        if e.undoes is not None:
            set_undone(e.undoes, not flag, depth + 1)  # undoing an undo puts its target back

    for e in found:
        if e.undoes is not None:
            set_undone(e.undoes, True)


def entries(root: str) -> list[Entry]:
    """Every journal entry of the store, oldest first, with `.undone` set."""
    found = _load(root)
    _mark_undone(found)
    return found


def _append(root: str, entry: Entry) -> None:
    path = _journal_path(root)
    line = json.dumps(entry.as_dict(), ensure_ascii=True, sort_keys=True).encode() + b"\n"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        size = os.fstat(fd).st_size
        if size:
            with open(path, "rb") as f:
                f.seek(size - 1)
                if f.read(1) != b"\n":
                    line = b"\n" + line  # a torn line from a crash stays on its own line
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _next_id(root: str) -> int:
    found = _load(root)
    return max((e.id for e in found), default=0) + 1


# -- transactions ------------------------------------------------------------------------------------

_ABSENT = object()


class Transaction:
    """Staged reads and writes against one store; see the module docstring."""

    def __init__(self, root: str, command: str, argv: Sequence[str] = (), timeout: float | None = None) -> None:
        if not os.path.isdir(root):
            raise JournalError("%s is not a folder; pass the folder that holds MEMORY.md" % root)
        self.root = root
        self.command = command
        self.argv = list(argv)
        self.lock = StoreLock(root, timeout)
        self.pre: dict[str, str | None] = {}  # rel -> sha256 when read (None: absent)
        self.disk: dict[str, tuple[bytes | None, int | None]] = {}
        self.staged: dict[str, tuple[bytes | None, int | None]] = {}  # rel -> (bytes or None, mode)
        self.order: list[str] = []
        self.entry: Entry | None = None
        self.undoes: int | None = None

    # reading
    def _disk(self, rel: str) -> tuple[bytes | None, int | None]:
        if rel not in self.disk:
            self.disk[rel] = _read_file(self.root, rel)
        return self.disk[rel]

    def read(self, rel: str) -> bytes | None:
        """The file's bytes as this transaction would leave them (None: absent). The first read
        of a path records its sha256 as a precondition of the commit."""
        check_rel(rel)
        if rel in self.staged:
            return self.staged[rel][0]
        data, _ = self._disk(rel)
        self.pre.setdefault(rel, sha256(data))
        return data

    def exists(self, rel: str) -> bool:
        return self.read(rel) is not None

    # staging
    def _stage(self, rel: str, data: bytes | None, mode: int | None) -> None:
        self.staged[rel] = (data, mode)
        if rel in self.order:
            self.order.remove(rel)
        self.order.append(rel)

    def write(self, rel: str, data: bytes, mode: int | None = None) -> None:
        """Stage `data` for `rel`. A replaced file keeps its mode unless `mode` is given."""
        check_rel(rel)
        if not isinstance(data, bytes):
            raise TypeError("write() takes bytes")
        if mode is None and rel in self.staged:
            mode = self.staged[rel][1]
        self._stage(rel, data, mode)

    def delete(self, rel: str) -> None:
        check_rel(rel)
        self._stage(rel, None, None)

    def move(self, src: str, dst: str) -> None:
        """Stage a move: `dst` gets the bytes and mode of `src`, `src` goes. `dst` must be free."""
        data = self.read(src)
        if data is None:
            raise JournalError("%s does not exist; nothing to move" % src)
        if self.read(dst) is not None:
            raise JournalError("%s already exists; pick another name or archive it first" % dst)
        mode = self.staged[src][1] if src in self.staged else None
        if mode is None:
            mode = self._disk(src)[1]
        self._stage(dst, data, mode)
        self._stage(src, None, None)

    # commit
    def __enter__(self) -> Transaction:
        self.lock.__enter__()
        try:
            _recover(self.root)
        except BaseException:
            self.lock.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            if exc_type is None:
                self.entry = self._commit()
        finally:
            self.lock.__exit__(None, None, None)

    def _commit(self) -> Entry | None:
        root = self.root
        for rel, digest in self.pre.items():
            now, _ = _read_file(root, rel)
            if sha256(now) != digest:
                raise JournalConflict(
                    "%s changed while this command ran (another writer outside engramory); nothing was "
                    "written: run the command again" % rel)
        plan: list[tuple[str, bytes | None, int | None, bytes | None, int | None]] = []
        for rel in self.order:
            after, mode = self.staged[rel]
            before, before_mode = _read_file(root, rel)
            if before == after and (after is None or mode is None or mode == before_mode):
                continue
            if after is not None and mode is None:
                mode = before_mode if before_mode is not None else _umask_mode()
            plan.append((rel, before, before_mode, after, mode))
        if not plan:
            return None
        return _apply(root, self.command, self.argv, plan, self.undoes)


def _apply(root: str, command: str, argv: list[str],
           plan: list[tuple[str, bytes | None, int | None, bytes | None, int | None]],
           undoes: int | None) -> Entry:
    changes = []
    for rel, before, before_mode, after, _mode in plan:
        kept, why = True, ""
        if before is not None:
            kept, why = _keep_blob(root, before, sha256(before) or "")
        changes.append(FileChange(rel, sha256(before), sha256(after), None if before is None else len(before),
                                  None if after is None else len(after), before_mode, kept, why))
    entry = Entry(_next_id(root), _now(), command, argv, changes, undoes)
    meta = _meta_dir(root)
    pending = os.path.join(meta, PENDING)
    write_atomic(pending, json.dumps(entry.as_dict(), sort_keys=True).encode(), 0o600)
    # new and replaced files first, in the order staged, removals last: a crash part-way
    # leaves at worst an extra file, never a pointer to nothing that was there before
    for rel, _before, _bm, after, mode in plan:
        if after is not None:
            path = _abs(root, rel)
            parent = os.path.dirname(path)
            if not os.path.isdir(parent):
                os.makedirs(parent, exist_ok=True)
            if not _inside(root, parent):
                raise JournalError("%s: its folder leads outside the store" % rel)
            write_atomic(path, after, mode if mode is not None else _umask_mode())
    for rel, _before, _bm, after, _mode in plan:
        if after is None:
            try:
                os.unlink(_abs(root, rel))
            except FileNotFoundError:
                pass
            _fsync_dir(os.path.dirname(_abs(root, rel)))
    _append(root, entry)
    os.unlink(pending)
    prune_blobs(root, [c.before for c in changes if c.before])
    return entry


def _recover(root: str) -> Entry | None:
    """Journal what an interrupted transaction really left on disk (see the module docstring)."""
    pending = os.path.join(root, DIR, PENDING)
    raw = _read_small_bytes(pending)
    if raw is None:
        return None
    try:
        planned = Entry.from_dict(json.loads(raw.decode("utf-8")))
    except (ValueError, UnicodeDecodeError):
        os.unlink(pending)
        return None
    _clean_temps(root, planned.paths)
    changes = []
    for c in planned.changes:
        try:
            now, _ = _read_file(root, c.path)
        except JournalError:
            continue
        digest = sha256(now)
        if digest == c.before:
            continue
        changes.append(FileChange(c.path, c.before, digest, c.before_size, None if now is None else len(now),
                                  c.mode, c.kept, c.why_not))
    entry = None
    if changes:
        entry = Entry(_next_id(root), _now(), planned.command, planned.argv, changes, planned.undoes, True)
        _append(root, entry)
    os.unlink(pending)
    return entry


def _read_small_bytes(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read(16 << 20)
    except OSError:
        return None


def _clean_temps(root: str, rels: Iterable[str]) -> None:
    """Temp files a crashed writer left beside the files it was replacing."""
    folders = {os.path.dirname(_abs(root, r)) for r in rels}
    for folder in folders:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if name.startswith(".") and TMP_MARK in name:
                pid = name.rsplit(TMP_MARK, 1)[1].split("-", 1)[0]
                if pid.isdigit() and int(pid) != os.getpid() and _pid_alive(int(pid)):
                    continue
                try:
                    os.unlink(os.path.join(folder, name))
                except OSError:
                    pass


def transaction(root: str, command: str, argv: Sequence[str] = (), timeout: float | None = None) -> Transaction:
    """A transaction on the store at `root` (see the module docstring). After the block,
    `tx.entry` is the journal entry written, or None when nothing changed."""
    return Transaction(root, command, argv, timeout)


def record(root: str, command: str, changes: Iterable[Change], argv: Sequence[str] = ()) -> Entry | None:
    """Journal changes something else already made on disk (`before` is what was there).
    Prior bytes go to the blob store like a transaction's. None when nothing changed."""
    items = list(changes)
    with StoreLock(root):
        _recover(root)
        plan = []
        for c in items:
            check_rel(c.rel)
            if c.before == c.after:
                continue
            try:
                _, mode = _read_file(root, c.rel)
            except JournalError:
                mode = None
            plan.append((c.rel, c.before, mode, c.after, mode))
        if not plan:
            return None
        changes_out = []
        for rel, before, mode, after, _m in plan:
            kept, why = True, ""
            if before is not None:
                kept, why = _keep_blob(root, before, sha256(before) or "")
            changes_out.append(FileChange(rel, sha256(before), sha256(after), None if before is None else len(before),
                                          None if after is None else len(after), mode, kept, why))
        entry = Entry(_next_id(root), _now(), command, list(argv), changes_out)
        _append(root, entry)
        prune_blobs(root, [c.before for c in changes_out if c.before])
        return entry


# -- undo ------------------------------------------------------------------------------------------------

def undo_target(found: Sequence[Entry], entry_id: int | None = None) -> Entry:
    """The entry `undo` would take back: `entry_id`, or the newest entry that is neither an
    undo itself nor already undone."""
    if entry_id is None:
        for e in reversed(found):
            if e.undoes is None and not e.undone and e.command not in BY_ID_ONLY:
                return e
        raise JournalError("nothing to undo: every journal entry is already undone (see `engramory log`)")
    for e in found:
        if e.id == entry_id:
            if e.undone:
                raise JournalError("entry %d is already undone; `engramory undo %d` would take the undo back"
                                   % (e.id, _undoer(found, e.id)))
            return e
    raise JournalError("no journal entry %d; `engramory log` lists them" % entry_id)


def _undoer(found: Sequence[Entry], target: int) -> int:
    for e in reversed(found):
        if e.undoes == target:
            return e.id
    return target


def _later_writer(found: Sequence[Entry], after: int, path: str) -> Entry | None:
    for e in reversed(found):
        if e.id > after and path in e.paths and not e.undone:
            return e
    return None


def undo(root: str, entry_id: int | None = None, argv: Sequence[str] = ()) -> Entry:
    """Put back the files of one entry byte for byte (and their modes), as a new journal entry
    whose `undoes` names it. Every file must still be what that entry left (else
    JournalConflict, naming the later entry to undo first), and every prior version must still
    be in the blob store (else JournalError); otherwise nothing is written."""
    with StoreLock(root):
        _recover(root)
        found = entries(root)
        target = undo_target(found, entry_id)
        plan: list[tuple[str, bytes | None, int | None, bytes | None, int | None]] = []
        for c in target.changes:
            now, now_mode = _read_file(root, c.path)
            if sha256(now) != c.after:
                by_key = _undo_by_key(root, found, target, c, now)
                if by_key is not None:
                    plan.append((c.path, now, now_mode, by_key, now_mode if now_mode is not None else _umask_mode()))
                    continue
                later = _later_writer(found, target.id, c.path)
                hint = ("undo entry %d (%s) first" % (later.id, later.command) if later is not None
                        else "it was changed outside engramory; put it back by hand or restore it from a copy")
                raise JournalConflict("%s is no longer what entry %d left (%s); nothing was undone: %s"
                                      % (c.path, target.id, _size_text(now), hint))
            restored: bytes | None = None
            if c.before is not None:
                restored = read_blob(root, c.before)
                if restored is None:
                    why = c.why_not or "its prior bytes were pruned from the blob store (cap %s bytes)" % (
                        "{:,}".format(BLOB_CAP))
                    raise JournalError("cannot undo entry %d: %s was %s; nothing was undone"
                                       % (target.id, c.path, why))
            mode = c.mode if c.mode is not None else (now_mode if now_mode is not None else _umask_mode())
            plan.append((c.path, now, now_mode, restored, mode))
        return _apply(root, "undo", list(argv), plan, target.id)


def _undo_by_key(root: str, found: Sequence[Entry], target: Entry, c: FileChange, now: bytes | None) -> bytes | None:
    """The index with only this change's lines taken back, when a sync has since merged other
    notes into it: engramory.sync.keyundo. None for any other file or history, or when that
    cannot be done cleanly; the undo is then refused as before."""
    from engramory.sync import keyundo

    later = [e.command for e in found if e.id > target.id and c.path in e.paths and not e.undone]
    return keyundo.undo_for(c.path, c.before, c.after, now, later, lambda digest: read_blob(root, digest))


def _size_text(data: bytes | None) -> str:
    return "now absent" if data is None else "now %s bytes" % "{:,}".format(len(data))


def iter_paths(found: Iterable[Entry]) -> Iterator[str]:
    for e in found:
        yield from e.paths
