"""Undo of one write's index lines by key, once the rest of the index has moved on.

After `engramory sync` merged other notes into MEMORY.md, the index is no longer the bytes an
earlier `engramory new` left, so a byte-for-byte undo would have to refuse. What that write did
to the index is still exact: the change from its `before` to its `after`. Taken back by key, it
is a three-way merge with `after` as the base, the index as it is now as ours and `before` as
theirs: the write's own lines go (or come back, or get their old text back), every line that
arrived since stays. When a line the write made was changed since, that merge conflicts and
the undo is refused as before.

`journal.undo` calls `undo_for` for a file that is no longer what the entry left; this module
touches nothing on disk itself."""

from __future__ import annotations

from engramory.sync import indexmerge

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Callable

INDEX = "MEMORY.md"  # the index every engramory command writes
SYNC = "sync"  # the journal command of what a sync pulled in


def undo_index_by_key(before: bytes | None, after: bytes, current: bytes) -> bytes | None:
    """`current` with exactly the change `before` -> `after` taken back, or None when that
    cannot be done cleanly (a line the change made was changed since)."""
    if current == after:
        return before if before is not None else b""
    result = indexmerge.merge(after, current, before if before is not None else b"")
    return result.data if result.clean else None


def undo_for(rel: str, before: str | None, after: str | None, current: bytes | None, later: Sequence[str],
             read_blob: Callable[[str], bytes | None]) -> bytes | None:
    """The bytes `rel` gets back when the entry's change (`before`/`after`: sha256s, None for an
    absent file) is undone by key in `current`; None when this is not an index change that can
    be undone that way: not the index, no sync among the `later` entries that wrote it (the
    commands of the journal entries since; without a sync the rule stays "undo the later entry
    first"), the blobs are gone, the file was created or deleted, or it conflicts."""
    if rel != INDEX or after is None or current is None or SYNC not in later:
        return None
    after_bytes = read_blob(after)
    if after_bytes is None:
        return None
    before_bytes = None
    if before is not None:
        before_bytes = read_blob(before)
        if before_bytes is None:
            return None
    return undo_index_by_key(before_bytes, after_bytes, current)
