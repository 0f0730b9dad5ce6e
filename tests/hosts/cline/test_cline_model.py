"""Cline, without its CLI: its edit model on the cases measured on the real host (shared
reference, measured-other-hosts); the real-CLI suite is beside this file."""

from __future__ import annotations

from engramory.hosts import cline


def test_cline_editor_reproduces_the_measured_cases() -> None:
    assert cline.apply_editor(b"a\nb\n", {"insert_line": 3, "new_text": "Z\n"}) == b"a\nb\nZ\n\n"
    assert cline.apply_editor(b"a\nb\r\nc\n", {"insert_line": 1, "new_text": "Z"}) == b"Z\r\na\r\nb\r\nc\r\n"
    assert cline.apply_editor(b"a\r\nb\r\n", {"old_text": "a\nb", "new_text": "X\nY"}) == b"X\r\nY\r\n"
    assert cline.apply_editor(b"a\nb\r\n", {"old_text": "a\nb", "new_text": "X"}) is None  # mixed file: LF old misses
    assert cline.apply_editor(b"a\n", {"old_text": "", "new_text": "X"}) is None
    assert cline.apply_editor(b"a\n", {"new_text": "X"}) is None  # old_text omitted on an existing file
    assert cline.apply_editor(None, {"new_text": "new"}) == b"new"
    assert cline.apply_editor(b"a\n", {"insert_line": 0, "new_text": "X"}) is None
    assert cline.apply_editor(b"a\n", {"old_text": "a", "new_text": "x" * 6001}) is None
