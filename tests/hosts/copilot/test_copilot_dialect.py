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


def _lines(n: int, start: int = 0) -> str:
    return "".join("- [n%d](n%d.md) line\n" % (i, i) for i in range(start, start + n))


def _plus(text: str) -> str:
    return "".join("+%s\n" % line for line in text.splitlines())


def test_delete_then_add_of_the_index_is_judged_on_the_added_text(tmp_path: Path) -> None:
    """Copilot applies a patch's operations one by one (measured): Delete then Add of one file
    leaves the Add's text, so a 150-line index rewritten as 300 lines is denied, and a rewrite
    that shrinks an over-cap index is allowed (the exact bytes, not a worst case)."""
    index = tmp_path / "MEMORY.md"
    index.write_text(_lines(150))
    grow = "*** Begin Patch\n*** Delete File: %s\n*** Add File: %s\n%s*** End Patch\n" % (index, index, _plus(_lines(300)))
    out, code = _ask({"cwd": str(tmp_path), "toolName": "apply_patch", "toolArgs": grow})
    answer = json.loads(out)
    assert code == 0 and answer["permissionDecision"] == "deny", answer
    assert "grow from 150 to 300 lines (hard cap 200: 100 over)" in answer["permissionDecisionReason"]
    index.write_text(_lines(230))
    shrink = "*** Begin Patch\n*** Delete File: MEMORY.md\n*** Add File: MEMORY.md\n%s*** End Patch\n" % _plus(_lines(120))
    assert _ask({"cwd": str(tmp_path), "toolName": "apply_patch", "toolArgs": shrink}) == ("", 0)


def test_two_updates_of_the_index_are_judged_on_their_sum(tmp_path: Path) -> None:
    """The second Update applies to the first one's result (measured): each alone leaves 200
    lines, both 201, so the patch is denied."""
    index = tmp_path / "MEMORY.md"
    index.write_text(_lines(199))
    hunk = "*** Update File: MEMORY.md\n@@\n - [n3](n3.md) line\n+- [x%d](x.md) new\n"
    patch = "*** Begin Patch\n%s%s*** End Patch\n" % (hunk % 1, hunk % 2)
    out, _ = _ask({"cwd": str(tmp_path), "toolName": "apply_patch", "toolArgs": patch})
    answer = json.loads(out)
    assert answer["permissionDecision"] == "deny" and "grow from 199 to 201 lines" in answer["permissionDecisionReason"]


def test_operations_after_a_failed_one_are_not_applied(tmp_path: Path) -> None:
    """Copilot stops at the first operation that fails (measured: "Patch partially applied
    before failure"): an Add of an existing file first, so nothing after it lands."""
    index = tmp_path / "MEMORY.md"
    index.write_text(_lines(150))
    patch = "*** Begin Patch\n*** Add File: MEMORY.md\n+x\n*** Delete File: MEMORY.md\n*** Add File: MEMORY.md\n%s" \
            "*** End Patch\n" % _plus(_lines(300))
    assert _ask({"cwd": str(tmp_path), "toolName": "apply_patch", "toolArgs": patch}) == ("", 0)
