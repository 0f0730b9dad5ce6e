"""OpenClaw, without its CLI: its edit model on the cases measured on the real host (shared
reference, measured-other-hosts); the real-CLI suite is beside this file."""

from __future__ import annotations

import json
from pathlib import Path

from engramory.hosts import claudelike, openclaw


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
