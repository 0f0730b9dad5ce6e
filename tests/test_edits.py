"""The prediction of what the host writes, edit by edit (see edits.py for the measured rules)."""

from __future__ import annotations

import pytest

from engramory.edits import EDIT, WRITE, Request, normalise, predict


def edit(before: bytes | None, *edits: tuple[str, str, bool]) -> bytes | None:
    req = Request("Edit", "/x/MEMORY.md", EDIT)
    req.edits = list(edits)
    return predict(req, before)


def write(before: bytes | None, content: str) -> bytes | None:
    req = Request("Write", "/x/MEMORY.md", WRITE)
    req.content = content
    return predict(req, before)


def test_plain_replace() -> None:
    assert edit(b"a\nb\n", ("b", "c", False)) == b"a\nc\n"


def test_crlf_file_lf_strings_written_back_crlf() -> None:
    assert edit(b"a\r\nb\r\n", ("a\nb", "a\nx\ny", False)) == b"a\r\nx\r\ny\r\n"
    # new_string mixing LF and CRLF: every line break comes out CRLF.
    assert edit(b"a\r\nb\r\n", ("b\n", "b\r\nc\nd\n", False)) == b"a\r\nb\r\nc\r\nd\r\n"


def test_crlf_in_old_string_never_matches() -> None:
    assert edit(b"a\r\nb\r\n", ("a\r\nb", "x", False)) is None
    assert edit(b"a\nb\n", ("a\r\nb", "x", False)) is None


@pytest.mark.parametrize(
    ("before", "old", "new", "after"),
    [
        ("it\u2019s here\n", "it's here", "it's there", "it\u2019s there\n"),
        ("say \u201chi\u201d\n", 'say "hi"', 'say "hi" and "bye"', "say \u201chi\u201d and \u201cbye\u201d\n"),
        ("x \u2018a\u2019\n", "x 'a'", "x 'bye'", "x \u2018bye\u2019\n"),
        # Straight in the file: new_string is written as given.
        ("it's here\n", "it's here", "it\u2019s there", "it\u2019s there\n"),
        # Curly old_string matching straight file text.
        ("it's here\n", "it\u2019s here", "it's there", "it's there\n"),
    ],
)
def test_quote_matching_and_style(before: str, old: str, new: str, after: str) -> None:
    assert edit(before.encode(), (old, new, False)) == after.encode()


def test_uniqueness_and_replace_all() -> None:
    assert edit(b"a\na\n", ("a", "b", False)) is None
    assert edit(b"a\na\n", ("a", "b", True)) == b"b\nb\n"
    assert edit(b"a\r\na\r\n", ("a\n", "b\n", True)) == b"b\r\nb\r\n"


def test_refusals() -> None:
    assert edit(b"a\n", ("a", "a", False)) is None  # no change
    assert edit(b"a\n", ("", "x", False)) is None  # empty old_string on an existing file
    assert edit(None, ("a", "x", False)) is None  # missing file
    assert edit(None, ("", "new\n", False)) == b"new\n"  # creates it


def test_deleting_a_line_takes_its_newline() -> None:
    assert edit(b"a\nb\nc\n", ("b", "", False)) == b"a\nc\n"
    assert edit(b"a\nb\nc\n", ("b\n", "", False)) == b"a\nc\n"


def test_dollar_signs_are_literal() -> None:
    assert edit(b"a\n", ("a", "$& $1 $$", False)) == b"$& $1 $$\n"


def test_non_utf8_bytes_come_back_as_replacement_characters() -> None:
    assert edit(b"caf\xe9\nb\n", ("b", "c", False)) == "caf\ufffd\nc\n".encode()


def test_write_keeps_bom_and_line_endings() -> None:
    assert write(b"\xef\xbb\xbfold", "a\r\nb") == b"\xef\xbb\xbfa\r\nb"
    assert write(b"old", "a\r\nb") == b"a\r\nb"
    assert write(None, "\ufeffa") == b"\xef\xbb\xbfa"
    assert write(b"\xef\xbb\xbfold", "\ufeffa") == b"\xef\xbb\xbfa"


def test_lone_surrogates_are_written_as_replacement_characters() -> None:
    assert write(None, "a\ud800b") == "a\ufffdb".encode()


@pytest.mark.parametrize(
    ("tool", "tool_input", "kind"),
    [
        ("Write", {"file_path": "/p/MEMORY.md", "content": "x"}, "write"),
        ("Edit", {"file_path": "/p/MEMORY.md", "old_string": "a", "new_string": "b"}, "edit"),
        ("MultiEdit", {"file_path": "/p/MEMORY.md", "edits": [{"old_string": "a", "new_string": "b"}]}, "edit"),
        ("StrReplace", {"path": "/p/MEMORY.md", "old_string": "a", "new_string": "b"}, "edit"),
        ("Write", {"path": "/p/MEMORY.md", "contents": "x"}, "write"),
        (None, {"target_file": "/p/MEMORY.md", "file_text": "x"}, "write"),
        (None, {"relative_path": "MEMORY.md", "old_string": "a", "new_string": "b"}, "edit"),
        ("Delete", {"path": "/p/MEMORY.md"}, "delete"),
    ],
)
def test_normalise_dialects(tool: str | None, tool_input: dict[str, object], kind: str) -> None:
    req = normalise(tool, tool_input, "/p")
    assert req is not None
    assert req.kind == kind
    assert req.path == "/p/MEMORY.md"


def test_normalise_relative_paths_use_cwd_then_roots() -> None:
    req = normalise("Write", {"path": "m/MEMORY.md", "content": ""}, None, ["/w"])
    assert req is not None and req.path == "/w/m/MEMORY.md"


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [("Write", None), ("Write", {"content": "x"}), ("Bash", {"command": "ls"}),
     ("Read", {"file_path": "/p/MEMORY.md"}), ("Write", {"file_path": "/p\x00/MEMORY.md", "content": "x"})],
)
def test_normalise_rejects(tool: str, tool_input: object) -> None:
    assert normalise(tool, tool_input) is None
