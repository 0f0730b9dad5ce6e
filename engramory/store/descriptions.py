"""Whether a note's description gives the host's memory selector something to judge by.

Measured on Claude Code 2.1.332 (tests/hosts/claude/test_recall_scan.py): besides the index, a side
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
    """The description's words, lower-cased, as the doctor compares them: the `\\w+` runs of
    the lower-cased text. Most descriptions are ASCII words and spaces; there the runs are
    what `split` gives, at a third of the cost (the doctor asks twice for every note)."""
    low = desc.lower()
    parts = low.split()
    joined = "".join(parts)
    if joined.isalnum() and joined.isascii():
        return parts  # ASCII letters and digits between whitespace: exactly the \w+ runs
    return WORD_RE.findall(low)


def slug_words(slug: str) -> list[str]:
    low = slug.lower().replace("_", " ")
    parts = low.replace("-", " ").split()
    joined = "".join(parts)
    if joined.isalnum() and joined.isascii():
        return parts  # a kebab or snake ASCII slug: its \w+ runs are its hyphen-separated parts
    return WORD_RE.findall(low)


def weakness(desc: str, slug: str, ws: list[str] | None = None) -> str | None:
    """Why `desc` is a weak description for the note named `slug` (its file name without
    `.md`), or None when it is not. The reason starts with what was measured, the
    description quoted safely (masked, cut short), e.g. '"Deploy notes" is 2 words'.
    `ws` is `words(desc)` when the caller has it already."""
    if ws is None:
        ws = words(desc)
    if len(desc) > DESCRIPTION_MAX_CHARS:
        return "%s characters: the selector reads it whole beside every other note; keep one line under %d" % (
            "{:,}".format(len(desc)), DESCRIPTION_MAX_CHARS)
    # A first word that is specific makes the words not all generic (no generator is made for
    # it). For ws to be the slug's words, ws[0] must be in the lowercased slug (a word holds no
    # "_") and the words, one character apart at least, must fit in it.
    first = ws[0] if ws else ""
    low_slug = slug.lower()
    if (not ws or (first in GENERIC_DESCRIPTIONS or first.isdigit())
            and all(w in GENERIC_DESCRIPTIONS or w.isdigit() for w in ws)) or (
            first in low_slug and sum(map(len, ws)) + len(ws) - 1 <= len(low_slug) and ws == slug_words(slug)):
        return "%s says nothing the file name does not" % quote(desc, 60)
    if len(ws) < DESCRIPTION_MIN_WORDS:
        return "%s is %d word%s" % (quote(desc, 60), len(ws), "" if len(ws) == 1 else "s")
    return None


ADVICE = ("the host's selector picks notes by description alone: say what the note is about, "
          "specifically, in one line")
