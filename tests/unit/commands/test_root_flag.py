"""Every command that works on one store takes its folder as `--root DIR` as well as the optional
last argument ROOT: search, archive and restore have only `--root` (their positionals are words and
names), so a user who learnt it there typed `engramory new --root DIR ...` and got a usage error.
Given both ways and different, the command refuses with 64 and changes nothing. ROOT may follow the options (`update NAME --title T ROOT`): argparse alone
left it unrecognized there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

ROOT = Path(__file__).resolve().parents[3]
TOOL = ROOT / "tools" / "engramory.py"

# command, and the arguments it needs besides the store
COMMANDS = {
    "doctor": [],
    "log": [],
    "review": ["--keep"],
    "compact": [],
    "verify": [],
    "undo": ["--dry-run"],
    "update": ["prefers-tabs-in-go-files", "--title", "Go tabs", "--dry-run"],
    "new": ["--type", "user", "--description", "Runs the linters before every commit push", "--dry-run"],
    "sync init": ["--dry-run"],
    "sync": [],
}


def run(args: List[str], home: Path) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"}
    return subprocess.run([sys.executable, "-I", "-S", str(TOOL)] + args, capture_output=True, text=True,
                          env=env, cwd=str(home), timeout=60)


@pytest.fixture()
def store(tmp_path: Path) -> Path:
    root = tmp_path / "mem"
    root.mkdir()
    done = run(["new", str(root), "--type", "user", "--name", "prefers-tabs-in-go-files",
                "--description", "Prefers tabs over spaces in Go source files", "--body", "gofmt"], tmp_path)
    assert done.returncode == 0, done.stderr
    return root


def snapshot(root: Path) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".engramory" not in p.parts}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_root_flag_is_the_same_as_root(command: str, store: Path, tmp_path: Path) -> None:
    extra = COMMANDS[command]
    by_flag = run(command.split() + ["--root", str(store)] + extra, tmp_path)
    assert "unrecognized arguments" not in by_flag.stderr, by_flag.stderr
    assert by_flag.returncode != 64, (command, by_flag.stderr)
    assert str(store) in by_flag.stdout + by_flag.stderr or by_flag.returncode in (0, 1), (command, by_flag.stderr)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_two_different_roots_are_refused(command: str, store: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    before = snapshot(store)
    done = run(command.split() + COMMANDS[command] + [str(other), "--root", str(store)], tmp_path)
    # the doctor's usage errors exit 2, as its failures do (its documented contract)
    assert done.returncode == (2 if command == "doctor" else 64), (command, done.returncode, done.stderr)
    assert "given twice" in done.stderr
    assert "Traceback" not in done.stderr
    assert snapshot(store) == before
