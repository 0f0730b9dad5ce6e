"""The prediction of what the host writes, edit by edit (see edits.py for the measured rules)."""

from __future__ import annotations

import pytest

from engramory.edits import EDIT, UNREADABLE, WRITE, Request, decode, normalise, predict


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


@pytest.mark.parametrize(
    "before",
    [
        b"caf\xe9\nb\n",  # latin-1
        b"a\xed\xa0\x80\nb\n",  # an encoded surrogate
        b"abc\xe2\x82\nb\n",  # a character cut short
        b"x" * 9000 + b"\xe9\nb\n",  # invalid far past the first 8 KB: still refused
        b"a\x00z\nb\n",  # NUL in the first 8 KB: "binary"
        b"\xfe\xff\x00a\x00\n" + b"b\n",  # UTF-16BE
    ],
)
def test_files_claude_code_will_not_decode_are_still_sized(before: bytes) -> None:
    # Claude Code refuses these ("File is not valid UTF-8", "File has NUL bytes", "UTF-16
    # big-endian") and writes nothing; other hosts may write them, so the prediction stays a
    # lenient reading instead of "refused", which would silence the guard.
    assert decode(before)[1] == UNREADABLE
    lenient = before.decode("utf-8", "replace")
    assert edit(before, ("b\n", "c\n", False)) == lenient.replace("b\n", "c\n", 1).encode()
    assert write(before, "new\n") == b"new\n"


def test_nul_past_the_first_8_kb_is_text() -> None:
    before = b"a" * 9000 + b"\x00\nb\n"
    assert edit(before, ("b", "c", False)) == b"a" * 9000 + b"\x00\nc\n"


def test_utf16le_files_are_edited_and_written_in_utf16le() -> None:
    bom = b"\xff\xfe"
    assert edit(bom + "a\nb\n".encode("utf-16-le"), ("b", "c", False)) == bom + "a\nc\n".encode("utf-16-le")
    crlf = bom + "a\r\nb\r\n".encode("utf-16-le")
    assert edit(crlf, ("a\nb", "x\ny", False)) == bom + "x\r\ny\r\n".encode("utf-16-le")
    assert write(bom + "a\n".encode("utf-16-le"), "x\n") == bom + "x\n".encode("utf-16-le")
    assert write(bom + "a\n".encode("utf-16-le"), "\ufeffx\n") == bom + "x\n".encode("utf-16-le")
    assert write(bom + "a\n".encode("utf-16-le"), "") == b""


def test_bom_is_not_part_of_the_text() -> None:
    bom = b"\xef\xbb\xbf"
    assert edit(bom + b"a\nb\n", ("a", "A", False)) == bom + b"A\nb\n"
    assert edit(bom + b"a\nb\n", ("\ufeffa", "A", False)) is None
    assert write(bom + b"a\n", "") == b""  # an empty Write drops the BOM
    assert edit(bom + b"a\n", ("a\n", "", False)) == bom  # an Edit that empties the file keeps it


def test_empty_old_string_fills_a_blank_file() -> None:
    assert edit(b"", ("", "new\n", False)) == b"new\n"
    assert edit(b"\n \n", ("", "new\n", False)) == b"new\n"
    assert edit(b"\r\n\r\n", ("", "a\nb\n", False)) == b"a\r\nb\r\n"
    assert edit(b"\xef\xbb\xbf", ("", "new\n", False)) == b"\xef\xbb\xbfnew\n"
    assert edit(b" x ", ("", "new\n", False)) is None


def test_non_ascii_old_string_matches_its_escaped_form() -> None:
    assert edit(b"a \\u2014 b\n", ("a \u2014 b", "a \u2014 c \u00e9", False)) == b"a \\u2014 c \\u00e9\n"
    assert edit(b"a \\u00E9 b\n", ("a \u00e9 b", "a \u00e9 c", False)) == b"a \\u00E9 c\n"
    assert edit(b"x \\ud83e\\udde0 y\n", ("x \U0001f9e0 y", "x \U0001f9e0 z", False)) == b"x \\ud83e\\udde0 z\n"
    # No quote matching on top of the escapes, even in a CRLF file.
    assert edit("\u201ca\u201d \\u00e9\r\n".encode(), ('"a" \u00e9', '"b"', False)) is None
    # All or nothing: a file mixing both forms does not match.
    assert edit("\u00e9 \\u2014 b\n".encode(), ("\u00e9 \u2014 b", "c", False)) is None


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


# --- the host's \uXXXX matching, as read from Claude Code 2.1.332 (Ydt / fe / k / Y) -------


def test_escape_text_in_old_string_matches_the_characters() -> None:
    # C0/C1 controls, DEL, U+0085 and mixed-case hex reach the hook still escaped: the host
    # reads the escapes as characters to match, and writes new_string's escapes read too.
    assert edit(b"- a\x07b\n", ("- a\\u0007b\n", "- a\\u0007b\n- c\\u0007\n", False)) == b"- a\x07b\n- c\x07\n"
    assert edit("- x\u0085y\n".encode(), ("x\\u0085y", "x\\u0085y z", False)) == "- x\u0085y z\n".encode()
    assert edit(b"- d\x7f\n", ("d\\u007F", "d\\u007F\n- more", False)) == b"- d\x7f\n- more\n"
    assert edit("- \u00ae mark\n".encode(), ("\\u00Ae mark", "\\u00Ae mark\n- new", False)) == "- \u00ae mark\n- new\n".encode()
    # An escaped backslash is not an escape.
    assert edit(b"a \\\\u0041 b\n", ("\\\\u0041", "X", False)) == b"a X b\n"
    assert edit(b"a A b\n", ("\\\\u0041", "X", False)) is None


def test_non_ascii_old_string_matches_escapes_in_any_hex_case() -> None:
    assert edit(b"a \\u00Ae b\n", ("a \u00ae b", "a \u00ae \u00e9", False)) == b"a \\u00Ae \\u00e9\n"
    # New characters take the case most of the matched escapes used.
    assert edit(b"a \\u00AE \\u2014 b\n", ("a \u00ae \u2014 b", "\u00e9", False)) == b"\\u00E9\n"
    # An escape whose backslash is itself escaped does not match.
    assert edit(b"a \\\\u00e9 b\n", ("a \u00e9 b", "c", False)) is None


def test_decode_escapes_joins_surrogate_pairs() -> None:
    from engramory.edits import decode_escapes

    assert decode_escapes("\\ud83e\\udde0 \\\\u0041 \\u0041") == "\U0001f9e0 \\\\u0041 A"
