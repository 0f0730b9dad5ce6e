"""Every step of a run is bounded: 200 notes against a repository of thousands of files take
one ls-files and at most 50 git grep calls; words past the grep bound are unverifiable, not
stale; the disk walk and a git call that outlives the deadline stop the run cleanly. (Wall
time is the bench's: bench/bench_verify.py.)"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
import verify_fixture as fx

from engramory.verify import repo as repo_mod
from engramory.verify import run


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> fx.Fixture:
    built = fx.build(tmp_path_factory.mktemp("big"), notes=200)
    for i in range(3000):
        fx.write(built.repo / "vendor" / ("d%02d" % (i % 60)) / ("f%04d.py" % i), "def filler_%d():\n    pass\n" % i)
    fx.git(built.repo, "add", "-A")
    fx.git(built.repo, "commit", "-qm", "filler")
    return built


def test_200_notes_take_one_ls_files_and_few_greps(big: fx.Fixture) -> None:
    first = run.verify(str(big.store), str(big.repo))
    assert len(first.notes) == 200
    assert first.calls["ls-files"] == 1 and first.calls["grep"] <= 50
    assert all(first.calls.get(c, 0) <= 1 for c in ("log", "diff", "cat-file", "rev-parse"))
    second = run.verify(str(big.store), str(big.repo))
    assert second.calls == {"rev-parse": 1}


def test_words_past_the_grep_bound_are_unverifiable_not_stale(big: fx.Fixture, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(repo_mod, "GREP_PATTERNS", 2)
    monkeypatch.setattr(repo_mod, "GREP_CALLS", 3)
    store = tmp_path / "mem"
    store.mkdir()
    body = "\n".join("Call `missing_name_%02d()`." % i for i in range(10))
    (store / "many.md").write_text("---\nname: many\ndescription: d\ntype: project\ncreated: 2026-01-01\n"
                                   "updated: 2026-01-01\n---\n%s\n" % body, encoding="utf-8")
    result = run.verify(str(store), str(big.repo), use_cache=False)
    assert result.calls["grep"] == 3
    verdicts = [i.verdict for i in result.items]
    assert verdicts.count("stale") == 6 and verdicts.count("unverifiable") == 4
    assert {i.reason for i in result.items if i.verdict == "unverifiable"} == {"past the search bound of this run"}


def test_a_cut_disk_walk_makes_missing_names_unverifiable(big: fx.Fixture, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(repo_mod, "WALK_ENTRIES", 10)
    store = tmp_path / "mem"
    store.mkdir()
    (store / "n.md").write_text("---\nname: n\ndescription: d\ntype: project\ncreated: 2026-01-01\n"
                                "updated: 2026-01-01\n---\nSee nowhere_at_all.py and `scratch_auth.py`.\n", encoding="utf-8")
    result = run.verify(str(store), str(big.repo), use_cache=False)
    by_text = {i.text: i for i in result.items}
    assert by_text["scratch_auth.py"].verdict == "fresh"  # listed by git: no walk needed
    assert by_text["nowhere_at_all.py"].verdict == "unverifiable"
    assert "stopped" in by_text["nowhere_at_all.py"].reason


def test_the_deadline_stops_a_run(big: fx.Fixture, tmp_path: Path) -> None:
    store = tmp_path / "mem"
    shutil.copytree(big.store, store, ignore=shutil.ignore_patterns(".engramory"))
    with pytest.raises(repo_mod.Deadline):
        run.verify(str(store), str(big.repo), deadline=time.monotonic() - 1)
    assert not (store / ".engramory").exists()


def test_a_cut_grep_proves_nothing(big: fx.Fixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from engramory.verify import grep

    monkeypatch.setattr(grep, "GREP_OUTPUT", 1)
    store = tmp_path / "mem"
    store.mkdir()
    (store / "n.md").write_text("---\nname: n\ndescription: d\ntype: project\ncreated: 2026-01-01\n"
                                "updated: 2026-01-01\n---\nCall `render_auth_report()` and `no_such_function()`.\n",
                                encoding="utf-8")
    result = run.verify(str(store), str(big.repo), use_cache=False)
    assert {i.text: i.verdict for i in result.items} == {"render_auth_report()": "fresh", "no_such_function()": "unverifiable"}


def test_no_answer_from_cat_file_is_no_evidence(big: fx.Fixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(repo_mod.Repo, "objects", lambda self, ids: {})
    store = tmp_path / "mem"
    store.mkdir()
    (store / "n.md").write_text("---\nname: n\ndescription: d\ntype: project\ncreated: 2026-01-01\n"
                                "updated: 2026-01-01\n---\nCommit `%s` and `deadbee1`.\n" % big.commits["second"],
                                encoding="utf-8")
    result = run.verify(str(store), str(big.repo), use_cache=False)
    assert {i.verdict for i in result.items} == {"unverifiable"}
