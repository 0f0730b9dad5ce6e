"""The search index of issue 21 (engramory.curate.searchindex): the same hits, order, scores and
snippets as the scan (held to the pre-index ranking kept in reference_rank.py), on the labelled
fixture and on generated stores, with and without `sqlite3`; never trusted over the files
(edits by hand, in place or by rename, deletes, adds between two searches); a damaged index
rebuilt with one line on stderr; searchers and a writer at once in real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest
import search_fixture as fx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engramory import cli
from engramory.curate import search, searchanswer, searchindex
from engramory.store import metadir
from tests.conftest import ROOT
from tests.unit.curate import reference_rank

Result = List[Tuple[str, float, int, str, Dict[str, object]]]


def reference(root: Path, query: str, type_: Optional[str] = None, limit: int = 10, archive: bool = True) -> Result:
    docs = search.load(str(root), archive)
    return as_result(reference_rank.rank(docs, query, type_, limit))


def as_result(hits: List[search.Hit]) -> Result:
    return [(h.doc.rel, h.score, h.line, h.snippet, h.as_dict(1)) for h in hits]


def indexed(root: Path, query: str, type_: Optional[str] = None, limit: int = 10, archive: bool = True) -> Result:
    """The index's answer; fails if it was not the index that answered, or if it said anything."""
    q = search.Query(query)
    out = searchindex.lookup(str(root), q, type_, limit, archive, None)
    assert out.problem == "" and out.hits is not None and not out.rebuild, (out.problem, out.rebuild)
    return as_result(out.hits)


def wait_for_build(root: Path) -> None:
    deadline = time.monotonic() + 120
    while metadir.held(str(root), metadir.SEARCH_LOCK) and time.monotonic() < deadline:
        time.sleep(0.05)


def note(root: Path, rel: str, type_: str, desc: str, body: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(fx.note_text(path.stem, type_, desc, body), encoding="utf-8")
    return path


def run_cli(*args: str, hide_sqlite: bool = False) -> subprocess.CompletedProcess[str]:
    """`engramory ...` in a fresh `python -I -S`, as the bundle runs; `hide_sqlite` makes
    `import sqlite3` fail there for real (sys.modules entry None)."""
    code = ("import sys; %ssys.path.insert(0, sys.argv[1]); from engramory import cli; "
            "raise SystemExit(cli.main(sys.argv[2:]))" % ("sys.modules['sqlite3'] = None; " if hide_sqlite else ""))
    return subprocess.run([sys.executable, "-I", "-S", "-c", code, str(ROOT), *args], capture_output=True,
                          text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def fixture_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("searchindex") / "mem"
    fx.write(root)
    assert searchindex.build(str(root))
    return root


# --- the same results as the scan -----------------------------------------------------------------------

@pytest.mark.parametrize("wide_min", [searchanswer.WIDE_MIN, 1])  # 1: every query's widest term kept apart (Solo)
def test_labelled_fixture_same_hits_scores_snippets_as_the_reference(fixture_store: Path, wide_min: int,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(searchanswer, "WIDE_MIN", wide_min)
    queries = [q for q, _ in fx.queries()] + ["the", "how to", "cut-off", "cutoff", "deploy billing", "x", ""]
    compared = 0
    for q in queries:
        for type_ in (None, "reference", "feedback", "nonesuch"):
            for limit, archive in ((10, True), (3, False), (50, True)):
                want = reference(fixture_store, q, type_, limit, archive)
                assert indexed(fixture_store, q, type_, limit, archive) == want, (q, type_, limit, archive)
                compared += bool(want)
    assert compared > 400  # the comparison is not vacuous


def test_the_scan_itself_still_ranks_as_the_reference(fixture_store: Path) -> None:
    docs = search.load(str(fixture_store))
    for q, _ in fx.queries():
        for type_ in (None, "project"):
            assert as_result(search.rank(docs, q, type_)) == as_result(reference_rank.rank(docs, q, type_)), q


WORDS = ["deploy", "deploys", "deploying", "cut-off", "cutoff", "cut", "off", "foo.test.ts:42", "test", "tests",
         "Redis", "redis", "cities", "city", "部署", "部署流程", "デプロイ", "日志", "İstanbul", "ΣΑΣ", "the", "how",
         "to", "a", "x", "ECONNREFUSED", "127.0.0.1:6379", "Gateway", "gate-way", "é", "ö"]
TEXT = st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join)


@st.composite
def stores(draw: st.DrawFn) -> List[Tuple[str, str, str, str]]:
    n = draw(st.integers(1, 12))
    names = draw(st.lists(st.sampled_from(["a", "b", "c-d", "e.f", "archive/g", "archive/h", "deploy", "tests",
                                           "İ", "部署", "x-y-z", "archive/deploy"]), min_size=n, max_size=n,
                          unique=True))
    return [(rel + ".md", draw(st.sampled_from(["user", "feedback", "project", "reference", "odd"])), draw(TEXT),
             draw(TEXT)) for rel in names]


def write_store(root: Path, notes: List[Tuple[str, str, str, str]]) -> None:
    for rel, type_, desc, body in notes:
        note(root, rel, type_, desc, body)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stores(), stores(), st.lists(TEXT, min_size=1, max_size=4), st.sampled_from([None, "user", "odd"]),
       st.sampled_from([searchanswer.WIDE_MIN, 1]))
def test_generated_stores_and_edits_same_as_the_reference(
        first: List[Tuple[str, str, str, str]], second: List[Tuple[str, str, str, str]], queries: List[str],
        type_: Optional[str], wide_min: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        mp.setattr(searchanswer, "WIDE_MIN", wide_min)
        root = Path(tmp)
        write_store(root, first)
        assert searchindex.build(str(root))
        for q in queries:
            assert indexed(root, q, type_) == reference(root, q, type_), q
        # the second store replaces the first between two searches: kept, edited, gone, new notes
        for path in list(root.rglob("*.md")):
            if path.relative_to(root).as_posix() not in {rel for rel, *_ in second}:
                path.unlink()
        write_store(root, second)
        for q in queries:
            assert indexed(root, q, type_) == reference(root, q, type_), q
            assert indexed(root, q, None, 3, False) == reference(root, q, None, 3, False), q


# --- never trusted over the files --------------------------------------------------------------------------

def hits_of(root: Path, query: str) -> List[str]:
    return [rel for rel, *_ in indexed(root, query)]


def test_edits_deletes_adds_by_hand_are_seen_on_the_next_search(tmp_path: Path) -> None:
    a = note(tmp_path, "a.md", "reference", "Kibana saved searches", "Nothing else.")
    b = note(tmp_path, "b.md", "reference", "Grafana boards", "Kibana once.")
    assert searchindex.build(str(tmp_path))
    assert hits_of(tmp_path, "kibana") == ["a.md", "b.md"]
    # in place, same size, mtime put back: only ctime tells (a tool restoring times, `cp -p`, rsync -t)
    st_a = a.stat()
    text = a.read_text()
    with open(a, "r+", encoding="utf-8") as f:
        f.write(text.replace("Kibana saved", "Zipkin saved"))
    os.utime(a, ns=(st_a.st_atime_ns, st_a.st_mtime_ns))
    assert a.stat().st_size == st_a.st_size and a.stat().st_mtime_ns == st_a.st_mtime_ns
    assert hits_of(tmp_path, "kibana") == ["b.md"]
    assert hits_of(tmp_path, "zipkin") == ["a.md"]
    # as `git pull` writes: a new file renamed over the old one (new inode)
    tmp = tmp_path / ".b.md.tmp"
    tmp.write_text(fx.note_text("b", "reference", "Grafana boards", "Now about jaeger."), encoding="utf-8")
    os.replace(tmp, b)
    assert hits_of(tmp_path, "kibana") == []
    assert hits_of(tmp_path, "jaeger") == ["b.md"]
    a.unlink()
    assert hits_of(tmp_path, "zipkin") == []
    note(tmp_path, "archive/c.md", "project", "Zipkin tracing retired", "Old.")
    note(tmp_path, "d.md", "project", "Zipkin replaced", "New.")
    assert hits_of(tmp_path, "zipkin") == ["d.md", "archive/c.md"]
    assert indexed(tmp_path, "zipkin") == reference(tmp_path, "zipkin")


def test_a_note_added_alone_joins_the_postings_of_its_terms(tmp_path: Path) -> None:
    note(tmp_path, "a.md", "reference", "Kibana saved searches", "Old.")
    assert searchindex.build(str(tmp_path))
    note(tmp_path, "b.md", "reference", "Kibana dashboards", "New.")  # nothing changed or gone: only added
    assert sorted(hits_of(tmp_path, "kibana")) == ["a.md", "b.md"]
    assert indexed(tmp_path, "kibana saved") == reference(tmp_path, "kibana saved")


def test_an_edit_in_the_same_clock_tick_is_not_missed(tmp_path: Path) -> None:
    """Same size, same mtime and ctime as when the index read it (a coarse clock): the note
    was read within RACY_NS of its change, so the next search reads it again."""
    a = note(tmp_path, "a.md", "user", "Prefers tabs", "Alpha.")
    assert searchindex.build(str(tmp_path))
    st_a = a.stat()
    a.write_text(a.read_text().replace("Alpha", "Omega"), encoding="utf-8")
    os.utime(a, ns=(st_a.st_atime_ns, st_a.st_mtime_ns))
    assert hits_of(tmp_path, "omega") == ["a.md"]
    assert hits_of(tmp_path, "alpha") == []


def test_the_cli_json_and_text_match_no_index_and_the_index_is_private(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    note(tmp_path, "live.md", "reference", "Grafana staging board", "line one\nThe grafana board is here.\n")
    note(tmp_path, "archive/old.md", "project", "Old grafana migration", "grafana was migrated")
    outs = []
    for extra in (["--no-index"], [], [], ["--type", "project"], ["--type", "project", "--no-index"]):
        assert cli.main(["search", "grafana", str(tmp_path), "--json", *extra]) == 0
        got = capsys.readouterr()
        assert got.err == ""
        outs.append(json.loads(got.out))
    assert outs[0] == outs[1] == outs[2] and outs[3] == outs[4] != outs[0]
    index = tmp_path / metadir.DIR / metadir.SEARCH_INDEX
    assert index.is_file() and index.stat().st_mode & 0o077 == 0
    with pytest.raises(SystemExit) as exc:
        cli.main(["search", "--help"])
    assert exc.value.code == 0 and "--no-index" in capsys.readouterr().out


# --- without sqlite3 ------------------------------------------------------------------------------------------

def test_without_sqlite3_the_scan_answers_the_same(fixture_store: Path, tmp_path: Path) -> None:
    store = tmp_path / "mem"
    fx.write(store, distractors=30)
    for q in ("how to invalidate the CI cache", "部署流程", "connect ECONNREFUSED 127.0.0.1:6379", "grafana"):
        with_index = run_cli("search", q, str(store), "--json")
        hidden = run_cli("search", q, str(store), "--json", hide_sqlite=True)
        assert with_index.returncode == hidden.returncode == 0, (with_index.stderr, hidden.stderr)
        assert hidden.stdout == with_index.stdout and hidden.stderr == with_index.stderr == ""
    assert (store / metadir.DIR / metadir.SEARCH_INDEX).is_file()  # made by the runs that had sqlite3
    bare = tmp_path / "bare"
    fx.write(bare, distractors=30)
    got = run_cli("search", "grafana staging", str(bare), hide_sqlite=True)
    assert got.returncode == 0 and got.stderr == "" and "staging-dashboard.md" in got.stdout
    assert not (bare / metadir.DIR / metadir.SEARCH_INDEX).exists()  # proves the module was hidden
    probe = subprocess.run([sys.executable, "-I", "-S", "-c", "import sys; sys.modules['sqlite3'] = None; "
                            "sys.path.insert(0, sys.argv[1]); from engramory.curate import searchindex; "
                            "print(searchindex.sqlite3)", str(ROOT)], capture_output=True, text=True, check=True)
    assert probe.stdout.strip() == "None"


# --- a damaged index ---------------------------------------------------------------------------------------------

def damage_garbage(p: Path) -> None:
    p.write_bytes(b"this is not an index\n" * 100)


def damage_truncate(p: Path) -> None:
    with open(p, "r+b") as f:
        f.truncate(p.stat().st_size // 3)


def damage_zero_middle(p: Path) -> None:
    size = p.stat().st_size
    with open(p, "r+b") as f:
        f.seek(size // 4)
        f.write(b"\0" * (size // 2))


def damage_blob_bytes(p: Path) -> None:
    """Flip bytes inside the records, past SQLite's header: our checksums' part."""
    data = bytearray(p.read_bytes())
    for i in range(200, len(data), 97):
        data[i] ^= 0x5A
    p.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", [damage_garbage, damage_truncate, damage_zero_middle, damage_blob_bytes])
def test_a_damaged_index_is_rebuilt_with_one_line_never_a_traceback(tmp_path: Path, damage: object) -> None:
    store = tmp_path / "mem"
    fx.write(store, distractors=60)
    assert searchindex.build(str(store))
    want = run_cli("search", "grafana staging errors", str(store), "--no-index", "--json")
    index = store / metadir.DIR / metadir.SEARCH_INDEX
    damage(index)  # type: ignore[operator]
    got = run_cli("search", "grafana staging errors", str(store), "--json")
    assert got.returncode == want.returncode == 0
    assert got.stdout == want.stdout
    assert "Traceback" not in got.stderr and got.stderr.count("\n") <= 1
    if got.stderr:
        assert got.stderr.startswith("engramory search: the search index ") and "built again" in got.stderr
    again = run_cli("search", "grafana staging errors", str(store), "--json")
    assert again.stdout == want.stdout and again.stderr == ""
    wait_for_build(store)
    assert indexed(store, "grafana staging errors") == reference(store, "grafana staging errors")


def test_garbage_and_truncation_say_so(tmp_path: Path) -> None:
    store = tmp_path / "mem"
    fx.write(store, distractors=60)
    for damage in (damage_garbage, damage_truncate):
        wait_for_build(store)
        assert searchindex.build(str(store))
        damage(store / metadir.DIR / metadir.SEARCH_INDEX)
        got = run_cli("search", "grafana", str(store))
        assert got.returncode == 0 and got.stderr.count("\n") == 1 and "could not be read" in got.stderr, got.stderr


def test_something_else_at_the_index_path_is_reported_not_removed(tmp_path: Path) -> None:
    note(tmp_path, "a.md", "user", "Prefers tea", "Green.")
    (tmp_path / metadir.DIR / metadir.SEARCH_INDEX).mkdir(parents=True)
    got = run_cli("search", "tea", str(tmp_path))
    assert got.returncode == 0 and "a.md" in got.stdout
    assert got.stderr.count("\n") == 1 and "not a regular file" in got.stderr
    assert (tmp_path / metadir.DIR / metadir.SEARCH_INDEX).is_dir()


# --- a large store: built by a detached process ----------------------------------------------------------------

def test_a_large_store_is_scanned_while_a_detached_process_builds(tmp_path: Path) -> None:
    store = tmp_path / "mem"
    fx.write(store, distractors=searchindex.INLINE_MAX + 10)
    want = run_cli("search", "kafka version bump", str(store), "--no-index")
    got = run_cli("search", "kafka version bump", str(store))
    assert got.stdout == want.stdout and got.stderr == ""
    wait_for_build(store)
    assert (store / metadir.DIR / metadir.SEARCH_INDEX).is_file()
    assert indexed(store, "kafka version bump") == reference(store, "kafka version bump")
    assert not [p for p in (store / metadir.DIR).iterdir() if metadir.TMP_MARK in p.name]


# --- searchers and a writer at once -------------------------------------------------------------------------------

SEARCHER = """
import json, sys
sys.path.insert(0, sys.argv[1])
from engramory.curate import searchindex
root, rounds = sys.argv[2], int(sys.argv[3])
for _ in range(rounds):
    hits = searchindex.search(root, "quartz", limit=100)
    print(json.dumps(sorted(h.doc.rel for h in hits)))
"""

WRITER = """
import os, sys, time
root, rounds = sys.argv[1], int(sys.argv[2])
for i in range(rounds):
    with open(os.path.join(root, "w-%03d.md" % i), "w") as f:
        f.write("---\\nname: w-%03d\\ndescription: quartz crystal number %d\\ntype: user\\n---\\nquartz.\\n" % (i, i))
    if i % 3 == 2:
        os.unlink(os.path.join(root, "w-%03d.md" % (i - 2)))
    time.sleep(0.005)
"""


def test_two_searchers_and_a_writer_lose_nothing(tmp_path: Path) -> None:
    store = tmp_path / "mem"
    fx.write(store, distractors=60)
    assert searchindex.build(str(store))
    rounds = 60
    searchers = [subprocess.Popen([sys.executable, "-I", "-S", "-c", SEARCHER, str(ROOT), str(store), str(rounds)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    writer = subprocess.run([sys.executable, "-I", "-S", "-c", WRITER, str(store), str(rounds)], capture_output=True,
                            text=True, timeout=120, check=False)
    assert writer.returncode == 0, writer.stderr
    written = {"w-%03d.md" % i for i in range(rounds)}
    for p in searchers:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0 and err == "", err
        seen = [json.loads(line) for line in out.splitlines()]
        assert len(seen) == rounds and all(set(s) <= written for s in seen)
    final = sorted(rel for rel, *_ in indexed(store, "quartz", limit=100))
    assert final == sorted(p.name for p in store.glob("w-*.md")) and len(final) == rounds - rounds // 3
    assert indexed(store, "quartz crystal", limit=100) == reference(store, "quartz crystal", limit=100)


# --- the store around it ------------------------------------------------------------------------------------------

def test_doctor_does_not_take_the_index_for_a_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    note(tmp_path, "a.md", "user", "The user prefers green tea with breakfast", "Green tea.")
    (tmp_path / "MEMORY.md").write_text("# Memory Index\n\n- [Tea](a.md) - green tea with breakfast\n")
    cli.main(["doctor", str(tmp_path), "--json"])
    before = capsys.readouterr().out
    assert cli.main(["search", "tea", str(tmp_path)]) == 0
    capsys.readouterr()
    assert (tmp_path / metadir.DIR / metadir.SEARCH_INDEX).is_file()
    cli.main(["doctor", str(tmp_path), "--json"])
    assert capsys.readouterr().out == before
    metadir.check(str(tmp_path))  # a regular file where engramory keeps its index: not damage


def test_a_note_past_read_max_is_reported_as_the_scan_reports_it(tmp_path: Path) -> None:
    note(tmp_path, "big.md", "reference", "A long kibana note", "kibana line\n" * (search.READ_MAX // 10))
    note(tmp_path, "archive/old.md", "reference", "Kibana archived", "Old.")
    want: List[Tuple[str, int]] = []
    scanned = as_result(search.search(str(tmp_path), "kibana", cut=want))
    assert searchindex.build(str(tmp_path))
    got: List[Tuple[str, int]] = []
    q = search.Query("kibana")
    out = searchindex.lookup(str(tmp_path), q, None, 10, True, got)
    assert out.hits is not None and as_result(out.hits) == scanned
    assert got == want and len(want) == 1 and want[0][0].endswith("big.md")


# --- what the index holds: no note text, no file name, no secret -------------------------------------------

def index_bytes(root: Path) -> bytes:
    meta = root / ".engramory"
    return b"".join(p.read_bytes() for p in sorted(meta.rglob("*")) if p.is_file() and not
                    p.relative_to(meta).as_posix().startswith("blobs/"))


def test_the_index_keeps_no_note_text_no_file_name_and_no_secret(tmp_path: Path) -> None:
    from tests.store_model import LEAKS, SECRET_TEXT

    note(tmp_path, "zanzibar-quokka.md", "reference", "Where the marmalade vault lives", "Bodyword xylophone.")
    note(tmp_path, "archive/old-quokka.md", "project", "Archived pangolin notes", "Bodyword sassafras.")
    note(tmp_path, "deploy-keys.md", "reference", "deploy credentials for quokka",
         "The quokka deploy uses %s here." % SECRET_TEXT["aws"])
    assert searchindex.build(str(tmp_path))
    for q in ("quokka", "marmalade vault", "deploy credentials", "xylophone", "aws key"):
        assert indexed(tmp_path, q) == reference(tmp_path, q), q
    assert [h[0] for h in indexed(tmp_path, "aws key")] == ["deploy-keys.md"]  # the flagged note, from its file
    data = index_bytes(tmp_path).lower()
    assert data  # the index is there
    for word in ("zanzibar", "quokka", "marmalade", "xylophone", "pangolin", "sassafras", "bodyword",
                 "deploy-keys", "credentials", "reference", "project"):
        assert word.encode() not in data, word
    for leak in LEAKS.values():
        assert leak.lower().encode() not in data


def test_a_note_the_secret_scan_flags_gets_no_postings(tmp_path: Path) -> None:
    from tests.store_model import SECRET_TEXT

    note(tmp_path, "a.md", "reference", "plain note", "nothing here")
    note(tmp_path, "b.md", "reference", "keys note", "token and %s" % SECRET_TEXT["github"])
    assert searchindex.build(str(tmp_path))
    import sqlite3

    with sqlite3.connect(str(searchindex.path(str(tmp_path)))) as conn:
        rows = conn.execute("SELECT id, length(terms) FROM notes ORDER BY id").fetchall()
    assert sorted(n for _, n in rows) == [0, rows[0][1] or rows[1][1]] and max(n for _, n in rows) > 0
    assert indexed(tmp_path, "keys token") == reference(tmp_path, "keys token")
    assert [h[0] for h in indexed(tmp_path, "keys token")] == ["b.md"]


def test_notes_whose_bytes_are_not_their_stored_hash_are_indexed_again_not_rebuilt(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3

    from engramory.curate import searchrefresh

    monkeypatch.setattr(searchrefresh, "RACY_NS", 0)  # no note due a second read: the stored hash is all

    note(tmp_path, "a.md", "reference", "quokka habits", "quokka body")
    note(tmp_path, "b.md", "reference", "other", "quokka too")
    assert searchindex.build(str(tmp_path))
    with sqlite3.connect(str(searchindex.path(str(tmp_path)))) as conn:
        conn.execute("UPDATE notes SET hash = ?", (b"\0" * 16,))  # as if both were edited unseen
    out = searchindex.lookup(str(tmp_path), search.Query("quokka"), None, 10, True, None)
    assert out.hits is not None and not out.rebuild and out.problem == "" and out.reread == 2
    assert as_result(out.hits) == reference(tmp_path, "quokka")
    assert indexed(tmp_path, "quokka") == reference(tmp_path, "quokka")  # and the hashes are right again
    with sqlite3.connect(str(searchindex.path(str(tmp_path)))) as conn:
        assert all(h != b"\0" * 16 for h, in conn.execute("SELECT hash FROM notes"))


def _forge_stamps(root: Path) -> None:
    """Make the index take the files as they are now for what it read: what a note changed
    under an unmoved stamp looks like (ctime cannot be set back, so it is done on the index)."""
    import sqlite3

    from engramory.curate import searchrecords, searchrefresh

    conn = sqlite3.connect(str(searchindex.path(str(root))), isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        st = searchrecords.load_state(conn, searchindex.fingerprint())
        for k, (names, stamps, _) in enumerate(searchrefresh.listing(str(root))):
            listed, _old, ids, hashed = st.stamps[k]
            assert listed == st.keyed.listing(names)  # the same names in the same order
            st.stamps[k] = (listed, stamps.tobytes(), ids, hashed)
        searchrecords.save_state(conn, st)
        conn.execute("COMMIT")
    finally:
        conn.close()


def test_a_note_changed_under_its_stamp_makes_every_note_read_again(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """One note found changed under an unmoved stamp shows the stamps do not vouch for this
    store: the others are hashed again too, so one the query's terms never led to is found."""
    from engramory.curate import searchrefresh

    monkeypatch.setattr(searchrefresh, "RACY_NS", 0)
    note(tmp_path, "a.md", "reference", "quokka habits", "quokka body")
    note(tmp_path, "b.md", "reference", "other", "quokka too")
    note(tmp_path, "c.md", "reference", "plain", "nothing here")
    for i in range(20):
        note(tmp_path, "n%02d.md" % i, "user", "filler %d" % i, "words")
    assert searchindex.build(str(tmp_path))
    note(tmp_path, "a.md", "reference", "habits", "a body")  # quokka gone: the index still lists it
    note(tmp_path, "c.md", "reference", "plain", "a quokka now")  # quokka new: no posting leads here
    _forge_stamps(tmp_path)
    out = searchindex.lookup(str(tmp_path), search.Query("quokka"), None, 10, True, None)
    assert out.hits is not None and not out.rebuild and out.problem == ""
    assert out.reread == 2  # a.md and c.md indexed again; the 21 others read, hashed, kept
    assert as_result(out.hits) == reference(tmp_path, "quokka")
    assert sorted(h.doc.rel for h in out.hits) == ["b.md", "c.md"]
    assert indexed(tmp_path, "quokka") == reference(tmp_path, "quokka")


def test_notes_that_keep_changing_under_their_stamps_are_answered_by_the_scan(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from engramory.curate import searchanswer, searchrecords, searchrefresh

    monkeypatch.setattr(searchrefresh, "RACY_NS", 0)
    note(tmp_path, "a.md", "reference", "quokka habits", "quokka body")
    assert searchindex.build(str(tmp_path))

    def always_stale(self: object, did: int, digest: object) -> object:
        raise searchrecords.Stale("a.md")

    monkeypatch.setattr(searchanswer.Files, "_read", always_stale)
    out = searchindex.lookup(str(tmp_path), search.Query("quokka"), None, 10, True, None)
    assert out.hits is None and out.rebuild and out.problem == ""  # never the index's word over the file
