"""The six hosts of issue 15 without their CLIs: each edit model on the cases measured on the
real host (shared reference, measured-other-hosts), each dialect on bad input (always an
answer that lets the call through, exit 0), and each registry declaration. The real-CLI suites
are tests/{qwen,droid,copilot,opencode,cline,openclaw}."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engramory import hosts
from engramory.hosts import answer, claudelike, cline, copilot, droid, openclaw, opencode, qwen

NEW_HOSTS = ("qwen", "droid", "copilot", "opencode", "cline", "openclaw")
GARBAGE = (b"", b"not json", b"[1, 2]", b"\xff\xfe\x00", b'{"tool_name": 5}', b'{"event": "before", "tool": "edit", "args": 7}')


@pytest.mark.parametrize("name", NEW_HOSTS)
def test_each_host_is_registered_with_its_declarations(name: str) -> None:
    mod = hosts.load(name)
    assert mod.NAME == name and mod.TITLE and mod.VERIFIED
    assert mod.window().size is not None
    assert isinstance(mod.index_paths("/p", {"HOME": "/h"}), list)
    installer = __import__(mod.INSTALLER, fromlist=["install"])
    assert callable(installer.install) and callable(installer.uninstall) and callable(installer.check)


@pytest.mark.parametrize("name", NEW_HOSTS)
@pytest.mark.parametrize("raw", GARBAGE)
def test_bad_input_is_let_through_with_exit_zero(name: str, raw: bytes) -> None:
    mod = hosts.load(name)
    for entry in ("respond", "post", "start"):
        fn = getattr(mod, entry, None)
        if fn is None:
            continue
        out, _, code = answer(fn, raw, "t", env={})
        assert code == 0
        assert out in ("", "{}"), out


# -- Qwen Code ------------------------------------------------------------------------------


def test_qwen_rewrites_a_mixed_file_all_crlf_and_matches_trailing_spaces_and_quotes() -> None:
    assert qwen.apply_edit(b"a\nb\r\nc\n", "b", "B", False) == b"a\r\nB\r\nc\r\n"
    assert qwen.apply_edit(b"x   \ny\n", "x\ny", "Z", False) == b"Z\n"
    assert qwen.apply_edit(b"it\xe2\x80\x99s\n", "it's", "its", False) == b"its\n"
    assert qwen.apply_edit(b"a\na\n", "a", "b", False) is None  # two occurrences
    assert qwen.apply_edit(b"a\na\n", "a", "b", True) == b"b\nb\n"
    assert qwen.apply_edit(None, "", "new\n", False) == b"new\n"
    assert qwen.apply_edit(b"x\n", "", "new\n", False) is None  # create over an existing file
    assert qwen.apply_edit(b"\xef\xbb\xbfa\n", "a", "b", False) == b"\xef\xbb\xbfb\n"
    assert qwen.apply_write(b"a\r\n", "x\ny\n") == b"x\r\ny\r\n"


def test_qwen_indexes_follow_its_settings() -> None:
    env = {"HOME": "/h"}
    assert qwen.index_paths("/w/p", env)[0] == "/h/.qwen/projects/-w-p/memory/MEMORY.md"
    assert qwen.index_paths("/w/p", dict(env, QWEN_CODE_MEMORY_LOCAL="1"))[0] == "/w/p/.qwen/memory/MEMORY.md"
    assert qwen.index_paths("/w/p", dict(env, QWEN_CODE_MEMORY_BASE_DIR="/m"))[1] == "/m/memories/MEMORY.md"


# -- Factory droid --------------------------------------------------------------------------


def test_droid_matches_exactly_and_rewrites_a_mixed_file_all_lf() -> None:
    assert droid.apply_edit(b"a\r\nb\r\n", "a\nb", "X", False) == b"X\r\n"
    assert droid.apply_edit(b"a\nb\r\nc\n", "b", "B", False) == b"a\nB\nc\n"
    assert droid.apply_edit(b"x   \n", "x\n", "y\n", False) is None  # no whitespace fuzz
    assert droid.apply_edit(b"a\n", "", "b", False) is None
    assert droid.apply_create(b"\xef\xbb\xbfold\n", "new\n") == b"\xef\xbb\xbfnew\n"
    assert droid.apply_create(b"o\r\nld\r\n", "n\new\n") == b"n\r\new\r\n"


# -- Copilot CLI ----------------------------------------------------------------------------


def test_copilot_keeps_each_lines_ending_and_bounds_loose_matches() -> None:
    edit = claudelike.EDIT
    assert copilot.predict_with_bound(b"a\nb\r\nc", {"old_str": "a\nb", "new_str": "A\nB"}, edit) == (b"A\nB\r\nc", 0)
    after, bound = copilot.predict_with_bound(b"    line1\n    line2\n", {"old_str": "line1\nline2", "new_str": "X\nY"}, edit)
    assert after == b"    X\n    Y\n" and bound > 0  # re-indented, as measured
    assert copilot.predict_with_bound(b"a\nx\na\n", {"old_str": "a", "new_str": "b"}, edit) == (None, 0)
    assert copilot.predict_with_bound(b"x\n", {"path": "p", "file_text": "y"}, claudelike.WRITE) == (None, 0)


def test_copilot_never_denies_on_bytes_inside_its_bound(tmp_path: Path) -> None:
    from engramory import guard

    index = tmp_path / "MEMORY.md"
    before = b"x" * 24_998 + b"\n"
    index.write_bytes(before)
    decision = guard.judge(str(index), before, before + b"yy\n", {}, None, "edit")
    assert decision is not None and decision.action == guard.DENY
    assert claudelike.lenient(decision, 10) is None  # might really shrink: not denied
    assert claudelike.lenient(decision, 0) is decision


# -- opencode -------------------------------------------------------------------------------


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
    from engramory import patches

    (op,) = patches.parse_v4a("*** Begin Patch\n*** Update File: f\n@@\n a\n-b\n+B\n c\n*** End Patch")
    assert opencode.apply_patch_update(b"a\r\nb\r\nc\r\n", op.hunks) == b"a\nB\nc\n"
    assert opencode.apply_patch_add("x") == b"x\n"


# -- Cline ----------------------------------------------------------------------------------


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


# -- OpenClaw -------------------------------------------------------------------------------


def test_openclaw_edits_are_all_or_nothing_against_the_original() -> None:
    assert openclaw.apply_edits(b"a\nb\n", [("a", "A"), ("b", "B")]) == (b"A\nB\n", 0)
    assert openclaw.apply_edits(b"a\nb\n", [("a", "b"), ("b", "c")]) == (b"b\nc\n", 0)  # not chained
    assert openclaw.apply_edits(b"ab\n", [("ab", "x"), ("b", "y")])[0] is None  # overlap
    assert openclaw.apply_edits(b"a\na\n", [("a", "x")])[0] is None
    assert openclaw.apply_edits(b"x   \ny\n", [("x\ny", "Z")]) == (b"Z\n", 0)
    assert openclaw.apply_edits(b"a\r\nb\r\n", [("a", "A")]) == (b"A\r\nb\r\n", 0)
    assert openclaw.apply_write("\ufeffc\nd\n") == b"c\nd\n"


def test_openclaw_exact_matches_on_text_nfkc_would_change_are_predicted() -> None:
    # OpenClaw tries the exact match first: a fullwidth letter or a ligature elsewhere in the
    # file changes nothing about it (this used to be taken for a refusal: a silent pass).
    before = "- \uff21 fullwidth\n- \ufb01le ligature\n- plain\n".encode()
    assert openclaw.apply_edits(before, [("- plain\n", "- plain\n- new\n")]) == (before + b"- new\n", 0)


def test_openclaw_matches_only_nfkc_could_make_are_judged_by_their_worst_case() -> None:
    before = "- \ufb01le one\n- two\n".encode()  # "\ufb01" is the "fi" ligature; NFKC makes it "fi"
    after, bound = openclaw.apply_edits(before, [("- file one\n", "- file one\n- added\n")])
    assert isinstance(after, claudelike.Unknown) and bound == 0
    assert after.added == "- file one\n- added\n" and "NFKC" in after.why
    # Missing or ambiguous once normalised: OpenClaw refuses it, so nothing is said.
    assert openclaw.apply_edits(before, [("- filing\n", "x")])[0] is None
    twice = "- \ufb01le\n- file\n".encode()
    assert openclaw.apply_edits(twice, [("- file ", "x")])[0] is None  # "- file" twice once normalised
    # One edit OpenClaw surely refuses refuses the whole call, whatever the others are.
    assert openclaw.apply_edits(before, [("- file one\n", "y"), ("- three\n", "z")])[0] is None


def test_openclaw_denies_an_nfkc_match_that_would_grow_a_full_index(tmp_path: Path) -> None:
    index = tmp_path / "MEMORY.md"
    lines = ["- [n%d](n%d.md) - \ufb01ne point %d\n" % (i, i, i) for i in range(200)]
    index.write_text("".join(lines), encoding="utf-8")
    old = lines[10].replace("\ufb01", "fi")  # matches only after NFKC
    payload = {"event": "before", "tool": "edit", "params": {"path": str(index), "oldText": old, "newText": old + "- more\n"}}
    out, _, code = openclaw.respond(json.dumps(payload).encode(), {"HOME": str(tmp_path)})
    answer = json.loads(out)
    assert code == 0 and "NFKC" in answer["deny"] and "worst case" in answer["deny"]
    # The same edit spelled exactly is predicted exactly, and denied on its real result.
    exact = dict(payload, params=dict(payload["params"], oldText=lines[10], newText=lines[10] + "- more\n"))
    answer = json.loads(openclaw.respond(json.dumps(exact).encode(), {"HOME": str(tmp_path)})[0])
    assert "201 lines" in answer["deny"] and "worst case" not in answer["deny"]


def test_openclaw_judges_its_workspace_index_by_its_character_window(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    config = tmp_path / ".openclaw" / "openclaw.json"
    config.parent.mkdir()
    config.write_text(json.dumps({"agents": {"defaults": {"workspace": str(ws)}}}))
    env = {"HOME": str(tmp_path)}
    assert openclaw.index_paths("", env) == [str(ws / "MEMORY.md")]
    content = "".join("- [n%d](n%d.md) - %s\n" % (i, i, "x" * 140) for i in range(150))
    payload = {"event": "before", "tool": "write", "params": {"path": "MEMORY.md", "content": content}}
    out, _, code = openclaw.respond(json.dumps(payload).encode(), env)
    answer = json.loads(out)
    assert code == 0 and "characters (hard cap 20,000" in answer["deny"] and "the middle dropped" in answer["deny"]
    other = dict(payload, params={"path": str(tmp_path / "MEMORY.md"), "content": content})
    assert "deny" not in json.loads(openclaw.respond(json.dumps(other).encode(), env)[0])  # the standard caps: a nudge at most
