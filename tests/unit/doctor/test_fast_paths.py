"""The doctor's fast paths read exactly like the careful code they skip: the same words, the
same judgements, on generated hostile text (ASCII and not, punctuation, underscores, every
kind of whitespace, look-alike and case-changing characters)."""

from __future__ import annotations

import datetime
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engramory.doctor import notes
from engramory.store import descriptions, reader
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


# -- frontmatter_findings: plainly_clean says [] only where the full walk finds nothing ----------

TODAY = datetime.date(2026, 3, 1)
DATES = st.sampled_from(["2025-01-01", "2026-03-01", "2026-03-02", "2026-03-03", "2027-01-01", "2026-02-30",
                         "2025-13-01", "0000-01-01", "2026-1-01", "2025-1-01", "2025-01-1x", "'2025-01-01'", "' '", "",
                         "  ", "2025-01-01 # c"])
NAMES = st.sampled_from(["user-a", "User-a", " user-a", "user-a ", "'user-a'", "user-b", "", "yes", "user-a: x",
                         "' '", "'  '"])
PLAIN = st.sampled_from(["plain words here", "", " ", "' '", "'quoted words'", '"x"', "a: b", "null", "x #y", "\u00e9t\u00e9 ok",
                         "user", "feedback", "project", "reference", "User", "other"])


@st.composite
def protocol_notes(draw: st.DrawFn) -> str:
    """Mostly clean protocol notes, each field now and then wrong in one of many ways."""
    fields = [("name", draw(st.one_of(st.just("user-a"), NAMES))),
              ("description", draw(st.one_of(st.just("what the note is about"), PLAIN))),
              ("type", draw(st.one_of(st.sampled_from(["user", "feedback"]), PLAIN))),
              ("created", draw(st.one_of(st.just("2025-01-01"), DATES))),
              ("updated", draw(st.one_of(st.just("2026-01-01"), DATES)))]
    fields = draw(st.lists(st.sampled_from(fields), min_size=3, max_size=6)) if draw(st.booleans()) else fields
    lines = ["%s:%s" % (k, (" " + v) if v else "") for k, v in fields]
    lines += draw(st.lists(st.sampled_from(["metadata:", "  type: user", "  type: project", "scope: repo", "# c",
                                            "", "bad line", "name: user-a", "\tx: y", "metadata:\n  type: user",
                                            "metadata:\n  type: project", "metadata:\n  other: x"]), max_size=2))
    nl = draw(st.sampled_from(["\n", "\r\n"]))
    close = draw(st.sampled_from(["---", "---", "--- ", "...", ""]))
    body = draw(st.sampled_from(["", "body\n", "\n---\nname: x\n---\n", "---\n", "text\n---\nk: v\n", "x" * 390 + "---",
                                 "```\n", "  \n---\nkey: v\n"]))
    lead = draw(st.sampled_from(["", "", "\ufeff", "```\n", " "]))
    return lead + "---" + nl + nl.join(lines) + nl + close + nl + body


@settings(max_examples=1500, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(protocol_notes(), st.sampled_from(["user-a.md", "archive/user-a.md", "User-a.md", " .md", "  .md"]))
def test_plainly_clean_only_where_the_full_check_finds_nothing(text: str, rel: str) -> None:
    note = reader.parse_note(reader.Note("/s/" + rel, rel, rel.startswith("archive/")), text)
    full = notes._frontmatter_findings(note, TODAY)
    if notes.plainly_clean(note, TODAY):
        assert full == []
    assert [(f.code, f.line, f.message) for f in notes.frontmatter_findings(note, TODAY)] == [
        (f.code, f.line, f.message) for f in full]


def test_plainly_clean_takes_the_common_note() -> None:
    """The shortcut is taken at all (else the test above would hold vacuously)."""
    text = "---\nname: user-a\ndescription: what it is about\ntype: user\ncreated: 2025-01-01\nupdated: 2026-01-01\n---\nx\n"
    note = reader.parse_note(reader.Note("/s/user-a.md", "user-a.md", False), text)
    assert notes.plainly_clean(note, TODAY)
    assert not notes.plainly_clean(note, datetime.date(2025, 6, 1))  # updated is in the future then


CLEAN = [("name", "user-a"), ("description", "what the note is about"), ("type", "user"),
         ("created", "2025-01-01"), ("updated", "2026-01-01")]
ONE_WRONG = {
    "name": ["User-a", "user-b", "' '", "''", "'user-a'", "\"user-a\"", "", "yes", "a: b"],
    "description": ["' '", "''", "", "'x'", "null", "a: b"],
    "type": ["User", "other", "' '", "", "'user'", "1"],
    "created": ["2026-02-01", "2026-03-09", "2025-1-01", "2025-02-30", "' '", "", "'2025-01-01'", "2025-01-01x"],
    "updated": ["2024-12-31", "2026-03-09", "2026-1-01", "2025-1-01", "2026-02-30", "' '", "", "'2026-01-01'"],
}


def _near_clean() -> list[tuple[str, str]]:
    """The clean note, then each field wrong in each way, missing, doubled; extra lines; a
    second block, a code fence, a BOM and CRLF; the note's file named like its name or not."""
    def text(fields: list[tuple[str, str]], extra: tuple[str, ...] = (), body: str = "x\n", nl: str = "\n") -> str:
        lines = ["%s:%s" % (k, (" " + v) if v else "") for k, v in fields] + list(extra)
        return "---" + nl + nl.join(lines) + nl + "---" + nl + body

    cases = [("user-a.md", text(CLEAN)), (" .md", text([("name", "' '")] + CLEAN[1:])),
             ("user-a.md", "\ufeff" + text(CLEAN, nl="\r\n")), ("user-a.md", "```\n" + text(CLEAN) + "```\n")]
    for k, (key, _) in enumerate(CLEAN):
        for bad in ONE_WRONG[key]:
            cases.append(("user-a.md", text(CLEAN[:k] + [(key, bad)] + CLEAN[k + 1:])))
        cases.append(("user-a.md", text(CLEAN[:k] + CLEAN[k + 1:])))
        cases.append(("user-a.md", text(CLEAN + [CLEAN[k]])))
    for extra in (("metadata:", "  type: user"), ("metadata:", "  type: project"), ("metadata:",), ("scope: repo",),
                  ("# c",), ("bad line",), ("  x: y",)):
        cases.append(("user-a.md", text(CLEAN, extra)))
    for body in ("---\nname: x\n---\n", "\n\n---\nk: v\n", "x" * 395 + "---", "---\n", ""):
        cases.append(("user-a.md", text(CLEAN, body=body)))
    cases += [("archive/user-a.md", text(CLEAN)), ("User-a.md", text(CLEAN))]
    return cases


@pytest.mark.parametrize(("rel", "text"), _near_clean())
def test_plainly_clean_on_one_thing_wrong(rel: str, text: str) -> None:
    note = reader.parse_note(reader.Note("/s/" + rel, rel, rel.startswith("archive/")), text)
    full = notes._frontmatter_findings(note, TODAY)
    if notes.plainly_clean(note, TODAY):
        assert full == []
    assert [(f.code, f.line, f.message) for f in notes.frontmatter_findings(note, TODAY)] == [
        (f.code, f.line, f.message) for f in full]
