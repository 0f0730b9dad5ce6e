"""Cursor's ApplyPatch, judged by its worst case (Cursor's applier cannot be measured here):
exact where the old lines match exactly, with the largest line endings; otherwise every new
line added and none removed."""

from __future__ import annotations

import json
from pathlib import Path

from engramory import patches
from engramory.hosts import cursor

HARD = {"ENGRAMORY_HARD": "10", "ENGRAMORY_WARN": "9"}


def _index(n: int, eol: str = "\n") -> bytes:
    return "".join("- [note %d](note-%d.md) - hook %d%s" % (i, i, i, eol) for i in range(n)).encode()


def _call(tmp_path: Path, patch: str, env: dict[str, str] | None = None) -> tuple[dict[str, str], str, int]:
    payload = {"hook_event_name": "preToolUse", "cwd": str(tmp_path), "tool_name": "ApplyPatch", "tool_input": {"patch": patch}}
    out, err, code = cursor.handle(json.dumps(payload).encode(), dict(HARD, **(env or {})))
    return json.loads(out), err, code


def _patch(*body: str, path: str = "MEMORY.md") -> str:
    return "*** Begin Patch\n*** Update File: %s\n%s\n*** End Patch\n" % (path, "\n".join(body))


def test_worst_update_keeps_crlf_on_every_line() -> None:
    before = b"a\r\nb\r\n"
    (op,) = patches.parse(_patch("@@", "-b", "+B", "+C"))
    assert cursor.worst_update(before, op) == b"a\r\nB\r\nC\r\n"
    # a mixed file: any CRLF makes every line CRLF in the worst case
    (op,) = patches.parse(_patch("@@", " a", "+n"))
    assert cursor.worst_update(b"a\nb\r\nc", op) == b"a\r\nn\r\nb\r\nc\r\n"
    # an LF file stays LF, and its missing final newline is added
    assert cursor.worst_update(b"a\nb", op) == b"a\nn\nb\n"


def test_worst_update_gives_nothing_where_matchers_can_disagree() -> None:
    for before, body in [
        (b"a  \nb\n", ("@@", "-a", "+A")),  # trailing whitespace: only a loose matcher finds it
        ("it\u2019s\n".encode(), ("@@", "-it's", "+x")),  # typography
        (b"a\n", ("@@", "-z", "+x")),  # not there at all
        (b"a\rb\n", ("@@", "-b", "+B")),  # a lone CR: is b a line of its own?
    ]:
        (op,) = patches.parse(_patch(*body))
        assert cursor.worst_update(before, op) is None


def test_crlf_index_growth_is_judged_with_crlf_bytes(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_bytes(_index(8, "\r\n"))
    size = len(_index(8, "\r\n"))
    line = "- [new](new.md) - x"
    env = {"ENGRAMORY_HARD_BYTES": str(size + len(line) + 1), "ENGRAMORY_WARN_BYTES": str(size + len(line) + 2)}
    # one new line: with CRLF it is len(line) + 2 bytes, one over the byte cap
    out, err, code = _call(tmp_path, _patch("@@", " - [note 7](note-7.md) - hook 7", "+" + line), env)
    assert code == 2 and out["permission"] == "deny"
    assert "would be 9 lines / %s bytes" % format(size + len(line) + 2, ",") in out["user_message"]


def test_an_exact_swap_at_the_cap_is_allowed(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_bytes(_index(10, "\r\n"))
    out, err, code = _call(tmp_path, _patch("@@", "-- [note 3](note-3.md) - hook 3", "+- [note 3](note-3.md) - hook 3!"))
    assert code == 0 and out == {}


def test_a_loose_match_is_judged_as_every_new_line_added(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_bytes(_index(10))
    # the old line is quoted with a trailing space: Codex would swap it in place (10 lines),
    # but Cursor's matcher is unknown, so the new line counts as added: 11 > 10
    out, err, code = _call(tmp_path, _patch("@@", "-- [note 3](note-3.md) - hook 3 ", "+- [note 3](note-3.md) - x"))
    assert code == 2
    assert "up to 11 lines" in out["user_message"] and "not known" in out["agent_message"]
    # a loose patch that only removes lines adds nothing, and is allowed
    out, err, code = _call(tmp_path, _patch("@@", "-- [note 3](note-3.md) - hook 3 "))
    assert code == 0


def test_a_loose_move_into_the_index_counts_the_source_too(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_bytes(_index(2))
    (tmp_path / "draft.md").write_bytes(_index(10))
    patch = ("*** Begin Patch\n*** Update File: draft.md\n*** Move to: MEMORY.md\n@@\n"
             "-- [note 1](note-1.md) - hook 1 \n+- [one](one.md)\n*** End Patch\n")
    out, err, code = _call(tmp_path, patch)
    assert code == 2 and "11 lines" in out["user_message"]


def test_a_unified_diff_on_a_crlf_index_is_bounded(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_bytes(_index(10, "\r\n"))
    diff = "--- a/MEMORY.md\n+++ b/MEMORY.md\n@@ -1,1 +1,2 @@\n - [note 0](note-0.md) - hook 0\n+- [x](x.md)\n"
    out, err, code = _call(tmp_path, diff)
    assert code == 2 and "up to 11 lines" in out["user_message"]
