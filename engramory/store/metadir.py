"""A store's `.engramory/` folder: the names of what engramory keeps there, the errors its
commands raise, and the one way each of those files is read and written.

    journal.jsonl           the live journal (engramory.store.journalfile)
    journal-history.jsonl   rotated entries, as metadata only (engramory.store.journalfile)
    blobs/                  prior versions, private (engramory.store.blobstore)
    manifest.json           what review saw, and what engramory last wrote (engramory.store.manifest)
    pending.json            the intent record of a transaction in flight (engramory.store.journal)
    lock, lock.excl         the store lock (engramory.store.journal)
    verify.lock             held by the one verify run in the background (engramory.verify.cache)
    doctor-notice.json      a large store's doctor error count for SessionStart (engramory.notices)
    background.lock         held by the one detached reconcile of a large store (engramory.store.review)
    search.sqlite           the search index, rebuilt from the notes whenever in doubt (engramory.curate.searchindex)
    search.sqlite-journal   SQLite's rollback journal of it, while an update is in flight
    search.lock             held by the one process building the search index
    seen/                   per agent session, hashes of what it last saw of an index (engramory.stale)

Every read goes through `scope.read_bounded` (non-blocking open, a FIFO, device or folder
refused before a byte is read, at most limit + 1 bytes held). Anything in the way that is
not what engramory wrote there (a FIFO, a device, a folder, a symlink) is reported by
`check(root)` with what it is and what to do, before a command writes anything.

Standard library only; Python 3.9+.
"""

from __future__ import annotations

import os
import stat

from engramory import scope
from engramory.fsutil import TMP_MARK as TMP_MARK  # re-exported: the store asks metadir for it
from engramory.fsutil import replace_with

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

DIR = ".engramory"
JOURNAL = "journal.jsonl"
HISTORY = "journal-history.jsonl"
BLOBS = "blobs"
PENDING = "pending.json"
MANIFEST = "manifest.json"
LOCK = "lock"
LOCK_EXCL = "lock.excl"
VERIFY_LOCK = "verify.lock"
DOCTOR_NOTICE = "doctor-notice.json"
BACKGROUND_LOCK = "background.lock"
SEARCH_INDEX = "search.sqlite"
SEARCH_JOURNAL = SEARCH_INDEX + "-journal"
SEARCH_LOCK = "search.lock"
SEEN = "seen"

FILES = (JOURNAL, HISTORY, PENDING, MANIFEST, LOCK, LOCK_EXCL, VERIFY_LOCK, DOCTOR_NOTICE, BACKGROUND_LOCK,
         SEARCH_INDEX, SEARCH_JOURNAL, SEARCH_LOCK)  # regular files, when present
FOLDERS = (BLOBS, SEEN)
FOLDER_ROLES = {BLOBS: "the folder of prior versions engramory keeps for undo",
                SEEN: "the folder of what each agent session last saw of the index"}


class JournalError(Exception):
    """Anything that stops a transaction or an undo; the message says what to do next."""


class JournalConflict(JournalError):
    """A file is not what the transaction (or the undo) expected: nothing was written."""


class LockTimeout(JournalError):
    """Another process held the store lock for longer than the timeout."""


class UndoNotKept(JournalError):
    """The prior bytes a write would need for its undo cannot be kept: nothing was written."""


class StoreDamaged(JournalError):
    """A file of `.engramory/` is not what engramory wrote there (a folder, a FIFO, a device,
    a symlink, bytes that are not its format): nothing was read from it or written."""


def path(root: str, name: str) -> str:
    return os.path.join(root, DIR, name)


def kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISREG(mode):
        return "a file"
    return "not a regular file"


def damaged(where: str, what: str, expected: str = "a file engramory wrote") -> StoreDamaged:
    return StoreDamaged("%s is %s, not %s; nothing was read from it or written: move it aside (`mv %s %s.bad`) "
                        "and run the command again" % (where, what, expected, where, where))


def _lkind(where: str) -> str | None:
    try:
        return kind(os.lstat(where).st_mode)
    except OSError:
        return None


def check(root: str) -> None:
    """StoreDamaged when anything at one of the metadata names is not what engramory keeps
    there: a few lstat calls, made before a command reads or writes any of them."""
    meta = os.path.join(root, DIR)
    try:
        st = os.lstat(meta)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreDamaged("%s cannot be read (%s); nothing was written" % (meta, exc.strerror or exc)) from None
    if not stat.S_ISDIR(st.st_mode):
        raise damaged(meta, kind(st.st_mode), "the folder engramory keeps its journal in")
    for name in FILES:
        where = os.path.join(meta, name)
        found = _lkind(where)
        if found is not None and found != "a file":
            raise damaged(where, found)
    for name in FOLDERS:
        where = os.path.join(meta, name)
        found = _lkind(where)
        if found is not None and found != "a folder":
            raise damaged(where, found, FOLDER_ROLES.get(name, "a folder engramory keeps"))


def meta_dir(root: str) -> str:
    """`<root>/.engramory`, created private (0700) when missing."""
    d = os.path.join(root, DIR)
    try:
        os.mkdir(d, 0o700)
    except FileExistsError:
        if os.path.islink(d) or not os.path.isdir(d):
            raise damaged(d, _lkind(d) or "not a folder", "the folder engramory keeps its journal in") from None
    return d


def read(where: str, limit: int, offset: int = 0) -> tuple[bytes | None, int]:
    """(at most `limit` + 1 bytes of the metadata file at `where`, its size); (None, 0) when
    it does not exist. StoreDamaged when it is not a regular file or cannot be read."""
    try:
        data, st = scope.read_bounded(where, limit, offset=offset)
    except (FileNotFoundError, NotADirectoryError):
        return None, 0
    except OSError as exc:
        found = _lkind(where)
        if found is not None and found != "a file":
            raise damaged(where, found) from None
        raise StoreDamaged("%s cannot be read (%s); nothing was written" % (where, exc.strerror or exc)) from None
    return data, int(st.st_size)


def claim(root: str, name: str) -> int | None:
    """A flock on `.engramory/<name>`, as an open descriptor the caller keeps for as long as
    its work lasts (closing it, or exiting, lets it go, so a crash leaves no stale lock); None
    when another process holds it. Where it cannot be taken at all (no fcntl, no folder for
    it) -1: the caller goes ahead unguarded. How a detached child of a hook makes sure it is
    the only one of its kind for a store."""
    try:
        import fcntl
    except ImportError:
        return -1
    d = os.path.join(root, DIR)
    try:
        os.mkdir(d, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return -1
    if os.path.islink(d) or not os.path.isdir(d):
        return -1
    try:
        fd = os.open(os.path.join(d, name), os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_NONBLOCK", 0), 0o600)
    except OSError:
        return -1
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except OSError:
        os.close(fd)
        return -1
    return fd


def held(root: str, name: str) -> bool:
    """Whether another process holds the `claim` of `name` right now (taken and let go)."""
    if not os.path.exists(os.path.join(root, DIR, name)):
        return False
    fd = claim(root, name)
    if fd is None:
        return True
    if fd >= 0:
        os.close(fd)
    return False


def umask_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def fsync_dir(folder: str) -> None:
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


def write_atomic(where: str, data: bytes, mode: int, sync: bool = True,
                 before_replace: Callable[[str, str], object] | None = None) -> None:
    """engramory.fsutil.replace_with (temp file beside `where`, fsync, chmod, os.replace), then
    an fsync of the folder. `sync=False` skips the fsyncs, for a copy whose loss costs nothing but a
    later undo (the reader checks its hash). `before_replace(tmp, final)` is a test seam."""
    replace_with(where, data, mode, sync, before_replace)
    if sync:
        fsync_dir(os.path.dirname(where))
