"""Issue 19, a loose end of items 1 and 2: under ENGRAMORY_INDEX_NAME (or an
ENGRAMORY_INDEX_PATH entry) the commands write an index of another name, and `review` must
watch that file as it watches MEMORY.md: a sync client's overwrite or an `rm` of it is
journaled, undo gives it back, and an engramory write over an unreviewed overwrite journals
that overwrite first. Through `python3 -m engramory` and `tools/engramory.py`, as subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENTRY_POINTS = {
    "module": [sys.executable, "-m", "engramory"],
    "tool": [sys.executable, "-I", "-S", str(ROOT / "tools" / "engramory.py")],
}
NAME = "INDEX.txt"  # not a .md name: the review's walk of notes does not find it by itself


class Cli:
    def __init__(self, prefix: list[str], tmp: Path, env: dict[str, str]) -> None:
        self.prefix, self.tmp = prefix, tmp
        self.env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp), "TMPDIR": str(tmp),
                    "PYTHONPATH": str(ROOT), "LANG": "C.UTF-8", **env}

    def __call__(self, *args: object, code: int = 0) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([*self.prefix, *map(str, args)], capture_output=True, text=True, env=self.env,
                              cwd=str(self.tmp), timeout=60, stdin=subprocess.DEVNULL)
        assert "Traceback" not in done.stderr, done.stderr
        assert done.returncode == code, (args, done.stdout, done.stderr)
        return done

    def new(self, store: Path, name: str, desc: str) -> None:
        self("new", store, "--type", "user", "--name", name, "--description", desc, "--body", "About " + desc)

    def review(self, store: Path) -> list[dict[str, object]]:
        rows: list[dict[str, object]] = json.loads(self("review", store, "--json", code=1).stdout)["entries"]
        return rows


def changes(rows: list[dict[str, object]]) -> list[object]:
    return [c for e in rows for c in e["changes"]]  # type: ignore[attr-defined]


def setups(store: Path) -> dict[str, dict[str, str]]:
    return {"name": {"ENGRAMORY_INDEX_NAME": NAME}, "path": {"ENGRAMORY_INDEX_PATH": str(store / NAME)}}


@pytest.mark.parametrize("how", ["name", "path"])
@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_review_journals_an_overwrite_and_a_deletion_of_an_index_of_another_name(
        tmp_path: Path, entry: str, how: str) -> None:
    store = tmp_path / "mem"
    store.mkdir()
    run = Cli(ENTRY_POINTS[entry], tmp_path, setups(store)[how])
    run.new(store, "alpha", "Alpha fact about the build cache")
    assert (store / NAME).is_file() and not (store / "MEMORY.md").exists()
    run("review", store)  # the baseline
    ours = (store / NAME).read_bytes()
    (store / NAME).write_bytes(b"# Memory Index\n\nrewritten by a sync client\n")
    rows = run.review(store)
    assert changes(rows) == [{"kind": "changed", "path": NAME}]
    run("undo", rows[0]["id"], store)
    assert (store / NAME).read_bytes() == ours
    (store / NAME).unlink()
    rows = run.review(store)
    assert changes(rows) == [{"kind": "deleted", "path": NAME}]
    run("undo", rows[0]["id"], store)
    assert (store / NAME).read_bytes() == ours


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_a_write_over_an_unreviewed_overwrite_of_that_index_journals_it_first(tmp_path: Path, entry: str) -> None:
    store = tmp_path / "mem"
    store.mkdir()
    run = Cli(ENTRY_POINTS[entry], tmp_path, {"ENGRAMORY_INDEX_NAME": NAME})
    (store / NAME).write_bytes(b"# Memory Index\n\n## user\n")
    run("review", store)
    start = {p.name: p.read_bytes() for p in store.iterdir() if p.is_file()}
    run.new(store, "alpha", "Alpha fact about the build cache")
    synced = (store / NAME).read_bytes() + b"- a line a sync client added\n"
    (store / NAME).write_bytes(synced)
    run.new(store, "beta", "Beta fact about the release train")
    log = json.loads(run("log", store, "--json").stdout)
    assert [e["command"] for e in log[:3]] == ["new", "external", "new"]
    for e in log[:3]:
        run("undo", e["id"], store)
    assert {p.name: p.read_bytes() for p in store.iterdir() if p.is_file()} == start
