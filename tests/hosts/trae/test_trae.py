"""Trae IDE, from its hooks docs (not runnable here): Claude-compatible PreToolUse payloads
with tool names the docs do not fix (so any tool whose input names a guarded file is judged),
a deny in Claude's hookSpecificOutput with exit 0, and its installer (.trae/hooks.json with its
"version": 1, no matcher, byte-exact uninstall)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict

import contract  # noqa: E402
import pytest
from contract import lines  # noqa: E402

from engramory.hosts import trae  # noqa: E402


def write(path: str, cwd: str, before: str, after: str) -> Dict[str, Any]:
    return {"hook_event_name": "PreToolUse", "session_id": "s", "agent_id": "a", "cwd": cwd, "tool_name": "Write",
            "tool_input": {"file_path": path, "content": after}}


def settings(scope: str, home: Path, proj: Path) -> Path:
    return (home if scope == "user" else proj) / ".trae" / "hooks.json"


def bundle(scope: str, home: Path, proj: Path) -> Path:
    return settings(scope, home, proj).parent / "engramory"


CASE = contract.Case("trae", "json", write, "PreToolUse", settings, bundle)


def test_a_growing_write_is_denied_in_claudes_json(tmp_path: Path) -> None:
    contract.check_growing_write_denied(CASE, tmp_path)


def test_a_shrinking_write_passes_in_silence(tmp_path: Path) -> None:
    contract.check_shrink_passes_in_silence(CASE, tmp_path)


def test_an_unrelated_file_is_left_alone(tmp_path: Path) -> None:
    contract.check_unrelated_file_silent(CASE, tmp_path)


def test_broken_payloads_fail_open(tmp_path: Path) -> None:
    contract.check_broken_payloads_fail_open(CASE, tmp_path)


FIRST = "- [n0](n0.md) - note 0\n"


@pytest.mark.parametrize("tool, tool_input", [
    ("Edit", {"file_path": "MEMORY.md", "old_string": FIRST, "new_string": FIRST + lines(40, "m")}),
    ("MultiEdit", {"file_path": "MEMORY.md", "edits": [{"old_string": FIRST, "new_string": FIRST + lines(40, "m")}]}),
    # names Trae's IDE may use: judged by what the input holds
    ("write_to_file", {"path": "MEMORY.md", "content": lines(240)}),
    ("edit_file_by_replace", {"file_path": "MEMORY.md", "old_str": FIRST, "new_str": FIRST + lines(40, "m")}),
])
def test_any_tool_that_grows_the_index_is_denied(tmp_path: Path, tool: str, tool_input: Dict[str, Any]) -> None:
    (tmp_path / "MEMORY.md").write_text(lines(200))
    raw = json.dumps({"hook_event_name": "PreToolUse", "cwd": str(tmp_path), "tool_name": tool, "tool_input": tool_input})
    out, err, code = trae.respond(raw.encode(), {"HOME": str(tmp_path)})
    inner = json.loads(out)["hookSpecificOutput"]
    assert code == 0 and inner["permissionDecision"] == "deny" and tool in inner["permissionDecisionReason"]


def test_a_tool_that_only_reads_is_not_judged(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text(lines(230))
    raw = json.dumps({"hook_event_name": "PreToolUse", "cwd": str(tmp_path), "tool_name": "Read",
                      "tool_input": {"file_path": "MEMORY.md"}})
    assert trae.respond(raw.encode(), {"HOME": str(tmp_path)}) == ("", "", 0)


@pytest.mark.parametrize("scope, existing", [
    ("user", None),
    ("project", None),
    ("project", b'{"version": 1, "hooks": {"PreToolUse": [{"matcher": "RunCommand", "hooks": [{"type": "command", '
                b'"command": "audit"}]}]}}'),
])
def test_install_check_uninstall_gives_the_bytes_back(tmp_path: Path, scope: str, existing: bytes | None) -> None:
    contract.check_install_round_trip(CASE, tmp_path, scope, existing)


def test_the_installed_file_is_trae_shaped(tmp_path: Path) -> None:
    assert contract.engramory(tmp_path, "install", "--host", "trae").returncode == 0
    data = json.loads(settings("user", tmp_path / "home", tmp_path / "proj").read_text())
    assert data["version"] == 1
    (group,) = data["hooks"]["PreToolUse"]
    assert "matcher" not in group  # every tool: Trae's file tool names are not documented
    assert group["hooks"][0]["command"].endswith("engramory_hook.py\" trae PreToolUse || true")


def test_check_fails_on_a_deleted_script_or_removed_wiring(tmp_path: Path) -> None:
    def unwire(path: Path) -> None:
        path.write_text('{"version": 1, "hooks": {"PreToolUse": []}}')

    contract.check_check_fails_when_broken(CASE, tmp_path, unwire)


@pytest.mark.parametrize("tool, tool_input", [
    ("RunCommand", {"command": "cat MEMORY.md && ls -la"}),
    ("Grep", {"pattern": "note", "path": "."}),
    ("Write", {"file_path": "src/app.py", "content": "print(1)\n"}),
    ("Read", {"file_path": "MEMORY.md"}),
    ("todo_write", {}),
])
def test_the_path_of_every_other_tool_is_silent_and_light(tmp_path: Path, tool: str, tool_input: Dict[str, Any]) -> None:
    """With no matcher, Trae runs the hook before every tool call (its docs: a matcher that is
    `*`, empty or omitted matches all). Those calls end with nothing printed and exit 0, and
    load none of the guard: a call naming no index, only the host module and its two helpers;
    a read of the index, the edit normaliser too. (The installed command, under callgrind:
    26.4 M instructions for a call naming no index and 27.5 M for a read of the index, against
    27.7 M for a bare `python -I -S -c pass`.)"""
    (tmp_path / "MEMORY.md").write_text(lines(230))
    code = ("import sys; before = set(sys.modules); sys.path.insert(0, %r);"
            "from engramory.hosts import trae; out = trae.respond(sys.stdin.buffer.read(), {'HOME': %r});"
            "print(repr((out, sorted(set(sys.modules) - before))))" % (str(contract.ROOT), str(tmp_path)))
    raw = json.dumps({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": str(tmp_path), "tool_name": tool,
                      "tool_input": tool_input})
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", code], input=raw.encode(), capture_output=True,
                          check=True, cwd=str(tmp_path))
    out, loaded = eval(proc.stdout.decode())  # a tuple literal printed by the child
    assert out == ("", "", 0)
    ours = {m for m in loaded if m.startswith("engramory")}
    light = {"engramory", "engramory.hosts", "engramory.hosts.trae", "engramory.hosts.claudelike", "engramory.jsonlite",
             "engramory.scope"}
    assert ours <= (light | {"engramory.edits"} if tool == "Read" else light), ours
    assert "engramory.guard" not in loaded and not {"json", "re", "enum", "pathlib"} & set(loaded), loaded
