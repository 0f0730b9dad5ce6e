"""What the journal keeps so that undo can happen, and what it lets go.

Every write keeps the prior bytes of each file it changes in the blob store (engramory.
blobstore), secrets included, before any file is touched; when it cannot (one prior version
over BLOB_FILE_MAX, or the write's prior versions over BLOB_CAP), it is refused before
anything is written (`check_undo`: UndoNotKept, which names the numbers and `--no-undo`).

The rule between the blob cap and the journal bound. An entry can be undone while it is in
the live journal (engramory.store.journalfile: past JOURNAL_MAX bytes the oldest entries rotate into
the history, metadata only). A blob that an entry in the live journal names, before or after,
is never pruned. When a write needs room under BLOB_CAP, blobs go in this order:

  1. those nothing names, oldest first;
  2. those only the review manifest names (a note's current bytes, kept so that a later
     deletion by something else can be undone), oldest first;
  3. only then the fewest oldest live entries are rotated, which frees the blobs only they
     named (`make_room`); a write is refused only when its own prior versions cannot fit.

Every rotation also removes each blob that no live entry and no manifest row names: what undo
can no longer reach is not kept. The bytes a write leaves in `.md` files are kept too, while
they fit without step 3 (`keep_afters`: review needs them to undo a later deletion).

Standard library only; Python 3.9+.
"""

from __future__ import annotations

import hashlib
import time

from engramory.store import blobstore, journalfile, manifest, metadir
from engramory.store.blobstore import BlobStore
from engramory.store.journalfile import FileChange
from engramory.store.metadir import JOURNAL, JournalError, UndoNotKept

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Optional, Tuple

    # per path: (rel, bytes before, mode before, bytes after, mode after); None: absent
    Plan = List[Tuple[str, Optional[bytes], Optional[int], Optional[bytes], Optional[int]]]


def sha256(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def keep_blobs(root: str, items: list[tuple[str, bytes, str]], deadline: float | None = None) -> list[str]:
    """Copy each (rel, bytes, sha256) into the blob store, for engramory.store.review, which keeps
    the notes it saw so that a later deletion can be undone. Never one past BLOB_FILE_MAX;
    room is made as for a write's own blobs, but never by rotating an undoable entry. The
    copies are not fsynced one by one (a lost copy is only an undo that cannot happen; the
    reader checks the hash). Past `deadline` (time.monotonic()) the rest is left: their rels
    are returned, and the next reconcile keeps them (a hook must end within its timeout)."""
    blobs = BlobStore(root)
    todo = [(rel, data, digest) for rel, data, digest in items
            if len(data) <= blobstore.BLOB_FILE_MAX and not blobs.has(digest)]
    left: list[str] = []
    if not todo:
        return left
    need = sum(len(data) for _, data, _ in todo)
    if blobs.total() + need > blobstore.BLOB_CAP:
        blobs.prune(protected(root, with_manifest=True) | {d for _, _, d in todo}, need)
    for rel, data, digest in todo:
        if deadline is not None and time.monotonic() > deadline:
            left.append(rel)
            continue
        if blobs.total() + len(data) > blobstore.BLOB_CAP:
            continue  # no room that an undoable entry does not need: reported as unrecoverable if it goes
        blobs.add(data, digest, sync=False)
    blobs.save()
    return left


def protected(root: str, with_manifest: bool) -> set[str]:
    """The digests the live journal names (before and after), and the manifest's rows."""
    keep: set[str] = set()
    for _, line in journalfile.lines_back(metadir.path(root, JOURNAL)):
        e = journalfile.parse(line)
        if e is not None:
            keep.update(d for c in e.changes for d in (c.before, c.after) if d)
    if with_manifest:
        try:
            found, _ = manifest.load(root)
        except JournalError:
            found = None
        if found is not None:
            keep.update(str(row[2]) for row in found["files"].values())
    return keep


def make_room(root: str, blobs: BlobStore, need: int, optional: int, extra: set[str]) -> None:
    """Room under BLOB_CAP for `need` bytes (a write's prior versions), and for `optional`
    more (the bytes it leaves) when that costs no undoable entry; `extra` are the digests the
    write itself names, never removed. See the module docstring for what goes first."""
    if blobs.total() + need + optional <= blobstore.BLOB_CAP:
        return
    live = protected(root, with_manifest=False) | extra
    both = live | protected(root, with_manifest=True)
    if blobs.prune(both, need + optional) or blobs.prune(both, need) or blobs.prune(live, need):
        return
    journalfile.rotate(root, keep=_live_bytes_to_keep(root, blobs, need, extra))
    if not blobs.prune(protected(root, with_manifest=False) | extra, need):
        raise UndoNotKept("no room for the prior versions of this write in the blob store (%s bytes needed, cap %s): "
                          "nothing was written: run it again with --no-undo to write without a way back"
                          % (blobstore.n(need), blobstore.n(blobstore.BLOB_CAP)))


def _live_bytes_to_keep(root: str, blobs: BlobStore, need: int, extra: set[str]) -> int:
    """How many bytes of the newest live entries a rotation keeps so that the blobs only the
    oldest ones name free room for `need` bytes: the fewest entries rotated."""
    where = metadir.path(root, JOURNAL)
    rows = []
    for off, line in journalfile.lines_back(where):
        e = journalfile.parse(line)
        rows.append((off, set() if e is None else {d for c in e.changes for d in (c.before, c.after) if d}))
    rows.reverse()  # oldest first
    last_ref = {d: i for i, (_, names) in enumerate(rows) for d in names}
    sizes = {name: size for _, name, size in blobs.listing()}
    over = blobs.total() + need - blobstore.BLOB_CAP
    _, size = metadir.read(where, -1)
    freed = 0
    for i, (_, names) in enumerate(rows):
        freed += sum(sizes.get(d, 0) for d in names if last_ref[d] == i and d not in extra)
        if freed >= over:
            return size - rows[i + 1][0] if i + 1 < len(rows) else 0
    return 0


def rotate(root: str, blobs: BlobStore) -> None:
    """The journal past JOURNAL_MAX: rotate, then drop every blob nothing undoable needs."""
    journalfile.rotate(root)
    blobs.drop_all_but(protected(root, with_manifest=True))


def changes(blobs: BlobStore, plan: Plan, no_undo: bool, best_effort: bool) -> list[FileChange]:
    """The entry's changes, keeping each prior version in the blob store (best effort for
    record(): those changes already happened)."""
    out = []
    for rel, before, before_mode, after, _mode in plan:
        kept, why = True, ""
        if before is not None:
            if no_undo:
                kept, why = False, "written with --no-undo"
            elif best_effort and len(before) > blobstore.BLOB_FILE_MAX:
                kept, why = False, "larger than the blob store keeps of one version (%s bytes)" % blobstore.n(
                    blobstore.BLOB_FILE_MAX)
            else:
                blobs.add(before, sha256(before) or "")
        out.append(FileChange(rel, sha256(before), sha256(after), None if before is None else len(before),
                              None if after is None else len(after), before_mode, kept, why))
    return out


def keep_afters(blobs: BlobStore, plan: Plan) -> None:
    """The bytes a write leaves in `.md` files, while they fit (for review: a later deletion
    by something else can then be undone)."""
    for rel, _before, _bm, after, _mode in plan:
        if (after is not None and manifest.tracked(rel, blobs.root) and len(after) <= blobstore.BLOB_FILE_MAX
                and blobs.total() + len(after) <= blobstore.BLOB_CAP):
            blobs.add(after, sha256(after) or "", sync=False)


def check_undo(plan: Plan) -> None:
    """UndoNotKept, before anything is written, when the write's prior versions cannot be kept."""
    problem = blobstore.undo_problem((rel, len(before)) for rel, before, _bm, _a, _m in plan if before is not None)
    if problem is not None:
        raise UndoNotKept("undo cannot be kept for this write: %s; nothing was written. Run the command again with "
                          "--no-undo to write it anyway: its receipt and `engramory log` will say it cannot be "
                          "undone" % problem)


def room_for(root: str, blobs: BlobStore, plan: Plan, no_undo: bool) -> None:
    """Room for the blobs `plan` needs (its prior versions unless `no_undo`) and, if it costs
    no undoable entry, for the bytes it leaves."""
    need = 0 if no_undo else sum(len(b) for _, b, _bm, _a, _m in plan
                                 if b is not None and not blobs.has(sha256(b) or ""))
    optional = sum(len(a) for rel, _b, _bm, a, _m in plan
                   if a is not None and manifest.tracked(rel, root) and len(a) <= blobstore.BLOB_FILE_MAX)
    names = {d for _, b, _bm, a, _m in plan for d in (sha256(b), sha256(a)) if d}
    make_room(root, blobs, need, optional, names)
