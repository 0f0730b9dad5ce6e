"""Transactions and undo: every write an engramory command makes to a
memory store, recorded so that it can be put back byte for byte.

    with journal.transaction(root, command="new", argv=[...]) as tx:   # takes the store lock
        data = tx.read("MEMORY.md")      # bytes or None; records a precondition (sha256)
        tx.write("x.md", b"...")         # staged; a replaced file keeps its mode
        tx.move("a.md", "archive/a.md")  # staged
        tx.delete("b.md")                # staged
    tx.entry                             # the entry this transaction appended, or None

On a clean exit of the block every precondition is checked again under the lock (a file that
changed since it was read raises JournalConflict and nothing is written), each file is written
through a temp file in its own folder, fsync and os.replace, and ONE entry is appended to
`<root>/.engramory/journal.jsonl` (engramory.store.journalfile: time, command, the arguments without
bodies or secrets, per path the sha256 and size before and after). `tx.entry` is that entry,
taken under the lock: never "the journal's last line", which another writer may own by the
time it is read. An exception inside the block writes nothing.

Undo is always kept. The prior bytes of every changed file go to the private blob store
(engramory.store.blobstore), secrets included, before any file is touched. When they cannot be kept
(one prior version over BLOB_FILE_MAX, or this write's prior versions over BLOB_CAP) the
transaction refuses before writing anything (UndoNotKept names the numbers and `--no-undo`);
with `no_undo=True` it writes, and its entry says it cannot be undone, as do its receipt and
`engramory log`. An entry can be undone while it is in the live journal (past JOURNAL_MAX
bytes the oldest rotate into the history, metadata only), and a blob such an entry names is
never pruned; engramory.store.retention states the whole rule (what goes first when room is needed).

Each write keeps the bytes it leaves in `.md` files too (best effort, for review) and leaves
the review manifest at its own after-state in the same locked step (engramory.store.manifest). A
change something else made to a path the write is about to replace, not yet reviewed, is
journaled first, as an "external" entry of its own, so that undoing every entry newest first
still gives back what was there.

Crash safety: before the first file is touched an intent record (`.engramory/pending.json`)
is written; if the process dies mid-way, the next transaction on the store journals what was
really left on disk as an "interrupted" entry, so it can be inspected and undone too.

The lock is engramory.store.lock (flock, or an O_EXCL file where flock is refused). Every file
of `.engramory/` is read through scope.read_bounded, and a FIFO, device, folder or symlink at one of its names
is refused with a message (StoreDamaged) before anything is read or written (engramory.store.metadir).

Standard library only; Python 3.9+.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time

from engramory import scope
from engramory.store import blobstore, journalfile, manifest, metadir, retention
from engramory.store.blobstore import BLOB_CAP, BLOB_FILE_MAX, BlobStore  # the numbers live in blobstore
from engramory.store.journalfile import Entry, FileChange, entries
from engramory.store.lock import StoreLock, pid_alive
from engramory.store.metadir import (
    BLOBS,
    DIR,
    JOURNAL,
    LOCK,
    LOCK_EXCL,
    PENDING,
    TMP_MARK,
    JournalConflict,
    JournalError,
    LockTimeout,
    StoreDamaged,
    UndoNotKept,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from types import TracebackType
    from typing import Any, List, Optional, Tuple

    # per path: (rel, bytes before, mode before, bytes after, mode after); None: absent
    Plan = List[Tuple[str, Optional[bytes], Optional[int], Optional[bytes], Optional[int]]]

__all__ = [
    "BLOBS", "BLOB_CAP", "BLOB_FILE_MAX", "DIR", "JOURNAL", "LOCK", "LOCK_EXCL", "PENDING", "TMP_MARK",
    "Change", "Entry", "FileChange", "JournalConflict", "JournalError", "LockTimeout", "StoreDamaged",
    "StoreLock", "UndoNotKept", "entries", "find_undo_target", "keep_blobs", "lock", "read_blob", "record",
    "sha256", "transaction", "undo", "write_atomic",
]

EXTERNAL = "external"  # the command of an entry journaling what something else changed
LOCK_TIMEOUT = 30.0  # seconds to wait for another engramory command to finish
PENDING_MAX = 16 << 20  # bytes of an intent record
# entries `undo` with no ID passes over: what a sync pulled in is other machines' notes, and
# taking it back would delete them everywhere at the next sync; undo them by ID only
BY_ID_ONLY = ("sync",)

# Test seam: called with (temp path, final path) after a temp file of the store is written
# and fsynced, before os.replace. A test sets it to crash the process exactly there.
_before_replace = None
# Test seam: force the O_EXCL fallback lock even where flock works.
_force_fallback = False


def sha256(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def write_atomic(path: str, data: bytes, mode: int) -> None:
    """Temp file beside `path` (a dot name: never taken for a note), fsync, chmod, os.replace."""
    metadir.write_atomic(path, data, mode, before_replace=_before_replace)


class Change:
    """One file's change: `before` / `after` are its bytes, None when it did not / does not
    exist. Used by `record()` for changes something else already made on disk."""

    __slots__ = ("rel", "before", "after")

    def __init__(self, rel: str, before: bytes | None, after: bytes | None) -> None:
        self.rel = rel
        self.before = before
        self.after = after


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
    except (FileNotFoundError, NotADirectoryError):
        return None, None
    if not stat.S_ISREG(st.st_mode):
        raise JournalError("%s is %s; engramory changes only regular files (move it aside by hand)"
                           % (rel, metadir.kind(st.st_mode)))
    limit = max(st.st_size, 0) + (1 << 20)  # the file as it is, with room for one that grew since
    data, _ = scope.read_bounded(path, limit)
    if len(data) > limit:
        raise JournalConflict("%s is growing while engramory reads it; nothing was written: run it again" % rel)
    return data, st.st_mode & 0o7777


def _lock(root: str, timeout: float | None = None) -> StoreLock:
    """The store lock, with this module's test seams (LOCK_TIMEOUT, _force_fallback) in force."""
    return StoreLock(root, LOCK_TIMEOUT if timeout is None else timeout, force_fallback=_force_fallback)


def lock(root: str, timeout: float | None = None) -> StoreLock:
    """The store lock alone, for a command that must read a consistent store and write nothing."""
    return _lock(root, timeout)


# -- blobs -----------------------------------------------------------------------------------

def read_blob(root: str, digest: str) -> bytes | None:
    return BlobStore(root).read(digest)


keep_blobs = retention.keep_blobs


# -- the journal entries ---------------------------------------------------------------------

def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _manifest(root: str) -> dict[str, Any] | None:
    """The review manifest for a write to keep in step, None when there is none (no review
    yet) or it cannot be used (then the next review takes a new baseline and says so)."""
    try:
        found, _ = manifest.load(root)
    except JournalError:
        return None
    return found


def _journal_unreported(root: str, blobs: BlobStore, last: int, command: str, plan: Plan,
                        found: dict[str, Any] | None) -> list[Entry]:
    """Journal, as an entry of their own, the changes something else made to the paths of
    `plan` that no review has journaled yet (see engramory.store.manifest.unreported)."""
    if found is None:
        return []
    changes, lost = manifest.unreported(root, found, last, blobs, [(rel, before) for rel, before, *_ in plan])
    if lost:
        found["unrecoverable"] = (list(found.get("unrecoverable") or []) + lost)[-100:]
    if not changes:
        return []
    rows = [FileChange(rel, sha256(prior), sha256(now), None if prior is None else len(prior),
                       None if now is None else len(now), None, True) for rel, prior, now in changes]
    entry = Entry(last + 1, _now(), EXTERNAL, ["reconcile", "before " + command], rows)
    journalfile.append(root, entry)
    return [entry]


def _apply(root: str, command: str, argv: list[str], plan: Plan, undoes: int | None,
           no_undo: bool = False) -> Entry:
    if not no_undo:
        retention.check_undo(plan)
    blobs = BlobStore(root)
    found = _manifest(root)
    last = journalfile.last_id(root)
    written = _journal_unreported(root, blobs, last, command, plan, found)
    retention.room_for(root, blobs, plan, no_undo)
    changes = retention.changes(blobs, plan, no_undo, best_effort=False)
    entry = Entry(written[-1].id + 1 if written else last + 1, _now(), command, argv, changes, undoes,
                  no_undo=no_undo)
    pending = os.path.join(metadir.meta_dir(root), PENDING)
    metadir.write_atomic(pending, json.dumps(entry.as_dict(), sort_keys=True).encode(), 0o600)
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
            write_atomic(path, after, mode if mode is not None else metadir.umask_mode())
    for rel, _before, _bm, after, _mode in plan:
        if after is None:
            try:
                os.unlink(_abs(root, rel))
            except FileNotFoundError:
                pass
            metadir.fsync_dir(os.path.dirname(_abs(root, rel)))
    size = journalfile.append(root, entry)
    written.append(entry)
    os.unlink(pending)
    _settle(root, blobs, plan, written, size, found)
    return entry


def _settle(root: str, blobs: BlobStore, plan: Plan, written: list[Entry], size: int,
            found: dict[str, Any] | None) -> None:
    """After the entry is in the journal: the bytes it left (for review), the manifest at its
    after-state, the blob total, the bound. Best effort: the entry and the files are what
    counts, and the manifest's `journal_seen` gap covers a manifest not written."""
    try:
        retention.keep_afters(blobs, plan)
        if found is not None:
            manifest.after_write(root, written, found)
    except (OSError, JournalError):
        pass
    if size > journalfile.JOURNAL_MAX:
        retention.rotate(root, blobs)
    blobs.save()


def _recover(root: str) -> Entry | None:
    """Journal what an interrupted transaction really left on disk (see the module docstring)."""
    pending = metadir.path(root, PENDING)
    raw, _ = metadir.read(pending, PENDING_MAX)
    if raw is None:
        return None
    try:
        planned = Entry.from_dict(json.loads(raw.decode("utf-8")))
    except (ValueError, UnicodeDecodeError, RecursionError):
        os.unlink(pending)
        return None
    _clean_temps(root, planned.paths)
    last = journalfile.last_id(root)
    if last >= planned.id:  # it reached the journal; only the intent record was left
        os.unlink(pending)
        return None
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
        entry = Entry(last + 1, _now(), planned.command, planned.argv, changes, planned.undoes, True,
                      planned.no_undo)
        journalfile.append(root, entry)
        try:
            manifest.after_write(root, [entry])
        except (OSError, JournalError):
            pass
    os.unlink(pending)
    return entry


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
                if pid.isdigit() and int(pid) != os.getpid() and pid_alive(int(pid)):
                    continue
                try:
                    os.unlink(os.path.join(folder, name))
                except OSError:
                    pass


# -- transactions ------------------------------------------------------------------------------------

class Transaction:
    """Staged reads and writes against one store; see the module docstring."""

    def __init__(self, root: str, command: str, argv: Sequence[str] = (), timeout: float | None = None,
                 no_undo: bool = False) -> None:
        if not os.path.isdir(root):
            raise JournalError("%s is not a folder; pass the folder that holds MEMORY.md" % root)
        self.root = root
        self.command = command
        self.argv = journalfile.slim_argv(argv)
        self.no_undo = no_undo
        self.lock = _lock(root, timeout)
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
        plan: Plan = []
        for rel in self.order:
            after, mode = self.staged[rel]
            before, before_mode = _read_file(root, rel)
            if before == after and (after is None or mode is None or mode == before_mode):
                continue
            if after is not None and mode is None:
                mode = before_mode if before_mode is not None else metadir.umask_mode()
            plan.append((rel, before, before_mode, after, mode))
        if not plan:
            return None
        return _apply(root, self.command, self.argv, plan, self.undoes, self.no_undo)


def transaction(root: str, command: str, argv: Sequence[str] = (), timeout: float | None = None,
                no_undo: bool = False) -> Transaction:
    """A transaction on the store at `root` (see the module docstring). After the block,
    `tx.entry` is the journal entry written, or None when nothing changed. `no_undo` writes
    even when the prior bytes cannot be kept (the entry then says it cannot be undone)."""
    return Transaction(root, command, argv, timeout, no_undo)


def record(root: str, command: str, changes: Iterable[Change], argv: Sequence[str] = ()) -> Entry | None:
    """Journal changes something else already made on disk (`before` is what was there).
    Prior bytes go to the blob store like a transaction's, as far as they fit (a prior version
    over BLOB_FILE_MAX is marked not kept: the change has happened). None when nothing changed.
    The caller (engramory.store.review) saves the manifest itself."""
    items = list(changes)
    with _lock(root):
        _recover(root)
        plan: Plan = []
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
        blobs = BlobStore(root)
        retention.room_for(root, blobs, [p for p in plan if p[1] is None or len(p[1]) <= blobstore.BLOB_FILE_MAX], False)
        entry = Entry(journalfile.last_id(root) + 1, _now(), command, journalfile.slim_argv(argv),
                      retention.changes(blobs, plan, False, best_effort=True))
        size = journalfile.append(root, entry)
        retention.keep_afters(blobs, plan)
        if size > journalfile.JOURNAL_MAX:
            retention.rotate(root, blobs)
        blobs.save()
        return entry


# -- undo ------------------------------------------------------------------------------------------------

def find_undo_target(root: str, entry_id: int | None = None) -> tuple[Entry, list[Entry]]:
    """(the entry `undo` would take back, the entries after it, newest first). With no id:
    engramory's own newest write not yet undone (never an undo, never an "external" entry,
    which only its id takes back, never what a sync pulled in: BY_ID_ONLY)."""
    later: list[Entry] = []
    for e in journalfile.Reader(root).back():
        if entry_id is None:
            if e.command != EXTERNAL and e.command not in BY_ID_ONLY and e.undoes is None and not e.undone:
                return e, later
        elif e.id == entry_id:
            if e.undone:
                undoer = next((u.id for u in later if u.undoes == e.id and not u.undone), e.id)
                raise JournalError("entry %d is already undone; `engramory undo %d` would take the undo back"
                                   % (e.id, undoer))
            return e, later
        elif e.id < entry_id:
            break
        later.append(e)
    if entry_id is None:
        raise JournalError("nothing to undo: every write engramory journaled is already undone (see "
                           "`engramory log`); a change made outside engramory that `engramory review` journaled is "
                           "undone only by its id: `engramory undo ID`")
    raise JournalError("no journal entry %d; `engramory log` lists them" % entry_id)


def _conflict(target: Entry, later: list[Entry], rel: str, now: bytes | None) -> JournalConflict:
    by = next((e for e in later if rel in e.paths and not e.undone), None)
    if by is not None and by.command == EXTERNAL:
        hint = ("entry %d journaled a change made outside engramory after it: undo entry %d first (`engramory undo "
                "%d`)" % (by.id, by.id, by.id))
    elif by is not None:
        hint = "undo entry %d (%s) first" % (by.id, by.command)
    else:
        hint = ("it was changed outside engramory: `engramory review` journals that change, then undo its entry "
                "first, or put the file back by hand")
    return JournalConflict("%s is no longer what entry %d left (%s); nothing was undone: %s"
                           % (rel, target.id, _size_text(now), hint))


def undo(root: str, entry_id: int | None = None, argv: Sequence[str] = (), no_undo: bool = False) -> Entry:
    """Put back the files of one entry byte for byte (and their modes), as a new journal entry
    whose `undoes` names it. Every file must still be what that entry left (else
    JournalConflict, naming the later entry to undo first), and every prior version must still
    be in the blob store (else JournalError); otherwise nothing is written."""
    with _lock(root):
        _recover(root)
        target, later = find_undo_target(root, entry_id)
        blocker = target.undo_blocker()
        if blocker is not None:
            raise JournalError("cannot undo entry %d (%s): %s; nothing was undone" % (target.id, target.command, blocker))
        blobs = BlobStore(root)
        plan: Plan = []
        for c in target.changes:
            now, now_mode = _read_file(root, c.path)
            if sha256(now) != c.after:
                by_key = _undo_by_key(blobs, later, target, c, now)
                if by_key is not None:
                    plan.append((c.path, now, now_mode, by_key,
                                 now_mode if now_mode is not None else metadir.umask_mode()))
                    continue
                raise _conflict(target, later, c.path, now)
            restored: bytes | None = None
            if c.before is not None:
                restored = blobs.read(c.before)
                if restored is None:
                    raise JournalError("cannot undo entry %d: the prior bytes of %s are no longer in the blob store "
                                       "(%s); nothing was undone" % (target.id, c.path, os.path.join(
                                           root, DIR, BLOBS)))
            mode = c.mode if c.mode is not None else (now_mode if now_mode is not None else metadir.umask_mode())
            plan.append((c.path, now, now_mode, restored, mode))
        return _apply(root, "undo", journalfile.slim_argv(argv), plan, target.id, no_undo)


def _undo_by_key(blobs: BlobStore, later: Sequence[Entry], target: Entry, c: FileChange,
                 now: bytes | None) -> bytes | None:
    """The index with only this change's lines taken back, when a sync has since merged other
    notes into it: engramory.sync.keyundo. None for any other file or history, or when that
    cannot be done cleanly; the undo is then refused as before."""
    from engramory.sync import keyundo  # only on a conflicting undo: the sync package is not loaded otherwise

    commands = [e.command for e in later if c.path in e.paths and not e.undone]
    return keyundo.undo_for(c.path, c.before, c.after, now, commands, blobs.read)


def _size_text(data: bytes | None) -> str:
    return "now absent" if data is None else "now %s bytes" % "{:,}".format(len(data))
