"""opencode, without its CLI: its edit model on the cases measured on the real host (shared
reference, measured-other-hosts); the real-CLI suite is beside this file."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engramory import patches
from engramory.hosts import opencode
from engramory.hosts.opencode import model


def test_opencode_replacers_reproduce_the_measured_cases() -> None:
    assert opencode.apply_edit(b"    line1\n    line2\n", "line1\nline2", "X\nY", False) == b"X\nY\n"
    # block-anchor: a 4-line oldString not in the file replaces the 3-line block (2 lines more)
    assert opencode.apply_edit(b"A\nBBBB\nD\nrest\n", "A\nBBBBB\nZZZ\nD", "A\n1\n2\n3\nD", False) == b"A\n1\n2\n3\nD\nrest\n"
    assert opencode.apply_edit(b"a\nb\r\nc\n", "a\nb", "A\nB", False) == b"A\r\nB\nc\n"  # the swallowed \r
    assert opencode.apply_edit(b"a   b  c\n", "a b c", "Z", False) == b"Z\n"
    assert opencode.apply_edit(b"it\xe2\x80\x99s\n", "it's", "x", False) is None  # no Unicode folding
    assert opencode.apply_edit(b"\xef\xbb\xbfa\n", "a", "b", False) == b"\xef\xbb\xbfb\n"
    assert opencode.apply_write(b"\xef\xbb\xbfold\n", "c\nd\n") == b"\xef\xbb\xbfc\nd\n"
    assert opencode.apply_edit(b"x\n", "", "y", False) is None


def test_opencode_patch_rewrites_context_lines_and_ends_with_a_newline() -> None:
    (op,) = patches.parse_v4a("*** Begin Patch\n*** Update File: f\n@@\n a\n-b\n+B\n c\n*** End Patch")
    assert opencode.apply_patch_update(b"a\r\nb\r\nc\r\n", op.hunks) == b"a\nB\nc\n"
    assert opencode.apply_patch_add("x") == b"x\n"


@settings(max_examples=400, deadline=None)
@given(text=st.text(alphabet="ab \n\r\t$&'", max_size=40), old=st.text(alphabet="ab \n\r$&", min_size=1, max_size=8),
       new=st.text(alphabet="ab \n\r$&", max_size=8), replace_all=st.booleans())
def test_the_exact_once_shortcut_is_what_the_whole_chain_answers(text: str, old: str, new: str,
                                                                   replace_all: bool) -> None:
    # apply_edit replaces an oldString found exactly once as given without loading the chain
    # (engramory.hosts.opencode.model); the chain must have answered the same.
    eol = "\r\n" if "\r\n" in text else "\n"

    def me(s: str) -> str:
        s = s.replace("\r\n", "\n")
        return s if eol == "\n" else s.replace("\n", "\r\n")

    want = None if old == new else model.replace(text, me(old), me(new), replace_all)
    got = opencode.apply_edit(text.encode("utf-8"), old, new, replace_all)
    assert got == (None if want is None else want.encode("utf-8"))
