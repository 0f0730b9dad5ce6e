"""Kiro, from its hooks docs (not runnable here): the guard on CLI (`tool_input`) and IDE
(`toolArgs`) payloads in all three spellings of the write and replace arguments, a deny by
exit 2 with the reason on stderr, and its installer (a hook file of engramory's own in
~/.kiro/hooks/ or .kiro/hooks/, deleted at uninstall)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

import contract  # noqa: E402
import pytest
from contract import lines  # noqa: E402

from engramory.hosts import claudelike, kiro  # noqa: E402


def write(path: str, cwd: str, before: str, after: str) -> Dict[str, Any]:
    return {"hook_event_name": "PreToolUse", "cwd": cwd, "tool_name": "fs_write",
            "tool_input": {"path": path, "text": after}}


def settings(scope: str, home: Path, proj: Path) -> Path:
    return (home if scope == "user" else proj) / ".kiro" / "hooks" / "engramory.json"


def bundle(scope: str, home: Path, proj: Path) -> Path:
    return (home if scope == "user" else proj) / ".kiro" / "engramory"


CASE = contract.Case("kiro", "exit", write, "PreToolUse", settings, bundle)


def test_a_growing_write_is_denied_by_exit_2_with_the_reason_on_stderr(tmp_path: Path) -> None:
    contract.check_growing_write_denied(CASE, tmp_path)


def test_a_shrinking_write_passes_in_silence(tmp_path: Path) -> None:
    contract.check_shrink_passes_in_silence(CASE, tmp_path)


def test_an_unrelated_file_is_left_alone(tmp_path: Path) -> None:
    contract.check_unrelated_file_silent(CASE, tmp_path)


def test_broken_payloads_fail_open(tmp_path: Path) -> None:
    contract.check_broken_payloads_fail_open(CASE, tmp_path)


GROW = lines(40, "m")
FIRST = "- [n0](n0.md) - note 0\n"


@pytest.mark.parametrize("payload", [
    # CLI v3: fs_write {path, text}, str_replace {path, oldStr, newStr, replace_all}
    {"hook_event_name": "PreToolUse", "tool_name": "fs_write", "tool_input": {"path": "MEMORY.md", "text": lines(240)}},
    {"hook_event_name": "PreToolUse", "tool_name": "str_replace",
     "tool_input": {"path": "MEMORY.md", "oldStr": FIRST, "newStr": FIRST + GROW, "replace_all": False}},
    # CLI 2.x agent-config hook, snake case
    {"hook_event_name": "preToolUse", "tool_name": "str_replace",
     "tool_input": {"path": "MEMORY.md", "old_str": FIRST, "new_str": FIRST + GROW}},
    # the IDE's toolArgs (camelCase), also as a JSON string
    {"hookEventName": "PreToolUse", "toolName": "fs_write", "toolArgs": {"path": "MEMORY.md", "text": lines(240)}},
    {"hookEventName": "PreToolUse", "toolName": "str_replace",
     "toolArgs": json.dumps({"path": "MEMORY.md", "oldStr": FIRST, "newStr": FIRST + GROW})},
    # the Amazon Q lineage: fs_write with a command
    {"hook_event_name": "preToolUse", "tool_name": "fs_write",
     "tool_input": {"command": "create", "path": "MEMORY.md", "file_text": lines(240)}},
    {"hook_event_name": "preToolUse", "tool_name": "fs_write",
     "tool_input": {"command": "str_replace", "path": "MEMORY.md", "old_str": FIRST, "new_str": FIRST + GROW}},
    {"hook_event_name": "preToolUse", "tool_name": "fs_write",
     "tool_input": {"command": "append", "path": "MEMORY.md", "new_str": GROW}},
    {"hook_event_name": "preToolUse", "tool_name": "fs_write",
     "tool_input": {"command": "insert", "path": "MEMORY.md", "insert_line": 3, "new_str": GROW}},
])
def test_every_spelling_of_a_growing_change_is_denied(tmp_path: Path, payload: Dict[str, Any]) -> None:
    (tmp_path / "MEMORY.md").write_text(lines(200))
    payload = dict(payload, cwd=str(tmp_path))
    out, err, code = kiro.respond(json.dumps(payload).encode(), {"HOME": str(tmp_path)})
    assert (out, code) == ("", 2) and "engramory" in err and "24" in err


def test_the_edit_model() -> None:
    assert kiro.predict("write", b"old\n", {"text": "new\n"}) == b"new\n"
    assert kiro.predict("edit", b"a b a\n", {"oldStr": "a", "newStr": "c"}) == b"c b a\n"
    assert kiro.predict("edit", b"a b a\n", {"oldStr": "a", "newStr": "c", "replace_all": True}) == b"c b c\n"
    assert kiro.predict("edit", None, {"oldStr": "a", "newStr": "c"}) is None
    unknown = kiro.predict("edit", b"x\n", {"oldStr": "zz", "newStr": "y\n"})
    assert isinstance(unknown, claudelike.Unknown) and unknown.added == "y\n"
    assert kiro.predict("write", b"x\n", {"command": "view", "path": "p"}) is None


def test_a_shrinking_replace_passes(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text(lines(230))
    payload = {"hook_event_name": "PreToolUse", "cwd": str(tmp_path), "tool_name": "str_replace",
               "tool_input": {"path": "MEMORY.md", "oldStr": FIRST, "newStr": ""}}
    assert kiro.respond(json.dumps(payload).encode(), {"HOME": str(tmp_path)}) == ("", "", 0)


@pytest.mark.parametrize("scope", ["user", "project"])
def test_install_check_uninstall_gives_the_bytes_back(tmp_path: Path, scope: str) -> None:
    contract.check_install_round_trip(CASE, tmp_path, scope, None)


def test_the_users_own_hook_files_are_never_touched(tmp_path: Path) -> None:
    mine = tmp_path / "home" / ".kiro" / "hooks" / "mine.json"
    mine.parent.mkdir(parents=True)
    mine.write_bytes(b'{"version":"v1","hooks":[]}')
    contract.check_install_round_trip(CASE, tmp_path, "user", None)
    assert mine.read_bytes() == b'{"version":"v1","hooks":[]}'


def test_the_installed_file_is_kiros_v3_hook_file(tmp_path: Path) -> None:
    assert contract.engramory(tmp_path, "install", "--host", "kiro").returncode == 0
    data = json.loads(settings("user", tmp_path / "home", tmp_path / "proj").read_text())
    assert list(data) == ["version", "hooks"] and data["version"] == "v1"
    (entry,) = data["hooks"]
    assert entry["trigger"] == "PreToolUse" and entry["enabled"] is True and entry["action"]["type"] == "command"
    assert "timeout" not in entry  # its unit is undocumented for v3: Kiro's default applies
    assert entry["action"]["command"].endswith("engramory_hook.py\" kiro PreToolUse")


def test_check_fails_on_a_deleted_script_or_removed_wiring(tmp_path: Path) -> None:
    def unwire(path: Path) -> None:
        data = json.loads(path.read_text())
        data["hooks"][0]["trigger"] = "PostToolUse"
        path.write_text(json.dumps(data))

    contract.check_check_fails_when_broken(CASE, tmp_path, unwire)
