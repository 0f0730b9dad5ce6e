"""Whether a note's description gives the host's memory selector something to judge by.

Measured on Claude Code 2.1.332 (tests/e2e/test_recall_scan.py): besides the index, a side
call offers its model the 200 newest notes as one line each, `- [type] path (mtime):
description`; `name:` is not sent. So the description is all the selector judges relevance
from, and one that only repeats the file name, says nothing, or is too short or too long is
weak. `weakness` is the one judgement: the doctor reports it (description-weak), `new` and
`update` put it in their receipts, and `suggest_slug` (curate.notes) makes names it accepts.
"""

from __future__ import annotations

import re

from engramory.store.secrets import quote

GENERIC_DESCRIPTIONS = frozenset(
    "note notes memory memories todo misc miscellaneous info information stuff things tbd wip "
    "placeholder description summary details general update updates fix fixes untitled test".split())
DESCRIPTION_MIN_WORDS = 4
DESCRIPTION_MAX_CHARS = 300
WORD_RE = re.compile(r"\w+")


def words(desc: str) -> list[str]:
    """The description's words, lower-cased, as the doctor compares them."""
    return WORD_RE.findall(desc.lower())


def slug_words(slug: str) -> list[str]:
    return WORD_RE.findall(slug.lower().replace("_", " "))


def weakness(desc: str, slug: str) -> str | None:
    """Why `desc` is a weak description for the note named `slug` (its file name without
    `.md`), or None when it is not. The reason starts with what was measured, the
    description quoted safely (masked, cut short), e.g. '"Deploy notes" is 2 words'."""
    ws = words(desc)
    if len(desc) > DESCRIPTION_MAX_CHARS:
        return "%s characters: the selector reads it whole beside every other note; keep one line under %d" % (
            "{:,}".format(len(desc)), DESCRIPTION_MAX_CHARS)
    if all(w in GENERIC_DESCRIPTIONS or w.isdigit() for w in ws) or ws == slug_words(slug):
        return "%s says nothing the file name does not" % quote(desc, 60)
    if len(ws) < DESCRIPTION_MIN_WORDS:
        return "%s is %d word%s" % (quote(desc, 60), len(ws), "" if len(ws) == 1 else "s")
    return None


ADVICE = ("the host's selector picks notes by description alone: say what the note is about, "
          "specifically, in one line")
