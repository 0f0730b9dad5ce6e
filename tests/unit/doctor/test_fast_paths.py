"""The doctor's fast paths read exactly like the careful code they skip: the same words, the
same judgements, on generated hostile text (ASCII and not, punctuation, underscores, every
kind of whitespace, look-alike and case-changing characters)."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engramory.store import descriptions
from engramory.store.secrets import quote

WORD_RE = re.compile(r"\w+")
# characters chosen to break a shortcut: separators \w does not know, letters whose lower
# case is longer or not ASCII, digits of other scripts, whitespace str.split knows
HOSTILE = st.sampled_from(list("abzAZ09 -_.,:;'\"()#!?/\t\n\r\x0b\x0c\x1c\x1f\x00\x7f")
                          + ["\u00a0", "\u2028", "\u3000", "\u0130", "\u212a", "\u00df", "\u01c5", "\u0663",
                             "\u2168", "\u00e9", "\u4e2d", "\u200b", "\ufeff", "\uff41"])
texts = st.one_of(st.text(HOSTILE, max_size=40), st.text(max_size=40),
                  st.from_regex(r"[a-z0-9]+(?:[- _][a-z0-9]+){0,6}", fullmatch=True))
SETTINGS = settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow], deadline=None)


def reference_weakness(desc: str, slug: str) -> str | None:
    """descriptions.weakness before its fast paths, verbatim."""
    ws = WORD_RE.findall(desc.lower())
    if len(desc) > descriptions.DESCRIPTION_MAX_CHARS:
        return "%s characters: the selector reads it whole beside every other note; keep one line under %d" % (
            "{:,}".format(len(desc)), descriptions.DESCRIPTION_MAX_CHARS)
    if all(w in descriptions.GENERIC_DESCRIPTIONS or w.isdigit() for w in ws) or ws == WORD_RE.findall(
            slug.lower().replace("_", " ")):
        return "%s says nothing the file name does not" % quote(desc, 60)
    if len(ws) < descriptions.DESCRIPTION_MIN_WORDS:
        return "%s is %d word%s" % (quote(desc, 60), len(ws), "" if len(ws) == 1 else "s")
    return None


@SETTINGS
@given(texts)
def test_words_are_the_word_runs(text: str) -> None:
    assert descriptions.words(text) == WORD_RE.findall(text.lower())
    assert descriptions.slug_words(text) == WORD_RE.findall(text.lower().replace("_", " "))


@SETTINGS
@given(texts, texts)
def test_weakness_judges_like_the_careful_code(desc: str, slug: str) -> None:
    want = reference_weakness(desc, slug)
    assert descriptions.weakness(desc, slug) == want
    assert descriptions.weakness(desc, slug, descriptions.words(desc)) == want


@SETTINGS
@given(texts, st.sampled_from([str.lower, str.upper, str.title]), st.sampled_from(["-", "_", " -"]))
def test_a_description_that_is_its_slug_says_nothing(text: str, case: object, sep: str) -> None:
    slug = case("-".join(WORD_RE.findall(text.lower()))).replace("-", sep)  # type: ignore[operator]
    assert descriptions.weakness(text, slug) == reference_weakness(text, slug)
