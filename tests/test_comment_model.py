"""Issue 19, a loose end of items 5 and 6: one model of the HTML comments in an index.
`store` and `notes.IndexLines` took an unclosed `<!--` for a comment running to the end of
the file, while `layout` (like Claude Code, which loads such a line and all after it) does not:
on such an index `new` added a second `## user` section and the doctor reported the notes
after it as orphans. Now all three use layout's (layout.comment_lines). Also: an index of many
unclosed `<!--` lines cost layout quadratic time (480 KB: 60 s), on the guard's path too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engramory import layout, size
from engramory.curate import notes
from engramory.doctor import codes
from engramory.doctor import run as doctor
from engramory.store import reader as store
from engramory.store.pointers import note_links

ROOT = Path(__file__).resolve().parent.parent
ENTRY_POINTS = {
    "module": [sys.executable, "-m", "engramory"],
    "tool": [sys.executable, "-I", "-S", str(ROOT / "tools" / "engramory.py")],
}
NOTE = "---\nname: %s\ndescription: %s\ntype: user\ncreated: 2026-01-01\nupdated: 2026-01-01\n---\n%s\n"
UNCLOSED = ("# Memory Index\n\n<!-- curated by hand: keep the oldest first\n\n## user\n"
            "- [Alpha fact](alpha.md) \u2014 the build cache\n")


def cli(entry: str, *args: object) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAMORY_")}
    done = subprocess.run([*ENTRY_POINTS[entry], *map(str, args)], capture_output=True, text=True, env=env,
                          timeout=60, stdin=subprocess.DEVNULL)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def errors(root: Path) -> list[tuple[str, str | None]]:
    _, found = doctor.audit(str(root), codes.Context(git=False))
    return [(f.code, f.path) for f in found if f.severity == codes.ERROR]


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_new_on_an_index_with_an_unclosed_comment_adds_under_its_heading(tmp_path: Path, entry: str) -> None:
    root = tmp_path / "mem"
    root.mkdir()
    (root / "alpha.md").write_text(NOTE % ("alpha", "Alpha fact about the build cache", "It lives in /var."))
    (root / "MEMORY.md").write_text(UNCLOSED)
    assert errors(root) == []  # alpha's pointer is loaded by the host: not an orphan
    done = cli(entry, "new", root, "--type", "user", "--name", "beta", "--description", "Beta fact about releases",
               "--body", "Releases leave on Tuesdays.", "--json")
    assert done.returncode == 0, done.stderr
    index = (root / "MEMORY.md").read_text()
    assert index.count("## user") == 1, index
    assert index == UNCLOSED + "- [Beta fact about releases](beta.md)\n"
    assert json.loads(done.stdout)["index"]["line"] == 7
    assert errors(root) == []
    done = cli(entry, "archive", "alpha", "--root", root)
    assert done.returncode == 0, done.stderr
    assert "(alpha.md)" not in (root / "MEMORY.md").read_text()


def test_a_line_after_a_closed_comment_on_its_own_line_is_the_note_s_entry(tmp_path: Path) -> None:
    """The host drops a comment block up to the end of the line with `-->` and keeps what
    else that line holds: a pointer there is loaded, so it is the note's entry."""
    text = "# Memory Index\n\n## user\n<!-- pinned --> - [Alpha fact](alpha.md) \u2014 the cache\n"
    root = tmp_path / "mem"
    root.mkdir()
    (root / "alpha.md").write_text(NOTE % ("alpha", "Alpha fact about the build cache", "It lives in /var."))
    (root / "MEMORY.md").write_text(text)
    assert errors(root) == []
    assert notes.IndexLines(text.encode()).pointer_lines("alpha.md") == [3]


PIECES = ("<!--", "-->", "<!-- c -->", "## user", "# Title", "- [A](a.md) x", "- [B](b.md) [A](a.md)",
          "text", "", "   ", "<p>", "  <!--", "\t", "- [C](c.md)")
LINES = st.lists(st.lists(st.sampled_from(PIECES), min_size=1, max_size=3).map(" ".join), max_size=14)
HOST = size.Window(unit=size.UTF16, lines=None, size=None, trim=True, skip_frontmatter=True, skip_comments=True)


def pointers_three_ways(text: str) -> tuple[dict[int, str], dict[int, str], list[str]]:
    """(line -> pointer by the store, line -> entry by IndexLines, the pointers of the lines
    the host loads by layout's model, in order)."""
    data = text.encode()
    st_ = store.Store("/nonexistent", "MEMORY.md")
    st_.caps = size.Caps(10_000, 1_000_000, 10_000, 1_000_000)
    st_.index_raw = data
    store._parse_pointers(st_, text)
    by_store = {p.line - 1: p.target for p in st_.pointers}
    _, links = notes.IndexLines(data).scan()
    by_lines = {i: targets[0] for i, targets in links}
    loaded = []
    for _number, piece, _whole, _loaded in layout.counted_lines(HOST, data):
        found = note_links(piece)
        if found and not store.HEADING_RE.match(piece):
            loaded.append(found[0][1])
    return by_store, by_lines, loaded


@settings(max_examples=400, deadline=None)
@given(LINES, st.booleans())
def test_store_index_lines_and_layout_agree_on_every_pointer(lines: list[str], crlf: bool) -> None:
    """The store's pointers and IndexLines' entries are the same lines, and they are exactly
    the pointers of what the host loads (layout's model, with no cut: the size is not the point
    here). No fences: a fence's links are loaded text but not pointers, which layout does not
    say."""
    nl = "\r\n" if crlf else "\n"
    by_store, by_lines, loaded = pointers_three_ways(nl.join(lines) + nl)
    assert by_store == by_lines
    assert [by_store[i] for i in sorted(by_store)] == loaded


@settings(max_examples=200, deadline=None)
@given(LINES.map(lambda lines: [line.replace("<p>", "```") for line in lines]))
def test_with_fences_the_store_and_index_lines_still_agree(lines: list[str]) -> None:
    by_store, by_lines, loaded = pointers_three_ways("\n".join(lines) + "\n")
    assert by_store == by_lines
    assert set(by_store.values()) <= set(loaded)


def test_many_unclosed_comment_lines_cost_linear_time() -> None:
    data = b"<!--\n\n" * 80_000  # 480 KB: 60 s before (each line searched the rest for a -->)
    win = size.Window(unit=size.UTF16, lines=200, size=25_000, trim=True)
    start = time.perf_counter()
    win.layout(data)
    layout.comment_lines(data.decode())
    assert time.perf_counter() - start < 2.0
