"""engramory.patches: V4A and unified-diff parsing and exact prediction."""

from __future__ import annotations

from pathlib import Path

import pytest

from engramory import patches
from engramory.hosts.openclaw import patchmodel
from engramory.size import count_lines


def v4a(*body: str) -> str:
    return "\n".join(("*** Begin Patch",) + body + ("*** End Patch",)) + "\n"


def test_v4a_add_update_delete_move_are_parsed_in_order() -> None:
    ops = patches.parse_v4a(
        v4a(
            "*** Add File: notes/a.md",
            "+one",
            "+two",
            "*** Update File: MEMORY.md",
            "*** Move to: mem/MEMORY.md",
            "@@ # Index",
            " - a",
            "-- b",
            "+- c",
            "*** Delete File: old.md",
        )
    )
    assert [(op.kind, op.path, op.target) for op in ops] == [
        ("add", "notes/a.md", "notes/a.md"),
        ("update", "MEMORY.md", "mem/MEMORY.md"),
        ("delete", "old.md", "old.md"),
    ]
    assert ops[0].content == "one\ntwo\n"
    hunk = ops[1].hunks[0]
    assert (hunk.context, hunk.old, hunk.new) == ("# Index", ["- a", "- b"], ["- a", "- c"])


@pytest.mark.parametrize(
    "text",
    ["", "hello", "*** Begin Patch\n*** Add File: x\n+a\n", "*** Begin Patch\n*** Frobnicate: x\n*** End Patch\n",
     "*** Begin Patch\n*** End Patch\n", "*** Begin Patch\n*** Update File: x\nzzz\n*** End Patch\n"],
)
def test_v4a_rejects_what_is_not_a_patch(text: str) -> None:
    with pytest.raises(patches.PatchError):
        patches.parse_v4a(text)


def test_v4a_update_applies_hunks_in_order_and_ends_with_a_newline() -> None:
    before = b"# Index\n- a\n- b\n- c\n- d"
    (op,) = patches.parse_v4a(v4a("*** Update File: MEMORY.md", "@@", " - a", "+- a2", "@@", "-- d", "+- d2", "+- e"))
    assert patches.apply_v4a_to(before, op) == b"# Index\n- a\n- a2\n- b\n- c\n- d2\n- e\n"


def test_v4a_context_header_seeks_before_matching() -> None:
    before = b"## one\n- x\n## two\n- x\n"
    (op,) = patches.parse_v4a(v4a("*** Update File: M.md", "@@ ## two", "-- x", "+- y"))
    assert patches.apply_v4a_to(before, op) == b"## one\n- x\n## two\n- y\n"


def test_lf_rules_match_loosely_and_rewrite_the_span() -> None:
    before = "- a \u2014 b  \n- \u201cq\u201d\n".encode()
    (op,) = patches.parse_v4a(v4a("*** Update File: M.md", "-- a - b", "+- z", " - \"q\""))
    # the whole matched span is rewritten from the hunk, so context lines come out as written
    assert patches.apply_v4a_to(before, op) == b'- z\n- "q"\n'


def test_v4a_end_of_file_anchors_at_the_end() -> None:
    before = b"- x\n- y\n- x\n"
    (op,) = patches.parse_v4a(v4a("*** Update File: M.md", "-- x", "+- last", "*** End of File"))
    assert patches.apply_v4a_to(before, op) == b"- x\n- y\n- last\n"


def test_v4a_pure_insertion_goes_at_the_end() -> None:
    (op,) = patches.parse_v4a(v4a("*** Update File: M.md", "@@", "+- new"))
    assert patches.apply_v4a_to(b"- a\n", op) == b"- a\n- new\n"


def test_v4a_unmatched_or_missing_file_is_not_predicted() -> None:
    (op,) = patches.parse_v4a(v4a("*** Update File: M.md", "-- nothere", "+- z"))
    assert patches.apply_v4a_to(b"- a\n", op) is None
    assert patches.apply_v4a_to(None, op) is None
    assert patches.size_delta(op) == (0, -6)


def test_v4a_non_utf8_bytes_pass_through_unchanged() -> None:
    (op,) = patches.parse_v4a(v4a("*** Update File: M.md", " - a", "+- b"))
    assert patches.apply_v4a_to(b"- a\n\xff\xfe\n", op) == b"- a\n- b\n\xff\xfe\n"


def test_heredoc_wrapper_and_crlf_are_accepted() -> None:
    text = "<<'EOF'\r\n*** Begin Patch\r\n*** Add File: a\r\n+x\r\n*** End Patch\r\nEOF\r\n"
    (op,) = patches.parse(text)
    assert (op.kind, op.content) == ("add", "x\n")


def test_delete_and_add_predictions() -> None:
    add, delete = patches.parse_v4a(v4a("*** Add File: a", "+x", "*** Delete File: b"))
    assert patches.apply_to(None, add) == b"x\n"
    assert patches.apply_to(b"old\n", delete) == b""
    assert patches.apply_to(None, delete) is None
    assert patches.size_delta(add) == (1, 2)


UNIFIED = """\
diff --git a/MEMORY.md b/MEMORY.md
--- a/MEMORY.md
+++ b/MEMORY.md
@@ -2,2 +2,3 @@
 - a
-- b
+- b2
+- c
"""


def test_unified_update_applies_at_the_hinted_line() -> None:
    (op,) = patches.parse(UNIFIED)
    assert (op.kind, op.path, op.format) == ("update", "MEMORY.md", "unified")
    assert patches.apply_to(b"# I\n- a\n- b\n", op) == b"# I\n- a\n- b2\n- c\n"
    # drifted by two lines: still found, nearest to the hint
    assert patches.apply_to(b"# I\n\n\n- a\n- b\n", op) == b"# I\n\n\n- a\n- b2\n- c\n"
    assert patches.apply_to(b"# I\n- a\n- B\n", op) is None
    assert patches.size_delta(op) == (1, 5)


def test_unified_add_delete_and_no_newline_marker() -> None:
    text = (
        "--- /dev/null\n+++ b/new.md\n@@ -0,0 +1,2 @@\n+x\n+y\n\\ No newline at end of file\n"
        "--- a/gone.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-z\n"
        "--- a/M.md\n+++ b/M.md\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n"
    )
    add, delete, update = patches.parse(text)
    assert (add.kind, add.content) == ("add", "x\ny")
    assert (delete.kind, delete.path) == ("delete", "gone.md")
    assert patches.apply_to(b"a", update) == b"a\n"


def test_unified_rejects_truncated_hunks_and_plain_text() -> None:
    with pytest.raises(patches.PatchError):
        patches.parse("--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n")
    with pytest.raises(patches.PatchError):
        patches.parse("just words\n")


# --- round trips: a patch made from (before, after) must predict `after` exactly ------------

import difflib  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

# Few distinct lines, so hunks' old lines often repeat elsewhere in the file.
_line = st.sampled_from(["- [a](a.md) - x", "- [b](b.md) - y", "# Index", "", "- c", "- d \u2014 e", "- f"])
_lines = st.lists(_line, max_size=12)


def _v4a_from(before: list[str], after: list[str]) -> str:
    out = ["*** Begin Patch", "*** Update File: M.md"]
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for group in matcher.get_grouped_opcodes(2):
        out.append("@@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(" " + x for x in before[i1:i2])
            else:
                out.extend("-" + x for x in before[i1:i2])
                out.extend("+" + x for x in after[j1:j2])
        if group[-1][2] == len(before):
            out.append("*** End of File")  # as a model marks a change at the end of the file
    out.append("*** End Patch")
    return "\n".join(out) + "\n"


@settings(max_examples=500, deadline=None)
@given(_lines, _lines)
def test_v4a_round_trip(before: list[str], after: list[str]) -> None:
    if before == after:
        return
    old = "".join(x + "\n" for x in before).encode()
    ops = patches.parse_v4a(_v4a_from(before, after))
    got = patches.apply_v4a_to(old, ops[0])
    assert got is not None
    want = "".join(x + "\n" for x in after).encode()
    # V4A carries no line numbers: where a hunk's old lines repeat, Codex (and this prediction)
    # takes the first match after the previous hunk, which may not be where difflib meant it.
    # The size, all the guard decides on, is the same either way; the bytes are exact when the
    # file has no repeated line. Codex also drops one trailing empty line of the file.
    assert (count_lines(got.rstrip(b"\n")), len(got.rstrip(b"\n"))) == (
        count_lines(want.rstrip(b"\n")), len(want.rstrip(b"\n"))
    )
    if len(set(before)) == len(before):
        assert got.rstrip(b"\n") == want.rstrip(b"\n")


@settings(max_examples=500, deadline=None)
@given(_lines, _lines, st.booleans(), st.booleans())
def test_unified_round_trip(before: list[str], after: list[str], old_eol: bool, new_eol: bool) -> None:
    old_text = "\n".join(before) + ("\n" if old_eol and before else "")
    new_text = "\n".join(after) + ("\n" if new_eol and after else "")
    if old_text == new_text:
        return
    diff = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
        for line in difflib.unified_diff(
            old_text.splitlines(keepends=True), new_text.splitlines(keepends=True), "a/M.md", "b/M.md"
        )
    )
    (op,) = patches.parse(diff)
    assert patches.apply_to(old_text.encode(), op) == new_text.encode()


# --- the rules of each host: Codex's measured ones, the LF applier, the exact-only worst case ---


def _update(before: bytes, body: str, rules: patches.Rules) -> bytes:
    (op,) = patches.parse_v4a(v4a("*** Update File: f", *body.split("\n")[:-1]), rules)
    return patches.update(before, op.hunks, rules)


# Each row was applied by the real Codex CLI 0.171.0 (tests/hosts/codex runs them all against it).
@pytest.mark.parametrize(("before", "body", "after"), [
    (b"a\rb\n", "@@\n-b\n+B\n", b"a\rB\r"),  # a lone CR ends a line and is the first ending
    (b"a\rb\rc\n", "@@\n+z\n", b"a\rb\rc\nz\r"),
    (b"x\r", "@@\n+z\n", b"x\rz\r"),
    (b"a\n\n", "@@\n+z\n", b"a\n\nz\n"),  # after a final empty line, which survives
    (b"a\r\nb\n", "@@\n-b\n+B\n+C\n", b"a\r\nB\r\nC\r\n"),  # the first ending decides
    (b"a\nb\r\n", "@@\n-a\n+A\n+A2\n", b"A\nA2\nb\r\n"),
    (b"\xef\xbb\xbfa\r\nb\r\n", "@@\n-b\n+B\n", b"\xef\xbb\xbfa\r\nB\r\n"),
    (b"  a  \r\nb\r\n", "@@\n a\n-b\n+B\n", b"  a  \r\nB\r\n"),  # loose context keeps its bytes
    (b"a\r\n", "@@\n-a\n+b\r\n", b"b\r\n"),  # one \r stripped from a patch line
    (b"a\nb\nc\nd\n", "@@\n-a\n+A\n@@\n c\n d\n+e\n*** End of File\n", b"A\nb\nc\nd\ne\n"),
])
def test_codex_rules_bytes(before: bytes, body: str, after: bytes) -> None:
    assert _update(before, body, patches.CODEX) == after


@pytest.mark.parametrize(("before", "body"), [
    (b"a\rb\n", "@@\n-a\rb\n+X\n"),  # a CR inside a patch line is no break
    (b"a\nb\nc\n", "@@\n-b\n+B\n@@\n b\n c\n+d\n*** End of File\n"),  # End of File never looks back
    (b"a\nb\nc\n", "@@\n-c\n+C\n@@\n c\n+y\n*** End of File\n"),
    (b"\x1ca\nb\n", "@@\n-a\n+A\n"),  # U+001C is whitespace to Python, not to Rust
    (b"caf\xe9\n", "@@\n+x\n"),  # not UTF-8
])
def test_codex_rules_refusals(before: bytes, body: str) -> None:
    with pytest.raises(patches.PatchError):
        _update(before, body, patches.CODEX)


def test_codex_parser_is_stricter_than_the_lf_one() -> None:
    move_only = v4a("*** Update File: a.md", "*** Move to: b.md")
    assert patches.parse_v4a(move_only)[0].move_to == "b.md"
    with pytest.raises(patches.PatchError):
        patches.parse_v4a(move_only, patches.CODEX)
    with pytest.raises(patches.PatchError):
        patches.parse_v4a(v4a("*** Update File: a.md", "@@x", "+y"), patches.CODEX)


def test_lf_rules_keep_the_old_join_semantics() -> None:
    # the JavaScript ports split on LF and join back: a final empty line is lost, a pure
    # insertion goes before it, and a fuzzy-matched span is rewritten from the hunk
    assert _update(b"a\n\n", "@@\n+z\n", patches.LF) == b"a\nz\n"
    assert _update(b"  a  \nb\n", "@@\n a\n-b\n+B\n", patches.LF) == b"a\nB\n"
    assert _update(b"  a  \nb\n", "@@\n a\n-b\n+B\n", patches.CODEX) == b"  a  \nB\n"


def test_exact_rules_match_only_exactly() -> None:
    assert _update(b"a\r\nb\r\n", "@@\n-b\n+B\n", patches.EXACT) == b"a\r\nB\r\n"
    with pytest.raises(patches.PatchError):
        _update(b"a \nb\n", "@@\n-a\n+A\n", patches.EXACT)


@pytest.mark.parametrize("text", ["", "a", "a\n", "a\r\n", "a\r", "a\r\r\nb", "\r\n\n\r", "x\ry\nz\r\nw"])
def test_split_lines_gives_the_text_back(text: str) -> None:
    for lf_only in (True, False):
        lines = patches.split_lines(text, lf_only)
        assert "".join(t + (e or "") for t, e in lines) == text
        assert all("\n" not in t and (lf_only or "\r" not in t) for t, _ in lines)


# --- OpenClaw's own parser and applier (ported; tests/hosts/openclaw/test_openclaw_patch_model.py
# holds them against the real CLI) -------------------------------------------------------------


def _oc(before: bytes, *body: str) -> bytes | None:
    try:
        (op,) = patchmodel.parse_openclaw(v4a("*** Update File: m", *body))
        return patchmodel.openclaw_update(before, op.hunks)
    except patches.PatchError:
        return None


def test_openclaw_seek_refuses_what_matches_twice_at_the_first_normaliser_that_matches() -> None:
    assert patchmodel.openclaw_seek(["x", "y", "x"], ["x"], 0, False) == (patchmodel.AMBIGUOUS, 2)
    assert patchmodel.openclaw_seek(["x ", "y", "x"], ["x"], 0, False) == (patchmodel.FOUND, 2)  # exact decides
    assert patchmodel.openclaw_seek(["x ", "y", "x\t"], ["x"], 0, False) == (patchmodel.AMBIGUOUS, 2)
    assert patchmodel.openclaw_seek(["x", "y", "x"], ["x"], 0, True) == (patchmodel.FOUND, 2)  # End of File: one place
    assert patchmodel.openclaw_seek(["\ufeffa"], ["a"], 0, False) == (patchmodel.FOUND, 0)  # JS trim() removes U+FEFF
    assert patchmodel.openclaw_seek(["a\x85"], ["a"], 0, False) == (patchmodel.MISSING, 0)  # ... and not U+0085
    assert patchmodel.openclaw_seek(["a \u2014 b"], ["a - b"], 0, False) == (patchmodel.FOUND, 0)


def test_openclaw_new_lines_take_the_endings_of_the_lines_they_replace() -> None:
    assert _oc(b"a\r\nb\nc\r\n", "@@", "-b", "+B1", "+B2") == b"a\r\nB1\nB2\nc\r\n"
    assert _oc(b"a\r\nb\nc\r\n", "@@", "-a", "-b", "+x") == b"x\nc\r\n"
    assert _oc(b"a\nb", "@@", "-b", "+B", "+C") == b"a\nB\nC"  # the unterminated line's "" goes last
    assert _oc(b"a\nb", "@@", "+c") == b"a\nb\nc"
    assert _oc(b"a\nb", "@@ a", "+c") == b"a\nc\nb"
    assert _oc(b"a\rb\rc\r", "@@", " b", "+x") == b"a\rb\rx\rc\r"
    assert _oc(b"", "@@", "+x") == b"x\n"


def test_openclaw_context_lines_keep_the_file_bytes_and_a_bom_stays() -> None:
    assert _oc(b"a \t\nb\n", "@@", " a", "+c") == b"a \t\nc\nb\n"
    assert _oc(b"\xef\xbb\xbfa\nb\n", "@@", "-a", "+A") == b"\xef\xbb\xbfA\nb\n"
    assert _oc(b"\xef\xbb\xbfa\nb\n", "@@ \ufeffa", "+x") == b"\xef\xbb\xbfa\nx\nb\n"


def test_openclaw_refusals() -> None:
    assert _oc(b"x\ny\nx\n", "@@", "-x", "+z") is None
    assert _oc(b"h\na\nh\nb\n", "@@ h", "-b", "+B") is None  # an ambiguous @@ context
    assert _oc(b"a\n", "@@ nowhere", "+x") is None
    assert _oc(b"x\ny\nz\n", "@@", "-x", "+w", "*** End of File") is None
    assert _oc(b"a\xff\nb\n", "@@", "-b", "+B") is None  # not UTF-8
    for body in (("@@", "-a", "+A", "@@x", "-b"), ("@@", "?a"), ("@@", "*** End of File"), ("@@",)):
        with pytest.raises(patches.PatchError):
            patchmodel.parse_openclaw(v4a("*** Update File: m", *body))


def test_openclaw_parser_details() -> None:
    (op,) = patchmodel.parse_openclaw(v4a("*** Update File: m", "@@ ", "-b", "+B", "\t", "@@ k", "+x", "*** End of File"))
    assert [(h.context, h.old, h.new, h.at_eof) for h in op.hunks] == [(None, ["b"], ["B"], False), ("k", [], ["x"], True)]
    # a final blank old line the file lacks is retried without it; the new blank line stays
    assert _oc(b"a\nb\n", "@@", " b", " ", "+c") == b"a\nb\n\nc\n"
    assert _oc(b"a\r\nb", "@@", "-b", "+b") == b"a\r\nb"  # a change of endings only: nothing written
    text = "<<'EOF'\n" + v4a("*** Add File: n", "+x") + "EOF"
    assert [o.content for o in patchmodel.parse_openclaw(text)] == ["x\n"]


def test_openclaw_judges_two_operations_on_one_file_by_their_worst_case(tmp_path: Path) -> None:
    import json

    from engramory.hosts import openclaw

    index = tmp_path / "MEMORY.md"
    index.write_text("".join("- [n%d](n%d.md)\n" % (i, i) for i in range(196)), encoding="utf-8")
    hunk = ("@@", " - [n1](n1.md)", "+- a", "+- b", "+- c")
    text = v4a("*** Update File: %s" % index, *hunk, "*** Update File: %s" % index, *hunk)
    payload = {"event": "before", "tool": "apply_patch", "params": {"input": text}, "workspace": str(tmp_path)}
    answer = json.loads(openclaw.respond(json.dumps(payload).encode(), {"HOME": str(tmp_path)})[0])
    assert "worst case" in answer["deny"] and "same patch" in answer["deny"]
    # one such operation alone is predicted exactly (199 lines) and allowed
    single = dict(payload, params={"input": v4a("*** Update File: %s" % index, *hunk)})
    assert "deny" not in json.loads(openclaw.respond(json.dumps(single).encode(), {"HOME": str(tmp_path)})[0])
