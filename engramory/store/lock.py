"""The one lock of a store, held by every engramory command that writes (and by review).

`flock` on `.engramory/lock`; where flock is missing or refused (some network file systems),
an O_EXCL lock file `.engramory/lock.excl` holding pid, host and time, taken over when its
process is gone or it is older than STALE_SECONDS. Re-entrant within a process. Taking it
first checks `.engramory/` (engramory.store.metadir.check): a FIFO, folder or device where the lock
or any other metadata file belongs is refused with a message, never opened.

Standard library only; Python 3.9+.
"""

from __future__ import annotations

import errno
import os
import socket
import stat
import time

from engramory.store import metadir
from engramory.store.metadir import LOCK, LOCK_EXCL, JournalError, LockTimeout

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_TIMEOUT = 30.0  # seconds to wait for another engramory command to finish
STALE_SECONDS = 600.0  # an O_EXCL lock file older than this is taken over


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _read_small(path: str) -> str:
    try:
        data, _ = metadir.read(path, 4096)
    except JournalError:
        return ""
    return (data or b"").decode("utf-8", "replace")


class StoreLock:
    """The one lock of a store. Re-entrant within a process (a nested transaction on the same
    store would otherwise wait for itself)."""

    _held: dict[str, int] = {}

    def __init__(self, root: str, timeout: float | None = None, force_fallback: bool = False) -> None:
        self.root = root
        self.key = os.path.realpath(root)
        self.timeout = LOCK_TIMEOUT if timeout is None else timeout
        self.force_fallback = force_fallback
        self.fd: int | None = None
        self.excl: str | None = None

    def __enter__(self) -> StoreLock:
        if StoreLock._held.get(self.key):
            StoreLock._held[self.key] += 1
            return self
        metadir.check(self.root)
        meta = metadir.meta_dir(self.root)
        deadline = time.monotonic() + self.timeout
        if fcntl is not None and not self.force_fallback and self._flock(meta, deadline):
            pass
        else:
            self._excl(meta, deadline)
        StoreLock._held[self.key] = 1
        return self

    def _flock(self, meta: str, deadline: float) -> bool:
        where = os.path.join(meta, LOCK)
        flags = (os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
                 | getattr(os, "O_NONBLOCK", 0))
        try:
            fd = os.open(where, flags, 0o600)
        except OSError as exc:
            raise metadir.damaged(where, "not a file engramory can lock (%s)" % (exc.strerror or exc)) from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise metadir.damaged(where, "not a regular file")
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
            return not pid_alive(int(parts[0]))
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
