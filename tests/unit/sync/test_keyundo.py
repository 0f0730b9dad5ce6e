"""Undo by key: after the index moved on (a sync merged other notes in), `engramory undo ID`
of an earlier write takes back exactly that write's index lines and leaves the rest."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from engramory.store import journal
from engramory.sync import keyundo
from tests.conftest import ROOT

TITLE = b"# Memory Index\n\n## user\n"


def test_the_write_is_taken_back_and_the_rest_stays() -> None:
    before = TITLE + b"- [A](a.md)\n"
    after = before + b"- [B](b.md)\n"
    current = after + b"- [C](c.md) - from the other machine\n"
    assert keyundo.undo_index_by_key(before, after, current) == before + b"- [C](c.md) - from the other machine\n"


def test_an_archive_comes_back_under_its_heading() -> None:
    before = TITLE + b"- [A](a.md)\n- [B](b.md)\n\n## project\n- [P](p.md)\n"
    after = TITLE + b"- [B](b.md)\n\n## project\n- [P](p.md)\n"
    current = TITLE + b"- [B](b.md)\n\n## project\n- [P](p.md)\n- [Q](q.md)\n"
    assert keyundo.undo_index_by_key(before, after, current) == before.replace(b"- [P](p.md)\n", b"- [P](p.md)\n- [Q](q.md)\n")


def test_a_line_changed_since_is_refused() -> None:
    before = TITLE + b"- [A](a.md)\n"
    after = TITLE + b"- [A](a.md) - v2\n"
    current = TITLE + b"- [A](a.md) - v3 from elsewhere\n"
    assert keyundo.undo_index_by_key(before, after, current) is None


def test_unchanged_index_is_byte_for_byte() -> None:
    assert keyundo.undo_index_by_key(b"x\r\n", b"y\r\n", b"y\r\n") == b"x\r\n"
    assert keyundo.undo_index_by_key(None, b"y\n", b"y\n") == b""


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-I", "-S", str(ROOT / "tools" / "engramory.py"), *args],
                          capture_output=True, text=True, timeout=60)


def test_undo_of_a_new_after_a_sync_merged_other_notes(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    root.mkdir()
    (root / "MEMORY.md").write_bytes(TITLE + b"- [Old](old.md)\n")
    (root / "old.md").write_text("---\nname: old\ndescription: d\ntype: user\ncreated: 2026-01-01\n"
                                 "updated: 2026-01-01\n---\nx\n", encoding="utf-8")
    done = cli("new", str(root), "--type", "user", "--name", "mine", "--description",
               "The user reviews pull requests on Fridays", "--body", "Fridays only.")
    assert done.returncode == 0, done.stderr
    mine = journal.entries(str(root))[-1].id
    ours = (root / "MEMORY.md").read_bytes()
    # what a sync does: the merge brings another machine's note in, journaled as the pull
    merged = ours + b"- [Theirs](theirs.md) - saved on the laptop\n"
    (root / "theirs.md").write_text("t\n", encoding="utf-8")
    (root / "MEMORY.md").write_bytes(merged)
    journal.record(str(root), "sync", [journal.Change("MEMORY.md", ours, merged), journal.Change("theirs.md", None, b"t\n")],
                   ["pull"])
    done = cli("undo", str(mine), str(root))
    assert done.returncode == 0, done.stderr
    assert not (root / "mine.md").exists()
    assert (root / "MEMORY.md").read_bytes() == TITLE + b"- [Old](old.md)\n- [Theirs](theirs.md) - saved on the laptop\n"
    assert (root / "theirs.md").read_text(encoding="utf-8") == "t\n"
    # and the undo is itself undone byte for byte
    redo = journal.entries(str(root))[-1].id
    assert cli("undo", str(redo), str(root)).returncode == 0
    assert (root / "MEMORY.md").read_bytes() == merged and (root / "mine.md").exists()


def test_no_id_undo_leaves_the_pull_alone(tmp_path: Path) -> None:
    """`engramory undo` with no ID takes back our own newest write, not the pull a sync made
    (undoing that would push the deletion of another machine's notes at the next sync)."""
    root = tmp_path / "mem"
    root.mkdir()
    (root / "MEMORY.md").write_bytes(TITLE)
    assert cli("new", str(root), "--type", "user", "--name", "mine", "--description",
               "The user reviews pull requests on Fridays", "--body", "Fridays only.").returncode == 0
    ours = (root / "MEMORY.md").read_bytes()
    merged = ours + b"- [Theirs](theirs.md)\n"
    (root / "MEMORY.md").write_bytes(merged)
    journal.record(str(root), "sync", [journal.Change("MEMORY.md", ours, merged)], ["pull"])
    done = cli("undo", str(root))
    assert done.returncode == 0, done.stderr
    assert "undid entry 1" in done.stdout
    assert (root / "MEMORY.md").read_bytes() == TITLE + b"- [Theirs](theirs.md)\n"
