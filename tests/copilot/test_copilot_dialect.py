"""The Copilot dialect on payloads shaped as measured (no CLI needed): toolArgs as an object,
as a JSON string and, for apply_patch, as the raw patch text; the answer is always exit 0."""

from __future__ import annotations

import json
from pathlib import Path

from engramory.hosts import copilot


def _ask(payload: object, event: str = copilot.PRE) -> tuple[str, int]:
    out, _, code = copilot.respond_event(json.dumps(payload).encode(), event, {})
    return out, code


def test_apply_patch_raw_text_that_grows_the_index_past_its_cap_is_denied(tmp_path: Path) -> None:
    index = tmp_path / "MEMORY.md"
    index.write_text("- [a](a.md) one\n")
    body = "".join("+- [n%d](n%d.md) line\n" % (i, i) for i in range(250))
    patch = "*** Begin Patch\n*** Update File: %s\n@@\n-- [a](a.md) one\n%s*** End Patch\n" % (index, body)
    out, code = _ask({"cwd": str(tmp_path), "toolName": "apply_patch", "toolArgs": patch})
    assert code == 0
    answer = json.loads(out)
    assert answer["permissionDecision"] == "deny" and "grow from 1 to 250 lines" in answer["permissionDecisionReason"]


def test_apply_patch_add_file_and_a_shrinking_patch(tmp_path: Path) -> None:
    big = "".join("+- [n%d](n%d.md) line\n" % (i, i) for i in range(201))
    patch = "*** Begin Patch\n*** Add File: MEMORY.md\n%s*** End Patch\n" % big
    out, _ = _ask({"cwd": str(tmp_path), "toolName": "apply_patch", "toolArgs": patch})
    assert json.loads(out)["permissionDecision"] == "deny"  # relative paths resolve against cwd
    index = tmp_path / "MEMORY.md"
    index.write_text("".join("- [n%d](n%d.md) line\n" % (i, i) for i in range(230)))
    shrink = "*** Begin Patch\n*** Update File: MEMORY.md\n@@\n - [n3](n3.md) line\n-- [n4](n4.md) line\n*** End Patch\n"
    out, _ = _ask({"cwd": str(tmp_path), "toolName": "apply_patch", "toolArgs": shrink})
    answer = json.loads(out)
    assert "permissionDecision" not in answer  # allowed, with a nudge: still over the cap
    assert "still over its hard cap after this edit: 229 lines" in answer["additionalContext"]


def test_tool_args_as_a_json_string_and_other_tools(tmp_path: Path) -> None:
    index = tmp_path / "MEMORY.md"
    args = json.dumps({"path": str(index), "file_text": "x\n" * 201})
    out, _ = _ask({"cwd": str(tmp_path), "toolName": "create", "toolArgs": args})
    assert json.loads(out)["permissionDecision"] == "deny"
    assert _ask({"cwd": str(tmp_path), "toolName": "view", "toolArgs": {"path": str(index)}}) == ("", 0)
    assert _ask({"cwd": str(tmp_path), "toolName": "bash", "toolArgs": {"command": "ls"}}) == ("", 0)


def test_garbage_is_allowed_with_exit_zero() -> None:
    for raw in (b"", b"not json", b"[1]", b"\xff\xfe", json.dumps({"toolName": "edit", "toolArgs": 5}).encode()):
        assert copilot.respond_event(raw, copilot.PRE, {}) == ("", "", 0)
        assert copilot.respond_event(raw, copilot.POST, {}) == ("", "", 0)
