"""The shortcuts of a fast `engramory search` (issue 21's warm latency), each held to what it
stands in for: the tokenizer's ASCII path for text whose only non-ASCII characters separate
words, and the phrase bonus asking only for the text of notes that can hold the phrase."""

from __future__ import annotations

from pathlib import Path

import pytest
import search_fixture as fx
from hypothesis import given, settings
from hypothesis import strategies as st

from engramory.curate import ranking, search, searchanswer, searchindex, searchrefresh
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
         "foo.test.ts:42", "tests/conftest.py", "a/b-c.d", "x:1", "the", "of", "部署流程", "デプロイ", "x", "bodies", "body", "—", "it's", "Fix", "ÉTÉ",
         "redis连接地址", "ネームスペース", "命名", "中", "配置a放在", "ﾃﾞﾌﾟﾛｲ", "배포", "部署-流程.md", "x部署y"]


@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12), st.lists(st.sampled_from(WORDS), max_size=8),
       st.integers(0, 11), st.integers(2, 6), st.booleans(), st.sampled_from(["", "a", "s", "-x", "中", "q.", "/", ".py", "é", "文档", "ｱ", "a中"]))
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
    one = search.Query("tests/conftest.py")
    assert [one.terms[i] for i in one.inner] == ["conftest"]  # a file name's inner parts
    assert search.Query("foo.test.ts:42 fails").inner == [2, 3, 4]  # test, ts, 42: all but its open end
    cjk = search.Query("Redis 连接地址")  # a CJK run at an open end: every bigram of it, not the edge's ASCII word
    assert [cjk.terms[i] for i in cjk.inner] == ["连接", "接地", "地址"]
    assert [t for i, t in enumerate(search.Query("部署流程").terms) if i in search.Query("部署流程").inner] == ["部署", "署流", "流程"]
    wider = search.Doc.stored("n.md", False, None, "n", "", "见中部署流程文档", 3, 2)  # the run is longer in the text
    assert search.Query("部署流程").could_phrase(search.term_counts(wider, search.Query("部署流程").terms))
    apart = search.Doc.stored("n.md", False, None, "n", "部署", "流程 署流", 3, 2)
    assert not search.Query("部署流程").could_phrase(search.term_counts(apart, search.Query("部署流程").terms))
    longer = search.Doc.stored("n.md", False, None, "n", "", "see mytests/conftest.pyc here", 3, 2)
    assert one.could_phrase(search.term_counts(longer, one.terms)) and one.phrase in longer.body
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


# --- the freshness check's listing ----------------------------------------------------------------------


def _odd_folder(root: Path) -> None:
    import os

    (root / "archive").mkdir(parents=True)
    for name in ("a.md", "B.MD", "c.Md", "notes.txt", ".hidden.md", "MEMORY.md", "archive/x.md", "archive/MEMORY.md"):
        (root / name).write_text("---\ndescription: d %s\n---\nbody\n" % name, encoding="utf-8")
    (root / "dir.md").mkdir()
    (root / "link.md").symlink_to(root / "a.md")
    (root / "dangling.md").symlink_to(root / "nowhere.md")
    os.mkfifo(str(root / "fifo.md"))


def test_the_listing_by_dir_fd_is_the_scandir_listing(tmp_path: Path) -> None:
    import os

    _odd_folder(tmp_path)
    assert searchrefresh._FAST  # this machine takes the fast path
    for folder, top in ((str(tmp_path), True), (str(tmp_path / "archive"), False)):
        with os.scandir(folder) as it:
            slow = searchrefresh._stamped(folder, list(it), top)
        fast = searchrefresh._listed(folder, top)
        assert fast is not None
        assert fast[0] == slow[0] and fast[1] == slow[1]
        assert [fast[2][j] for j in range(len(fast[2]))] == [slow[2][j] for j in range(len(slow[2]))]
    names = searchrefresh.listing(str(tmp_path))[0][0]
    assert sorted(names) == ["B.MD", "a.md", "c.Md"]
    gone = searchrefresh._listed(str(tmp_path / "missing"), True)
    assert gone is not None and gone[0] == [] and len(gone[1]) == 0


def test_a_note_gone_between_listing_and_lstat_falls_back_to_scandir(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    _odd_folder(tmp_path)
    real = os.stat

    def vanish(path: object, *args: object, **kwargs: object) -> os.stat_result:
        if path == "c.Md":
            raise FileNotFoundError(path)
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "stat", vanish)
    assert searchrefresh._FAST and searchrefresh._listed(str(tmp_path), True) is None
    assert sorted(searchrefresh.listing(str(tmp_path))[0][0]) == ["B.MD", "a.md", "c.Md"]  # scandir's answer


def test_an_edit_in_place_same_size_new_mtime_is_found_on_the_next_search(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    monkeypatch.setattr(searchrefresh, "RACY_NS", 0)
    for i in range(30):
        (tmp_path / ("n%02d.md" % i)).write_text("---\ndescription: note %d\ntype: user\n---\nplain words\n" % i)
    assert searchindex.build(str(tmp_path))
    assert [h.doc.rel for h in searchindex.search(str(tmp_path), "walrus")] == []
    path = tmp_path / "n07.md"
    before = path.stat()
    path.write_text("---\ndescription: note 7\ntype: user\n---\nwalrus word\n")  # same size
    assert path.stat().st_size == before.st_size and path.stat().st_ino == before.st_ino
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 10**9))
    out = searchindex.lookup(str(tmp_path), search.Query("walrus"), None, 10, True, None)
    assert out.hits is not None and [h.doc.rel for h in out.hits] == ["n07.md"] and out.reread == 1


# --- the phrase test by the raw text ---------------------------------------------------------------------

PIECES = ["a", "b", "ab", " ", "  ", "'", "''", '"', ":", " #", "#", "\u03a3", "\u0130", "\u212a", "K", "x y", "-", "\t",
          "\u00e9", "\u4e2d", "\r"]


@given(st.lists(st.sampled_from(PIECES), max_size=8), st.sampled_from(["plain", "single", "double"]),
       st.lists(st.sampled_from(PIECES + ["\n"]), max_size=8), st.integers(0, 40), st.integers(1, 8))
@settings(max_examples=1500, deadline=None)
def test_a_phrase_in_a_field_is_in_the_raw_text_without_backslashes(desc: list[str], style: str, body: list[str],
                                                                    start: int, n: int) -> None:
    """What Files.phrase_fields relies on to skip parsing a note's frontmatter."""
    value = "".join(desc)
    if style == "single":
        line = "'%s'" % value.replace("'", "''")
    elif style == "double":
        line = '"%s"' % value.replace('"', "")
    else:
        line = value
    text = "---\ndescription: %s\ntype: user\n---\n%s\n" % (line, "".join(body))
    d = search.Doc("n.md", False, text)
    for field in (d.description.lower(), d.body.lower()):
        phrase = " ".join(field[start:start + n].split())
        if len(phrase) >= 1 and phrase.isascii() and "'" not in phrase and "\\" not in text and phrase in field:
            assert phrase in text.lower(), (phrase, text)


def test_the_phrase_bonus_parses_only_notes_whose_text_holds_the_phrase(fixture_store: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    query = "Makefile check target"
    docs = search.load(str(fixture_store))
    want = [(h.doc.rel, h.score, h.line, h.snippet) for h in reference_rank.rank(docs, query, None, 5)]
    made: list[str] = []
    real = search.Doc.__init__

    def counting(self: search.Doc, rel: str, archived: bool, text: str) -> None:
        made.append(rel)
        real(self, rel, archived, text)

    monkeypatch.setattr(searchrefresh, "RACY_NS", 0)
    monkeypatch.setattr(search.Doc, "__init__", counting)
    out = searchindex.lookup(str(fixture_store), search.Query(query), None, 5, True, None)
    assert out.hits is not None and not out.problem
    assert [(h.doc.rel, h.score, h.line, h.snippet) for h in out.hits] == want
    assert len(made) <= 10, len(made)  # not the hundreds of notes whose body says "check"


# --- the ranking scores only the groups of candidates that can reach the top ----------------------------

COMMON = ["deploy", "check", "py", "services/auth/nginx_deploy.py", "the", "logs", "cdn_purge.py", "purge", "cdn",
          "deploy_token", "token", "make check target", "makefile", "target", "部署", "cdn_purge.pyc", "xdeploy_tokenizer",
          "targets", "remakefile"]


@given(st.lists(st.tuples(st.lists(st.sampled_from(COMMON), max_size=5), st.lists(st.sampled_from(COMMON), max_size=6),
                          st.booleans()), min_size=1, max_size=40),
       st.lists(st.sampled_from(COMMON), min_size=1, max_size=3), st.integers(0, 80), st.integers(1, 6))
@settings(max_examples=500, deadline=None)
def test_scoring_by_groups_ranks_as_scoring_every_candidate(notes: list[tuple[list[str], list[str], bool]],
                                                           query_words: list[str], cut: int, limit: int) -> None:
    """Many notes alike (equal scores, one common term everywhere, archived copies), queries
    made of their words or cut out of one of their fields (so the phrase bonus decides): the
    groups pruned by their bound never change the hits, their order or their scores."""
    docs = [search.Doc(("archive/" if archived else "") + "n%02d.md" % i, archived,
                       fx.note_text("n%02d" % i, "project", " ".join(desc) or "a note", " ".join(body)))
            for i, (desc, body, archived) in enumerate(notes)]
    desc, body, _ = notes[cut % len(notes)]
    field = (desc if cut % 2 else body) or query_words
    query = " ".join(field[cut % len(field):][:len(query_words) + 1]) if cut < 60 else " ".join(query_words)
    got = [(h.doc.rel, h.score, h.line, h.snippet) for h in search.rank(docs, query, None, limit)]
    assert got == [(h.doc.rel, h.score, h.line, h.snippet) for h in reference_rank.rank(docs, query, None, limit)]


def test_a_common_term_everywhere_names_only_the_notes_that_can_reach_the_top(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """`cdn_purge.py` over notes that all name some other `.py` file: the few notes holding cdn or
    purge are scored as a group first; of the hundreds holding only `py`, only the ones tied with
    the limit-th score get a path looked up, and the hits are the reference's."""
    root = tmp_path / "mem"
    fx.write(root, distractors=600)
    assert searchindex.build(str(root))
    query = "cdn_purge.py"
    docs = search.load(str(root))
    want = [(h.doc.rel, h.score, h.line, h.snippet) for h in reference_rank.rank(docs, query, None, 5)]
    named: list[int] = []
    real = searchanswer.Files.rels

    def counting(self: searchanswer.Files, ids: object) -> list[str]:
        got = real(self, ids)  # type: ignore[arg-type]
        named.append(len(got))
        return got

    monkeypatch.setattr(searchrefresh, "RACY_NS", 0)
    monkeypatch.setattr(searchanswer.Files, "rels", counting)
    out = searchindex.lookup(str(root), search.Query(query), None, 5, True, None)
    assert out.hits is not None and not out.problem
    assert [(h.doc.rel, h.score, h.line, h.snippet) for h in out.hits] == want
    holding_py = sum(1 for d in docs if "py" in search.tokens(d.body))
    assert holding_py > 400
    assert sum(named) < holding_py // 4, (named, holding_py)


@pytest.mark.parametrize("wide_min", [1, 10**9])
def test_a_common_terms_lone_notes_are_never_made_candidates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             wide_min: int) -> None:
    """The notes holding only `py` (hundreds) stay out of the candidates (searchanswer.Solo):
    only those that can reach the top of their group are made candidates, and the hits (ties by
    path among equal scores included) are the reference's, kept apart or not."""
    root = tmp_path / "mem"
    fx.write(root, distractors=600)
    assert searchindex.build(str(root))
    docs = search.load(str(root))
    made: list[int] = []
    real = ranking.score

    def counting(q: search.Query, count: int, sums: object, cands: list[object], *rest: object) -> object:
        solo = rest[-1] if len(rest) == 4 else None
        made.append(len(cands) + (len(solo.pick(1.0, [1.0, 1.0, 1.0], 5)) if solo is not None else 0))  # type: ignore[attr-defined]
        return real(q, count, sums, cands, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(searchrefresh, "RACY_NS", 0)
    monkeypatch.setattr(searchanswer, "WIDE_MIN", wide_min)
    monkeypatch.setattr(ranking, "score", counting)
    holding_py = sum(1 for d in docs if "py" in search.tokens(d.body))
    for query, limit in (("cdn_purge.py", 5), ("tests/conftest.py", 3), ("py", 10), ("where do I see staging errors", 5)):
        made.clear()
        want = [(h.doc.rel, h.score, h.line, h.snippet) for h in reference_rank.rank(docs, query, None, limit)]
        out = searchindex.lookup(str(root), search.Query(query), None, limit, True, None)
        assert out.hits is not None and not out.problem
        assert [(h.doc.rel, h.score, h.line, h.snippet) for h in out.hits] == want, query
        if wide_min == 1 and query != "where do I see staging errors":
            assert made and made[0] < holding_py // 4, (query, made, holding_py)


@given(st.floats(0.01, 20), st.tuples(*[st.integers(0, 40)] * 3), st.tuples(*[st.integers(0, 5000)] * 3),
       st.tuples(*[st.floats(0.5, 3000)] * 3))
@settings(max_examples=500, deadline=None)
def test_one_term_is_bm25_to_the_bit(w_idf: float, c: tuple[int, int, int], lengths: tuple[int, int, int],
                                     avg: tuple[float, float, float]) -> None:
    for place, n in ((0, 1), (2, 3)):
        tfs: list[tuple[int, int, int] | None] = [None] * n
        tfs[place] = c
        idf: list[float | None] = [None] * n
        idf[place] = w_idf
        assert ranking.one_term(w_idf, *c, *lengths, avg) == ranking._bm25(tfs, lengths, idf, avg)
