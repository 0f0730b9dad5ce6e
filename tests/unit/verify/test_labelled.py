"""The labelled fixture (tests/verify_fixture.py: real git, 300 notes): recall of the broken
anchors, precision on the correct ones, nothing flagged on prose, and no file that exists on
disk (tracked, untracked, ignored, extensionless) ever reported stale."""

from __future__ import annotations

import os

import pytest
import verify_fixture as fx

from engramory.verify import run


@pytest.fixture(scope="module")
def fixture(tmp_path_factory: pytest.TempPathFactory) -> fx.Fixture:
    return fx.build(tmp_path_factory.mktemp("verify"), notes=300)


@pytest.fixture(scope="module")
def result(fixture: fx.Fixture) -> run.Result:
    return run.verify(str(fixture.store), str(fixture.repo), use_cache=False)


def _by_key(result: run.Result) -> dict[tuple[str, int, str], run.Item]:
    return {(i.note, i.line, i.text): i for i in result.items}


def test_the_fixture_is_big_enough(fixture: fx.Fixture) -> None:
    notes = {label.note for label in fixture.labels}
    broken = [label for label in fixture.labels if label.verdict in ("stale", "moved")]
    assert len(notes) == 300
    assert len(broken) >= 150 and sum(1 for b in broken if b.bare) >= 10
    assert {label.kind for label in broken} == {"path", "line", "symbol", "package", "command", "commit"}


def test_recall_of_broken_anchors_is_at_least_95_percent(fixture: fx.Fixture, result: run.Result) -> None:
    got = _by_key(result)
    broken = [label for label in fixture.labels if label.verdict in ("stale", "moved")]
    found = [b for b in broken if got.get((b.note, b.line, b.text)) is not None
             and got[(b.note, b.line, b.text)].verdict in ("stale", "moved")]
    assert len(found) / len(broken) >= 0.95, sorted(set(broken) - set(found))[:10]
    bare = [b for b in broken if b.bare]
    assert len([b for b in found if b.bare]) / len(bare) >= 0.95


def test_moved_anchors_name_where_they_went(fixture: fx.Fixture, result: run.Result) -> None:
    got = _by_key(result)
    moved = [label for label in fixture.labels if label.verdict == "moved"]
    right = [m for m in moved if getattr(got.get((m.note, m.line, m.text)), "candidate", None) == m.candidate]
    assert len(right) / len(moved) >= 0.95, [m for m in moved if m not in right][:5]


def test_precision_is_at_least_99_percent_and_nothing_on_prose(fixture: fx.Fixture, result: run.Result) -> None:
    labels = {(label.note, label.line, label.text): label for label in fixture.labels}
    correct = [label for label in fixture.labels if label.verdict in ("fresh", "unverifiable")]
    flagged = [i for i in result.items if i.verdict in ("stale", "moved")]
    on_prose = [i.line_text() for i in flagged if (i.note, i.line, i.text) not in labels]
    false = [i.line_text() for i in flagged if (i.note, i.line, i.text) in labels
             and labels[(i.note, i.line, i.text)].verdict in ("fresh", "unverifiable")]
    assert on_prose == []
    assert len(false) <= len(correct) / 100, false[:10]


def test_no_file_on_disk_is_ever_reported_stale(fixture: fx.Fixture, result: run.Result) -> None:
    on_disk: set[str] = set()
    for folder, dirs, files in os.walk(fixture.repo):
        dirs[:] = [d for d in dirs if d != ".git"]
        rel = os.path.relpath(folder, fixture.repo)
        on_disk.update(os.path.normpath(os.path.join(rel, f)) for f in files)
    stale = [i for i in result.items if i.verdict == "stale" and i.kind == "path" and i.form != "url"]
    assert stale
    for item in stale:
        path = item.path.rstrip("/")
        named = [p for p in on_disk if p == path or p.endswith("/" + path)]
        assert not named, "%s reported stale, but %s exists" % (item.line_text(), named)


def test_each_kind_of_existing_file_is_fresh(fixture: fx.Fixture, result: run.Result) -> None:
    seen = {i.text: i for i in result.items if i.note == "note-every-kind-of-file.md"}
    assert sorted(seen) == sorted({entry[2] for entry in fx.EXISTING} | {"LICENSE"})
    assert {t: i.verdict for t, i in seen.items()} == {t: "fresh" for t in seen}, [i.line_text() for i in seen.values()]


def test_one_run_asks_git_once_per_kind_of_question(result: run.Result) -> None:
    assert result.calls.get("ls-files") == 1
    assert result.calls.get("grep", 0) <= 50
    assert result.calls.get("log", 0) <= 1 and result.calls.get("cat-file", 0) <= 1


def test_the_rename_reason_names_the_commit(fixture: fx.Fixture, result: run.Result) -> None:
    lines = [i.line_text() for i in result.items if i.verdict == "moved" and i.kind == "path"
             and i.text.startswith("scripts/") and i.text.endswith("_deploy.sh")]
    assert any(line.endswith(": ops/billing_deploy.sh (renamed in %s)" % fixture.commits["second"]) for line in lines), lines
