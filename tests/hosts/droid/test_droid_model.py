"""Factory droid, without its CLI: its edit model on the cases measured on the real host (shared
reference, measured-other-hosts); the real-CLI suite is beside this file."""

from __future__ import annotations

from engramory.hosts import droid


def test_droid_matches_exactly_and_rewrites_a_mixed_file_all_lf() -> None:
    assert droid.apply_edit(b"a\r\nb\r\n", "a\nb", "X", False) == b"X\r\n"
    assert droid.apply_edit(b"a\nb\r\nc\n", "b", "B", False) == b"a\nB\nc\n"
    assert droid.apply_edit(b"x   \n", "x\n", "y\n", False) is None  # no whitespace fuzz
    assert droid.apply_edit(b"a\n", "", "b", False) is None
    assert droid.apply_create(b"\xef\xbb\xbfold\n", "new\n") == b"\xef\xbb\xbfnew\n"
    assert droid.apply_create(b"o\r\nld\r\n", "n\new\n") == b"n\r\new\r\n"
