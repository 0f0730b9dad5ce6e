"""The cache in the store's .engramory/: a second run asks git nothing but HEAD, and whatever
changed since (an uncommitted rename, a new untracked file, an edited note, an edit of a file
a verdict read, a commit) is seen on the next run. It never outranks the files."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import verify_fixture as fx

from engramory.verify import cache, run


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> fx.Fixture:
    return fx.build(tmp_path_factory.mktemp("built"), notes=40, comps=8)


@pytest.fixture
def small(built: fx.Fixture, tmp_path: Path) -> fx.Fixture:
    """A copy of the built fixture for one test (building it takes a second of git)."""
    shutil.copytree(built.repo, tmp_path / "repo", symlinks=True)
    shutil.copytree(built.store, tmp_path / "mem", symlinks=True)
    return built._replace(repo=tmp_path / "repo", store=tmp_path / "mem")


def verdicts(result: run.Result) -> dict[tuple[str, int, str], str]:
    return {(i.note, i.line, i.text): i.verdict for i in result.items}


def note_naming(store: Path, text: str) -> str:
    (store / "probe.md").write_text(
        "---\nname: probe\ndescription: a probe note\ntype: project\ncreated: 2026-01-01\nupdated: 2026-01-01\n---\n"
        "%s\n" % text, encoding="utf-8")
    return "probe.md"


def item(result: run.Result, note: str, text: str) -> run.Item:
    (found,) = [i for i in result.items if i.note == note and i.text == text]
    return found


def test_a_second_run_asks_git_only_for_head_and_gives_the_same_verdicts(small: fx.Fixture) -> None:
    first = run.verify(str(small.store), str(small.repo))
    assert first.calls.get("ls-files") == 1 and first.reused == 0
    second = run.verify(str(small.store), str(small.repo))
    assert second.calls == {"rev-parse": 1}
    assert second.reused == len(second.notes)
    assert verdicts(second) == verdicts(first)


def test_an_uncommitted_rename_is_seen_on_the_next_run(small: fx.Fixture) -> None:
    note = note_naming(small.store, "The config is `config/billing.yaml`.")
    assert item(run.verify(str(small.store), str(small.repo)), note, "config/billing.yaml").verdict == "fresh"
    os.rename(small.repo / "config" / "billing.yaml", small.repo / "config" / "billing-prod.yaml")
    again = run.verify(str(small.store), str(small.repo))
    assert item(again, note, "config/billing.yaml").verdict == "stale"
    assert again.calls.get("ls-files") == 1


def test_a_new_untracked_file_is_seen_on_the_next_run(small: fx.Fixture) -> None:
    note = note_naming(small.store, "Helpers live in `src/billing/helpers_new.py`, see also fresh_helper.py.")
    first = run.verify(str(small.store), str(small.repo))
    assert item(first, note, "fresh_helper.py").verdict == "stale"
    (small.repo / "src" / "billing" / "helpers_new.py").write_text("x = 1\n", encoding="utf-8")
    (small.repo / "tools" / "fresh_helper.py").write_text("x = 1\n", encoding="utf-8")
    again = run.verify(str(small.store), str(small.repo))
    assert item(again, note, "src/billing/helpers_new.py").verdict == "fresh"
    assert item(again, note, "fresh_helper.py").verdict == "fresh"


def test_an_edited_note_is_resolved_again_and_only_it(small: fx.Fixture) -> None:
    first = run.verify(str(small.store), str(small.repo))
    victim = small.store / first.notes[0].rel
    victim.write_text(victim.read_text(encoding="utf-8") + "Now also `make no-such-target`.\n", encoding="utf-8")
    again = run.verify(str(small.store), str(small.repo))
    assert again.reused == len(again.notes) - 1
    assert item(again, first.notes[0].rel, "make no-such-target").verdict == "stale"


def test_an_edit_in_place_of_a_file_a_verdict_read_is_seen(small: fx.Fixture) -> None:
    note = note_naming(small.store, "Deploy with `make deploy`.")
    assert item(run.verify(str(small.store), str(small.repo)), note, "make deploy").verdict == "fresh"
    makefile = small.repo / "Makefile"
    stat = makefile.stat()
    makefile.write_text(makefile.read_text(encoding="utf-8").replace("deploy:", "ship:").replace(" deploy", " ship"),
                        encoding="utf-8")
    os.utime(makefile, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert item(run.verify(str(small.store), str(small.repo)), note, "make deploy").verdict == "stale"


def test_a_commit_is_seen(small: fx.Fixture) -> None:
    note = note_naming(small.store, "Docs: `docs/auth.md`.")
    assert item(run.verify(str(small.store), str(small.repo)), note, "docs/auth.md").verdict == "fresh"
    fx.git(small.repo, "mv", "docs/auth.md", "docs/login.md")
    fx.git(small.repo, "commit", "-qm", "rename the auth page")
    moved = item(run.verify(str(small.store), str(small.repo)), note, "docs/auth.md")
    assert (moved.verdict, moved.candidate) == ("moved", "docs/login.md")


@pytest.mark.parametrize("junk", [b"", b"{not json", b"\xff\xfe", b'{"format": 1, "key": 3, "notes": []}',
                                  b'{"format": 1, "notes": {"x.md": {"sha": 1, "items": [[1]]}}}'])
def test_a_broken_cache_is_ignored_and_rewritten(small: fx.Fixture, junk: bytes) -> None:
    expected = verdicts(run.verify(str(small.store), str(small.repo), use_cache=False))
    (small.store / cache.DIR).mkdir(exist_ok=True)
    (small.store / cache.DIR / cache.CACHE).write_bytes(junk)
    assert verdicts(run.verify(str(small.store), str(small.repo))) == expected
    assert cache.load(str(small.store)) is not None


def test_a_run_writes_nothing_but_its_cache(small: fx.Fixture) -> None:
    def snapshot() -> dict[str, bytes]:
        return {str(p.relative_to(small.store)): p.read_bytes() for p in small.store.rglob("*")
                if p.is_file() and cache.DIR not in p.parts}

    before, status = snapshot(), fx.git(small.repo, "status", "--porcelain", "--ignored")
    run.verify(str(small.store), str(small.repo))
    assert snapshot() == before
    assert sorted(p.name for p in (small.store / cache.DIR).iterdir()) == [cache.CACHE, cache.NOTICE]
    assert fx.git(small.repo, "status", "--porcelain", "--ignored") == status
