"""`engramory merge-index --resolve` outside any merge git knows of: the deduplicated union of
what the markers hold, each pointer once, one note with two texts kept twice and reported, a
line of our own conflict block put back under its heading; through the journal."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from engramory.store import journal
from engramory.sync import resolve
from tests.conftest import ROOT


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engramory", *args], capture_output=True, text=True, timeout=60,
                          cwd=str(ROOT))


def test_git_markers_become_the_union_without_the_base_part() -> None:
    data = (b"# Memory Index\n## user\n- [A](a.md)\n<<<<<<< ours\n- [B](b.md)\n- [C](c.md)\n||||||| base\n"
            b"- [Old](old.md)\n=======\n- [C](c.md)\n- [D](d.md)\n>>>>>>> theirs\n")
    fixed = resolve.union(data)
    assert fixed.data == b"# Memory Index\n## user\n- [A](a.md)\n- [B](b.md)\n- [C](c.md)\n- [D](d.md)\n"
    assert fixed.removed == 1 and fixed.kept_both == []


def test_one_note_with_two_texts_keeps_both_and_says_so() -> None:
    data = b"- [A](a.md) one\n- [B](b.md)\n- [A](a.md) two\n- [B](b.md)\n"
    fixed = resolve.union(data)
    assert fixed.data == b"- [A](a.md) one\n- [B](b.md)\n- [A](a.md) two\n"
    assert fixed.kept_both == ["a.md"] and fixed.removed == 1


def test_our_own_block_goes_back_under_its_headings() -> None:
    data = (b"# Memory Index\n<<<<<<< ours: engramory merge-index: 1 conflict (p.md)\n"
            b'<!-- p.md, under "## project" -->\n- [P one](p.md)\n=======\n<!-- p.md, under "## project" -->\n'
            b"- [P two](p.md)\n>>>>>>> theirs\n\n## user\n- [U](u.md)\n\n## project\n- [Q](q.md)\n")
    fixed = resolve.union(data)
    assert fixed.data == (b"# Memory Index\n\n## user\n- [U](u.md)\n\n## project\n- [Q](q.md)\n"
                          b"- [P one](p.md)\n- [P two](p.md)\n")
    assert fixed.kept_both == ["p.md"]


def test_a_union_twice_folds_the_repeated_heading() -> None:
    data = b"# Memory Index\n## project\n- [A](a.md)\n## project\n- [B](b.md)\n- [A](a.md)\n"
    assert resolve.union(data).data == b"# Memory Index\n## project\n- [A](a.md)\n- [B](b.md)\n"


def test_resolve_cli_through_the_journal(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    root.mkdir()
    bad = b"\xef\xbb\xbf# Memory Index\r\n- [A](a.md)\r\n- [A](a.md)\r\n"
    (root / "MEMORY.md").write_bytes(bad)
    dry = cli("merge-index", "--resolve", str(root), "--dry-run", "--json")
    assert dry.returncode == 0 and json.loads(dry.stdout)["dry_run"] is True
    assert (root / "MEMORY.md").read_bytes() == bad
    done = cli("merge-index", "--resolve", str(root / "MEMORY.md"))
    assert done.returncode == 0, done.stderr
    assert "deduplicated union" in done.stdout and "1 duplicate pointer line taken out" in done.stdout
    assert (root / "MEMORY.md").read_bytes() == b"\xef\xbb\xbf# Memory Index\r\n- [A](a.md)\r\n"
    entry = journal.entries(str(root))[-1]
    assert entry.command == "merge-index"
    assert cli("undo", str(entry.id), str(root)).returncode == 0
    assert (root / "MEMORY.md").read_bytes() == bad
    again = cli("merge-index", "--resolve", str(root))
    assert again.returncode == 0
    clean = cli("merge-index", "--resolve", str(root))
    assert clean.returncode == 0 and "nothing to repair" in clean.stdout


def test_bad_input_is_a_message_not_a_traceback(tmp_path: Path) -> None:
    done = cli("merge-index", "--resolve", str(tmp_path / "nope.md"))
    assert done.returncode == 66 and "cannot be read" in done.stderr and "Traceback" not in done.stderr
    done = cli("merge-index", "a", "b")
    assert done.returncode == 64 and "BASE OURS THEIRS" in done.stderr
    (tmp_path / "o").write_bytes(b"")
    done = cli("merge-index", str(tmp_path / "o"), str(tmp_path / "missing"), str(tmp_path / "o"), "7", "MEMORY.md")
    assert done.returncode == 66 and "ours is left as it was" in done.stderr
    done = cli("merge-index", str(tmp_path / "o"), str(tmp_path / "o"), str(tmp_path / "o"), "x")
    assert done.returncode == 64 and "marker size" in done.stderr
