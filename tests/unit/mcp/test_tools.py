"""The surface: three tools, their schemas under 4,000 characters, every result under 25,000
characters however large the store or the note, views that page with view_range, the index
shown as Claude Code loads it, search hits bounded, and no secret in any result."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engramory.mcp import result, tools
from tests.unit.mcp.mcpkit import Client, make_store, note_text, text

TOKEN = "ghp_" + "Q7w9" * 9


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_store(tmp_path / "store")


def test_three_tools_in_at_most_4000_characters_of_schema(root: Path) -> None:
    listed = Client(root).request("tools/list")["result"]["tools"]
    assert [t["name"] for t in listed] == ["memory_view", "memory_edit", "memory_search"]
    size = len(json.dumps(listed, separators=(",", ":")))
    assert size <= 4000, size
    edit = listed[1]
    assert edit["annotations"]["destructiveHint"] is True and edit["annotations"]["readOnlyHint"] is False
    assert listed[0]["annotations"]["readOnlyHint"] is True and listed[2]["annotations"]["readOnlyHint"] is True
    props = edit["inputSchema"]["properties"]
    for key in ("command", "path", "file_text", "old_str", "new_str", "insert_line", "insert_text", "old_path", "new_path"):
        assert key in props  # the memory tool's own parameter names
    assert "view_range" in listed[0]["inputSchema"]["properties"]


def size_of(r: dict) -> int:  # type: ignore[type-arg]
    return len(json.dumps(r, ensure_ascii=False, separators=(",", ":")))


def test_every_result_stays_under_25000_characters(tmp_path: Path) -> None:
    root = make_store(tmp_path / "big", notes=190, pad=110)  # an index near its byte cap
    for i in range(600):  # and far more notes than the index lists
        (root / ("extra-%04d.md" % i)).write_text(note_text("extra-%04d" % i, "Extra note %d about \u65e5\u672c\u8a9e "
                                                           "and \"quotes\" \\ %s" % (i, "d" * 120)), encoding="utf-8")
    huge = "---\nname: huge\ndescription: a huge note\ntype: user\ncreated: 2026-01-01\nupdated: 2026-01-01\n---\n"
    (root / "huge.md").write_text(huge + ("\x01\"\\\u2028 line\n" * 40000), encoding="utf-8")
    c = Client(root)
    results = [c.call("memory_view", path="/memories"), c.call("memory_view", path="/memories/MEMORY.md"),
               c.call("memory_view", path="/memories/huge.md"), c.call("memory_view", path="/memories/MEMORY.md",
                                                                        view_range=[1, -1]),
               c.call("memory_search", query="extra note"), c.call("memory_search", query="d" * 5000),
               c.call("memory_edit", command="str_replace", path="/memories/MEMORY.md", old_str="x" * 100000,
                      new_str="y")]
    for r in results:
        assert size_of(r) <= result.RESULT_MAX, (size_of(r), text(r)[:200])
    listing = results[0]
    assert "view_range [" in text(listing) and listing["structuredContent"]["total"] == 791
    page2 = c.call("memory_view", path="/memories", view_range=[100, 200])
    assert text(page2).count("/memories/extra-") >= 30 and page2["structuredContent"]["shown"][0] == 100


def test_a_note_view_pages_with_view_range(root: Path) -> None:
    c = Client(root)
    r = c.call("memory_view", path="/memories/ref-000.md")
    assert text(r).splitlines()[1] == "     1\t---" and r["structuredContent"]["lines"] == 8
    r = c.call("memory_view", path="/memories/ref-000.md", view_range=[2, 3])
    assert text(r).splitlines()[1:] == ["     2\tname: ref-000", "     3\tdescription: Reference 000, the alpha dashboard"]
    bad = c.call("memory_view", path="/memories/ref-000.md", view_range=[9, 2])
    assert bad["isError"] and "[1, 8]" in text(bad)


def test_the_index_view_is_the_window_claude_code_loads(tmp_path: Path) -> None:
    root = make_store(tmp_path / "over", notes=210)
    (root / "MEMORY.md").write_text("<!-- kept for the team -->\n" + (root / "MEMORY.md").read_text(encoding="utf-8"),
                                    encoding="utf-8")
    c = Client(root)
    r = c.call("memory_view", path="/memories/MEMORY.md")
    t = text(r)
    s = r["structuredContent"]
    assert s["unit"] == "UTF-16 units" and s["window"] == {"lines": 200, "size": 25000, "unit": "UTF-16 units"}
    assert "lines 202-214 lie past the window" in t and "an HTML comment the host skips" in t
    assert s["shown"] == [1, 201] and "   201\t" in t and "   202\t" not in t
    tail = c.call("memory_view", path="/memories/MEMORY.md", view_range=[202, -1])
    assert "   214\t- [Reference 209](ref-209.md)" in text(tail)


def test_the_root_view_names_the_store_and_lists_no_bodies(root: Path) -> None:
    r = Client(root).call("memory_view", path="/memories")
    t = text(r)
    assert str(root) in t and r["structuredContent"]["root"] == str(root)
    assert "[reference] Reference 000, the alpha dashboard" in t and "Where the ref-000 lives" not in t
    assert text(Client(root).call("memory_view", path="/")) == t  # "/" is the top of the store too


def test_search_gives_at_most_ten_hits_of_at_most_300_characters(tmp_path: Path) -> None:
    root = make_store(tmp_path / "many", notes=40)
    r = Client(root).call("memory_search", query="dashboard reference")
    hits = r["structuredContent"]["results"]
    assert len(hits) == 10
    for block in text(r).split("\n   ")[0:1]:
        assert len(block) <= 300
    lines = text(r).split("\n")
    entries = ["\n".join(lines[i:i + 2]) for i in range(0, 20, 2)]
    assert all(len(e) <= tools.HIT_MAX for e in entries)
    assert Client(root).call("memory_search", query="x", limit=11)["isError"]


def test_no_result_shows_a_secret(root: Path) -> None:
    (root / "leaky.md").write_text(note_text("leaky", "deploy token " + TOKEN, body="the key is %s" % TOKEN),
                                   encoding="utf-8")
    c = Client(root)
    for r in (c.call("memory_view", path="/memories"), c.call("memory_view", path="/memories/leaky.md"),
              c.call("memory_search", query="deploy token"),
              c.call("memory_edit", command="str_replace", path="/memories/leaky.md", old_str=TOKEN, new_str=TOKEN),
              c.call("memory_edit", command="create", path="/memories/x.md", file_text=TOKEN)):
        assert TOKEN not in json.dumps(r), json.dumps(r)[:300]
