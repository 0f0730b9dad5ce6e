"""The rules a note written through the MCP server is held to: the doctor's own per-note
judgement (frontmatter, labels, secrets) plus what `engramory new` adds (a feedback or project
note has Why:/How to apply:, a project note has no relative date, the per-note size cap).

A create must pass all of them. A str_replace or insert must not ADD a problem: one the note
already had is reported, not refused, so a broken note can be fixed one edit at a time (the
guard's rule for the index, applied to a note). A secret is new when its value was not there
before.
"""

from __future__ import annotations

import datetime

from engramory.curate import common as curate_common
from engramory.curate.notes import NEEDS_LABELS
from engramory.doctor import notes as doctor_notes
from engramory.doctor import scan
from engramory.doctor.codes import ERROR
from engramory.size import n as _n
from engramory.store import reader as store
from engramory.store import secrets as secretscan
from engramory.store.secrets import quote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from engramory.store.reader import Note



def probe(rel: str, text: str) -> Note:
    """`text` read as the note at `rel` would be (nothing is written)."""
    return store.parse_note(store.Note("", rel, rel.startswith(store.ARCHIVE + "/")), text)


class Problems:
    """What is wrong with one note text: `errors` and `warnings` as (code, message)."""

    def __init__(self, note: Note, size: int, cap: int) -> None:
        self.errors: list[tuple[str, str]] = []
        self.warnings: list[tuple[str, str]] = []
        today = datetime.date.today()
        for f in doctor_notes.frontmatter_findings(note, today):
            (self.errors if f.severity == ERROR else self.warnings).append((f.code, _at(f.line, f.message)))
        for f in list(doctor_notes.labels_and_dates(note)) + scan.scan_note(note):
            if f.code in ("labels-missing", "relative-date"):
                continue  # held to new's rule below, whatever the note's form
            (self.errors if f.severity == ERROR else self.warnings).append((f.code, _at(f.line, f.message)))
        t = note.type
        if t in NEEDS_LABELS and not curate_common.labels_ok(note.body):
            self.errors.append(("labels-missing", "a %s note needs a **Why:** line (the reason) and a **How to "
                                "apply:** line (what to do next time) in its body" % t))
        if t == "project":
            for a, b in doctor_notes.relative_dates(note.body.lower())[:10]:
                self.errors.append(("relative-date", "a project note uses absolute dates: %s is relative and wrong "
                                    "tomorrow; write the calendar date (today is %s)"
                                    % (_q(note.body.lower()[a:b]), today.isoformat())))
        if size > cap:
            self.errors.append(("note-too-large", "the note would be %s bytes, over the %s-byte cap per note "
                                "(noteMaxBytes): one note holds one fact; split it or trim it by %s bytes"
                                % (_n(size), _n(cap), _n(size - cap))))
        self.secrets = {(note.text or "")[s.start:s.end] for s in secretscan.find(note.text or "")}

    def added_since(self, before: Problems) -> list[str]:
        """The errors this text has that `before` did not (by code, as counted)."""
        had: dict[str, int] = {}
        for code, _ in before.errors:
            had[code] = had.get(code, 0) + 1
        out = []
        for code, message in self.errors:
            if code == "secret":
                if self.secrets <= before.secrets:
                    continue
            elif had.get(code, 0) > 0:
                had[code] -= 1
                continue
            out.append(message)
        return out


def _at(line: int, message: str) -> str:
    return ("line %d: %s" % (line, message)) if line else message


def _q(text: str) -> str:

    return quote(text, 60)


def refusal(problems: list[str], what: str) -> str:
    """One message naming every problem, so the model can fix them all in its next call."""
    if len(problems) == 1:
        return "%s was not saved: %s" % (what, problems[0])
    shown = "; ".join("(%d) %s" % (i, p) for i, p in enumerate(problems[:SHOWN], 1))
    more = "; and %s more like these" % _n(len(problems) - SHOWN) if len(problems) > SHOWN else ""
    return "%s was not saved, for %s reasons: %s%s" % (what, _n(len(problems)), shown, more)


SHOWN = 5  # problems named in one refusal; the count says how many there are
