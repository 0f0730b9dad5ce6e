"""`engramory doctor --verify`: the verify run's verdicts as doctor findings.

`ref-stale` (warning) for an anchor that is not in the repository, `ref-moved` (info) for one
that moved, `verified-old` (warning) for a note that names code and was last verified
(`engramory verify --mark`) more than `verifyMaxAgeDays` days ago (.engramory.json, default
90); a note never marked counts from its `updated` (or `created`) date. Only when asked: it
runs git, and the plain doctor stays fast and offline of it. Reads the verify cache, never
writes it (the doctor changes no file).
"""

from __future__ import annotations

import datetime
import os

from engramory import config
from engramory.doctor.codes import Finding
from engramory.verify import run

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping


def findings(root: str, today: datetime.date, env: Mapping[str, str] | None = None,
             skip: Iterable[str] = ()) -> tuple[list[Finding], str]:
    """(the findings, a sentence for stderr when no repository holds the store, else "")."""
    skipped = set(skip)
    result = run.verify(root, None, os.getcwd(), env, keep=False)
    out = []
    for item in result.items:
        if item.verdict == run.STALE:
            out.append(Finding("ref-stale", item.note, item.line, "%s %s: %s; update the note (`engramory update`) or "
                               "archive it" % (item.kind, item.text, item.reason)))
        elif item.verdict == run.MOVED:
            out.append(Finding("ref-moved", item.note, item.line, "%s %s: now %s (%s)"
                               % (item.kind, item.text, item.candidate, item.reason)))
    max_age = config.load_store_config(root).verify_max_age_days
    checkable = {i.note for i in result.items if i.verdict != run.UNVERIFIABLE}
    for scan in result.notes:
        if scan.rel in checkable:
            out += _age(scan, today, max_age)
    said = "" if result.repo is not None else "--verify: %s; no ref- findings" % result.why
    return [f for f in out if f.code not in skipped], said


def _age(scan: run.NoteScan, today: datetime.date, max_age: int) -> list[Finding]:
    since = scan.verified or scan.updated
    try:
        day = datetime.date.fromisoformat(since or "")
    except ValueError:
        return []  # no usable date: fm-bad-date or fm-missing-field says so
    age = (today - day).days
    if age <= max_age:
        return []
    name = scan.rel[:-3] if scan.rel.endswith(".md") else scan.rel
    what = ("was last verified on %s" % scan.verified if scan.verified
            else "was never verified (updated %s)" % scan.updated)
    return [Finding("verified-old", scan.rel, 0, "names code and %s, %d days ago (verifyMaxAgeDays %d): check what it "
                    "names, then `engramory verify --mark %s`" % (what, age, max_age, name))]
