"""Copilot CLI, without its CLI: its edit model on the cases measured on the real host (shared
reference, measured-other-hosts); the real-CLI suite is beside this file."""

from __future__ import annotations

from pathlib import Path

from engramory import guard
from engramory.hosts import claudelike, copilot


def test_copilot_keeps_each_lines_ending_and_bounds_loose_matches() -> None:
    edit = claudelike.EDIT
    assert copilot.predict_with_bound(b"a\nb\r\nc", {"old_str": "a\nb", "new_str": "A\nB"}, edit) == (b"A\nB\r\nc", 0)
    after, bound = copilot.predict_with_bound(b"    line1\n    line2\n", {"old_str": "line1\nline2", "new_str": "X\nY"}, edit)
    assert after == b"    X\n    Y\n" and bound > 0  # re-indented, as measured
    assert copilot.predict_with_bound(b"a\nx\na\n", {"old_str": "a", "new_str": "b"}, edit) == (None, 0)
    assert copilot.predict_with_bound(b"x\n", {"path": "p", "file_text": "y"}, claudelike.WRITE) == (None, 0)


def test_copilot_never_denies_on_bytes_inside_its_bound(tmp_path: Path) -> None:
    index = tmp_path / "MEMORY.md"
    before = b"x" * 24_998 + b"\n"
    index.write_bytes(before)
    decision = guard.judge(str(index), before, before + b"yy\n", {}, None, "edit")
    assert decision is not None and decision.action == guard.DENY
    assert claudelike.lenient(decision, 10) is None  # might really shrink: not denied
    assert claudelike.lenient(decision, 0) is decision
