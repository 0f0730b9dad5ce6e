"""Qwen Code, without its CLI: its edit model on the cases measured on the real host (shared
reference, measured-other-hosts); the real-CLI suite is beside this file."""

from __future__ import annotations

from engramory.hosts import qwen


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
