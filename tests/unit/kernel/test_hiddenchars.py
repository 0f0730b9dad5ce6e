"""One table of hidden characters (engramory.hiddenchars) for everything that cleans, refuses
or reports them: the doctor's hidden-unicode finding, the index-line check `new`/`update` run
and the excerpt quoting agree on every code point and in every context (issue 20: the two
tables disagreed on U+200D, U+2065 and U+FE00-FE0F)."""

from __future__ import annotations

import pytest

from engramory import hiddenchars, layout
from engramory.curate import indexline
from engramory.curate.notes import Refusal
from engramory.doctor import scan

HEART, MAN, WOMAN = "\u2764", "\U0001f468", "\U0001f469"
# Every code point either table ever held, the selectors' supplement, and their neighbours.
CANDIDATES = sorted({o for c in hiddenchars.ANY for o in (c - 1, c, c + 1)} - set(range(0xD800, 0xE000)))
CONTEXTS = ["ab{}cd", "{}abc", "ab{}", "ab{}{}cd", HEART + "{}", MAN + "{}" + WOMAN, "a {} b", HEART + "{}{}"]


def doctor_says(text: str) -> bool:
    return bool(scan._hidden(text))


def field_refuses(text: str) -> bool:
    try:
        indexline.field("--title", text)
    except Refusal:
        return True
    return False


@pytest.mark.parametrize("context", CONTEXTS)
def test_the_doctor_and_the_index_line_check_agree_on_every_code_point(context: str) -> None:
    disagree = []
    for o in CANDIDATES:
        if o < 0x20 or 0x7F <= o < 0xA0:
            continue  # control characters: the index line refuses them, the doctor reports them elsewhere
        text = context.format(chr(o), chr(o))
        if text.startswith("\ufeff"):
            continue  # a BOM opening a file is no hidden text to the doctor (it is not in a one-line field)
        if doctor_says(text) != field_refuses(text):
            disagree.append("U+%04X in %r: doctor %s, index line %s" % (o, context, doctor_says(text),
                                                                       field_refuses(text)))
    assert disagree == []


def test_what_both_flag_an_excerpt_drops() -> None:
    for o in sorted(hiddenchars.ANY):
        assert chr(o) not in layout.clean("ab" + chr(o) + "cd"), "U+%04X" % o


@pytest.mark.parametrize("text, hidden", [
    ("ab\u2065cd", True),                       # unassigned, default-ignorable: the doctor used to miss it
    ("ab\u200dcd", True),                       # a joiner between letters hides text
    (MAN + "\u200d" + WOMAN, False),            # between two emoji it makes one glyph
    (HEART + "\ufe0f", False),                  # a heart drawn as emoji
    ("ab\ufe0f\ufe0e\ufe0fcd", True),           # a run of selectors carries data
    ("a \U000e0101", True),                     # a supplementary selector with nothing to vary
    ("\ufe0fabc", True),
    ("plain words", False),
])
def test_the_rules(text: str, hidden: bool) -> None:
    assert doctor_says(text) is hidden and field_refuses(text) is hidden
