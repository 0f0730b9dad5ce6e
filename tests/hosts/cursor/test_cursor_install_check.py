"""`engramory install --host cursor --check` reports a hooks.json that Cursor would not run
the guard from, although every file is there and the script runs: no or another "version",
the command under another event name or nesting, a matcher that leaves out a write tool, a
non-command type, a timeout too short for Python to start."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

import pytest

from engramory import cli
from engramory.hosts.cursor import install as install_cursor


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    for var in [v for v in os.environ if v.startswith("ENGRAMORY_")]:
        monkeypatch.delenv(var)
    monkeypatch.chdir(tmp_path)
    return h


def run(*argv: str) -> int:
    return cli.main(list(argv))


def edit(path: Path, change: Callable[[dict[str, Any]], Any]) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def rename_event(name: str) -> Callable[[dict[str, Any]], None]:
    def change(d: dict[str, Any]) -> None:
        d["hooks"][name] = d["hooks"].pop("preToolUse")
    return change


def nest_like_claude(d: dict[str, Any]) -> None:
    entry = d["hooks"]["preToolUse"][0]
    d["hooks"]["preToolUse"] = [{"matcher": "", "hooks": [dict(entry, type="command")]}]


def first(d: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = d["hooks"]["preToolUse"][0]
    return entry


VARIANTS: list[tuple[str, Callable[[dict[str, Any]], Any], str]] = [
    ("no-version", lambda d: d.pop("version"), 'has no "version": Cursor reads hooks.json version 1'),
    ("version-2", lambda d: d.update(version=2), '"version" is 2; Cursor reads hooks.json version 1'),
    ("version-string", lambda d: d.update(version="1"), '"version" is "1"'),
    ("claude-event-name", rename_event("PreToolUse"), "runs the guard at hooks.PreToolUse[0].command, where Cursor does not look"),
    ("other-event", rename_event("beforeShellExecution"), "hooks.beforeShellExecution[0].command"),
    ("claude-nesting", nest_like_claude, "hooks.preToolUse[0].hooks[0].command"),
    ("matcher", lambda d: first(d).update(matcher="Write|Edit"), "does not select StrReplace, MultiEdit, ApplyPatch, Delete"),
    ("type", lambda d: first(d).update(type="prompt"), '"type": "prompt", not "command"'),
    ("timeout", lambda d: first(d).update(timeout=0.5), '"timeout": 0.5: too short'),
]


@pytest.mark.parametrize(("variant", "expect"), [(v, e) for _, v, e in VARIANTS], ids=[i for i, _, _ in VARIANTS])
def test_a_hooks_json_cursor_would_not_run_the_guard_from_fails_the_check(
    home: Path, capsys: pytest.CaptureFixture[str], variant: Callable[[dict[str, Any]], Any], expect: str
) -> None:
    assert run("install", "--host", "cursor") == 0
    assert run("install", "--host", "cursor", "--check") == 0
    capsys.readouterr()
    edit(home / ".cursor" / "hooks.json", variant)
    assert run("install", "--host", "cursor", "--check") == 1
    out = capsys.readouterr().out
    assert expect in out, out
    assert "next step:" in out


def test_a_wide_matcher_and_a_long_timeout_are_fine(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("install", "--host", "cursor") == 0
    edit(home / ".cursor" / "hooks.json",
         lambda d: first(d).update(matcher="Write|StrReplace|Edit|MultiEdit|ApplyPatch|Delete|TabWrite", timeout=30))
    capsys.readouterr()
    assert run("install", "--host", "cursor", "--check") == 0, capsys.readouterr().out


def test_shape_problems_of_a_healthy_file_are_none() -> None:
    data = {"version": 1, "hooks": {"preToolUse": [install_cursor.entry("/usr/bin/python3", "/h/.cursor/engramory/hooks/"
                                                                         + install_cursor.SCRIPT)]}}
    assert install_cursor.shape_problems(data, "hooks.json") == []
