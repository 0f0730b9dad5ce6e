"""The shortcuts of a fast `engramory search` (issue 21's warm latency), each held to what it
stands in for: the tokenizer's ASCII path for text whose only non-ASCII characters separate
words, and the phrase bonus asking only for the text of notes that can hold the phrase."""

from __future__ import annotations

from pathlib import Path

import pytest
import search_fixture as fx
from hypothesis import given, settings
from hypothesis import strategies as st

from engramory.curate import search, searchanswer, searchindex, searchrefresh
from tests.unit.curate import reference_rank

# every non-ASCII character below the CJK blocks that no token holds: dashes, quotes, arrows, NBSP...
SEPARATORS = [chr(c) for c in range(0x80, 0x3040) if not chr(c).isalnum() and chr(c).lower() == chr(c)]


def test_separators_are_many_and_include_the_usual_ones() -> None:
    assert len(SEPARATORS) > 1000
    assert {"\u2014", "\u2013", "\u201c", "\u2019", "\u2192", "\u00a0", "\u2026"} <= set(SEPARATORS)


@pytest.mark.parametrize("chunk", range(0, len(SEPARATORS), 512))
def test_a_text_whose_non_ascii_only_separates_words_tokenizes_as_the_pattern_does(chunk: int) -> None:
    for c in SEPARATORS[chunk: chunk + 512]:
        for text in ("ab%scd" % c, "x.%sy" % c, "%sfoo-bar%s" % (c, c), "a.b%s.c d:%s:e 42%s" % (c, c, c)):
            low = text.lower()
            assert search._words(low) == search.pattern_words(low), repr(c)


@given(st.text(alphabet=st.sampled_from(list("ab-.:/_ 7Zé\u00e9\u2014\u201c\u00a0\u0130\u212a\u3042\u4e2d")),
               max_size=30))
@settings(max_examples=400, deadline=None)
def test_the_words_of_any_text_are_the_patterns(text: str) -> None:
    low = text.lower()
    assert search._words(low) == search.pattern_words(low)


WORDS = ["run", "runs", "running", "all", "tests", "test", "before", "claiming", "fixed", "cut-off", "cutoff",
         "foo.test.ts:42", "the", "of", "部署流程", "デプロイ", "x", "bodies", "body", "—", "it's", "Fix", "ÉTÉ"]


@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12), st.lists(st.sampled_from(WORDS), max_size=8),
       st.integers(0, 11), st.integers(2, 6), st.booleans(), st.sampled_from(["", "a", "s", "-x", "中"]))
@settings(max_examples=600, deadline=None)
def test_a_note_holding_the_phrase_is_never_ruled_out(words: list[str], other: list[str], start: int, n: int,
                                                      in_description: bool, glue: str) -> None:
    """Whatever the words, a query cut out of a field (its first and last word possibly cut
    short by glue around them) finds that field may hold the phrase."""
    held = " ".join(words)
    query = " ".join(words[start % len(words):][:n])
    if glue:
        held = glue + held + glue
    desc, body = (held, " ".join(other)) if in_description else (" ".join(other), held)
    d = search.Doc.stored("n.md", False, None, "n", desc, body, 3, 2)
    q = search.Query(query)
    if not q.terms or not q.use_phrase:
        return
    if q.phrase in desc.lower() or q.phrase in body.lower():
        assert q.could_phrase(search.term_counts(d, q.terms)), (query, desc, body)


def test_the_inner_words_rule_out_notes_and_the_edges_do_not() -> None:
    q = search.Query("run all tests before claiming fixed")
    assert [q.terms[i] for i in q.inner] == ["all", "test", "before", "claim"]
    assert search.Query("two words").inner == []  # no inner word: nothing is ruled out
    half = search.Doc.stored("n.md", False, None, "n", "run all tests", "before claiming fixed", 3, 2)
    assert not q.could_phrase(search.term_counts(half, q.terms))  # split across fields: no phrase there
    edge = search.Doc.stored("n.md", False, None, "n", "rerun all tests before claiming fixedly", "", 3, 2)
    assert q.could_phrase(search.term_counts(edge, q.terms))  # the edge words may be cut short
    assert q.phrase in edge.description.lower()


@pytest.fixture(scope="module")
def fixture_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("searchfast") / "mem"
    fx.write(root, distractors=700)
    assert searchindex.build(str(root))
    return root


def test_the_phrase_bonus_reads_only_notes_that_can_hold_the_phrase(fixture_store: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    query = "run all tests before claiming fixed"
    docs = search.load(str(fixture_store))
    want = [(h.doc.rel, h.score, h.line, h.snippet) for h in reference_rank.rank(docs, query, None, 5)]
    read: list[str] = []
    real = searchanswer.read_note

    def counting(where: str) -> object:
        read.append(where)
        return real(where)

    monkeypatch.setattr(searchrefresh, "RACY_NS", 0)
    monkeypatch.setattr(searchanswer, "read_note", counting)
    out = searchindex.lookup(str(fixture_store), search.Query(query), None, 5, True, None)
    assert out.hits is not None and not out.problem
    assert [(h.doc.rel, h.score, h.line, h.snippet) for h in out.hits] == want
    # the five hits and the few notes holding every inner term in one field; not the hundreds
    # whose score with the most bonus could still reach the top five
    assert len(read) <= 12, len(read)
