"""`engramory verify --mark NOTE`: `verified:` written through the journal (updated: left
alone), undone byte for byte; line spans kept by hash, counted only while the mark stands;
an unknown or archived note is a usage error that writes nothing; nothing else marks."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import verify_fixture as fx

from engramory.commands import verify as command
from tests.conftest import ROOT


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ENGRAMORY_", "CLAUDE"))}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "engramory", *args], capture_output=True, text=True, env=env,
                          timeout=120, check=False)


@pytest.fixture
def case(tmp_path: Path) -> tuple[Path, Path, Path]:
    repo, store, _ = fx.tiny(tmp_path)
    path = fx.note(store, "app", "Settings start at `src/app.py:10-12`; deploy with `ops/deploy.py`.")
    fx.note(store, "other", "Nothing about code here.")
    return repo, store, path


def doc(repo: Path, store: Path) -> dict[str, dict[str, str]]:
    done = cli("verify", str(store), "--repo", str(repo), "--json")
    return {a["text"]: a for a in json.loads(done.stdout)["anchors"]}


def test_mark_writes_verified_only_and_undo_puts_the_bytes_back(case: tuple[Path, Path, Path]) -> None:
    repo, store, path = case
    before = {p.name: p.read_bytes() for p in store.iterdir() if p.is_file()}
    done = cli("verify", str(store), "--repo", str(repo), "--mark", "app")
    assert done.returncode == 0, done.stderr
    today = datetime.date.today().isoformat()
    assert done.stdout.splitlines()[0] == "marked app.md verified: %s (1 line span hashed)" % today
    after = path.read_text(encoding="utf-8")
    assert after == before["app.md"].decode().replace("updated: 2026-01-01\n", "updated: 2026-01-01\nverified: %s\n" % today)
    assert {p.name: p.read_bytes() for p in store.iterdir() if p.is_file() and p.name != "app.md"} == {
        k: v for k, v in before.items() if k != "app.md"}
    (entry,) = [json.loads(line) for line in (store / ".engramory" / "journal.jsonl").read_text().splitlines()]
    assert entry["command"] == "verify" and [c["path"] for c in entry["changes"]] == ["app.md"]
    undone = cli("undo", str(store))
    assert undone.returncode == 0, undone.stderr
    assert {p.name: p.read_bytes() for p in store.iterdir() if p.is_file()} == before


def test_mark_takes_the_file_name_too_and_the_root_after_the_names(case: tuple[Path, Path, Path]) -> None:
    repo, store, path = case
    done = cli("verify", "--repo", str(repo), "--mark", "app.md", "other", str(store) + "/")
    assert done.returncode == 0, done.stderr
    assert "verified: " in path.read_text(encoding="utf-8") and "verified: " in (store / "other.md").read_text()


def test_an_archived_note_is_a_usage_error(case: tuple[Path, Path, Path]) -> None:
    repo, store, path = case
    (store / "archive").mkdir()
    os.rename(path, store / "archive" / "app.md")
    done = cli("verify", str(store), "--repo", str(repo), "--mark", "app")
    assert done.returncode == 64 and "archived; restore it first" in done.stderr


def test_a_marked_span_is_followed_by_its_content(case: tuple[Path, Path, Path]) -> None:
    repo, store, _ = case
    assert cli("verify", str(store), "--repo", str(repo), "--mark", "app").returncode == 0
    app = repo / "src" / "app.py"
    lines = app.read_text(encoding="utf-8").splitlines(keepends=True)
    app.write_text("".join(lines[:2] + ["inserted = 0\n"] * 3 + lines[2:]), encoding="utf-8")
    moved = doc(repo, store)["src/app.py:10-12"]
    assert (moved["verdict"], moved["candidate"]) == ("moved", "src/app.py:13-15")
    assert "marked on" in moved["reason"]
    app.write_text("".join(lines[:9] + ["changed = 1\n"] + lines[10:]), encoding="utf-8")
    stale = doc(repo, store)["src/app.py:10-12"]
    assert stale["verdict"] == "stale" and "changed since marked on" in stale["reason"]
    assert cli("undo", str(store)).returncode == 0  # the mark is undone: its hashes no longer count
    assert doc(repo, store)["src/app.py:10-12"]["verdict"] == "fresh"


def test_reading_searching_and_verifying_never_mark(case: tuple[Path, Path, Path]) -> None:
    repo, store, path = case
    before = path.read_bytes()
    assert cli("search", "settings", str(store)).returncode in (0, 1)
    assert cli("verify", str(store), "--repo", str(repo)).returncode in (0, 1)
    assert path.read_bytes() == before
    assert not (store / ".engramory" / "journal.jsonl").exists()


def test_the_json_receipt(case: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str],
                          monkeypatch: pytest.MonkeyPatch) -> None:
    repo, store, _ = case
    monkeypatch.chdir(store)
    assert command.main([str(store), "--repo", str(repo), "--mark", "app", "--json"]) == 0
    receipt = json.loads(capsys.readouterr().out)
    assert receipt["ok"] is True and receipt["entry"] == 1
    assert receipt["marked"] == [{"note": "app.md", "verified": datetime.date.today().isoformat(), "spans": 1, "stale": 0}]
