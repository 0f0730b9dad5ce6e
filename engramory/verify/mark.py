"""`engramory verify --mark NOTE...`: record that a note's claims about the code were checked.

Marking writes `verified: YYYY-MM-DD` into the note's frontmatter, and nothing else of it
(`updated:` stays: marking is not editing), as one journaled step (`engramory undo` puts the
note back byte for byte). It also keeps, in `.engramory/verify-marks.json`, a hash of each
line span the note names (`path:12-20`) as the file holds it now: later runs check the span
by its content (found elsewhere in the file: moved; nowhere: stale), not only by the file's
length. Those hashes count only while the note's `verified:` date is the one they were
taken on, so an undone mark leaves no trace in the verdicts. Reading, searching or recalling
a note never marks it.
"""

from __future__ import annotations

import json
import os

from engramory import scope
from engramory.curate import notes
from engramory.fsutil import write_atomic
from engramory.store import journal
from engramory.verify import anchors as A
from engramory.verify import cache as cache_mod
from engramory.verify.paths import FRESH, span_hash, split_lines

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from engramory.verify.run import NoteScan, Result

MARKS = "verify-marks.json"
MARKS_MAX = 8 << 20


class MarkError(Exception):
    """A note that cannot be marked: nothing was written. `code` is the exit status."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def load_marks(root: str, scans: Sequence[NoteScan]) -> dict[str, dict[str, tuple[str, str]]]:
    """{note: {anchor text: (span hash, date)}} for the notes whose `verified:` date is the
    date their spans were hashed on."""

    try:
        raw, _ = scope.read_bounded(os.path.join(root, cache_mod.DIR, MARKS), MARKS_MAX)
        data = json.loads(raw.decode("utf-8")) if len(raw) <= MARKS_MAX else None
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    notes = data.get("notes") if isinstance(data, dict) else None
    if not isinstance(notes, dict):
        return {}
    out: dict[str, dict[str, tuple[str, str]]] = {}
    for scan in scans:
        entry = notes.get(scan.rel)
        if not isinstance(entry, dict) or not scan.verified or entry.get("date") != scan.verified:
            continue
        spans = entry.get("spans")
        if isinstance(spans, dict):
            out[scan.rel] = {str(k): (str(v), scan.verified) for k, v in spans.items() if isinstance(v, str)}
    return out


def find_notes(root: str, names: Sequence[str], scans: Sequence[NoteScan]) -> list[str]:
    """The live notes `names` name (a slug, or a file name with .md), in order; MarkError
    (usage, 64) for a name that is no live note, before anything is written."""
    live = {s.rel: s for s in scans}
    by_base: dict[str, list[str]] = {}
    for rel in live:
        by_base.setdefault(rel.rsplit("/", 1)[-1], []).append(rel)
    out = []
    for name in names:
        base = name if name.endswith(".md") else name + ".md"
        hits = [base] if base in live else by_base.get(base, [])
        if len(hits) != 1:
            archived = os.path.isfile(os.path.join(root, "archive", base))
            why = ("is archived; restore it first with `engramory restore %s`" % base[:-3] if archived else
                   "names %d notes: give its path inside the store" % len(hits) if hits else
                   "is no live note of %s; `engramory search` finds notes by their words" % root)
            raise MarkError("%s %s" % (name, why), 64)
        if hits[0] not in out:
            out.append(hits[0])
    return out


def span_hashes(result: Result, rel: str) -> dict[str, str]:
    """{anchor text: hash} of the note's line spans that hold now (fresh), as the files are."""

    out: dict[str, str] = {}
    repo = result.repo
    if repo is None:
        return out
    scan = next(s for s in result.notes if s.rel == rel)
    verdicts = {(i.line, i.text): i for i in result.items if i.note == rel}
    for a in scan.anchors:
        item = verdicts.get((a.line, a.text))
        if a.kind != A.LINE or item is None or item.verdict != FRESH:
            continue
        text, _ = repo.file_text(item.place) if item.place else (None, "")
        if text is not None:
            out[a.text] = span_hash(split_lines(text), a.start, a.end)
    return out


def mark(root: str, rels: Sequence[str], result: Result, argv: Sequence[str], today: str) -> tuple[Any, dict[str, int]]:
    """Write `verified: today` into each note (one journal entry), then keep their span
    hashes. Returns (the journal entry or None when every note already said so, {note:
    spans hashed})."""

    spans = {rel: span_hashes(result, rel) for rel in rels}
    with journal.transaction(root, "verify", list(argv)) as tx:
        for rel in rels:
            data = tx.read(rel)
            if data is None:
                raise MarkError("%s went away while verify ran; nothing was written" % rel, 3)
            try:
                text = data.decode("utf-8")
                after = notes.set_fields(text, {"verified": today})
            except UnicodeDecodeError:
                raise MarkError("%s is not UTF-8 text; fix it by hand" % rel, 1) from None
            except notes.Refusal as exc:
                raise MarkError("%s: %s" % (rel, exc), 1) from None
            tx.write(rel, after.encode("utf-8"))
    _keep(root, {rel: {"date": today, "spans": spans[rel]} for rel in rels})
    return tx.entry, {rel: len(spans[rel]) for rel in rels}


def _keep(root: str, entries: Mapping[str, Any]) -> None:

    d = cache_mod.meta_dir(root)
    if d is None:
        return
    path = os.path.join(d, MARKS)
    try:
        raw, _ = scope.read_bounded(path, MARKS_MAX)
        data = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        data = {}
    kept = data.get("notes") if isinstance(data, dict) else None
    notes_: dict[str, Any] = dict(kept) if isinstance(kept, dict) else {}
    notes_.update(entries)
    try:
        write_atomic(path, json.dumps({"format": 1, "notes": notes_}, sort_keys=True).encode("utf-8"), 0o600)
    except OSError:
        pass
