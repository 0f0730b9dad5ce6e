"""The journal API: transactions under the store lock, preconditions, atomic writes with the
mode kept, one entry per transaction, bounded blobs without secrets, record() and undo()."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from engramory.store import journal
from engramory.store.journal import Change, JournalConflict, JournalError

ROOT = Path(__file__).resolve().parents[3]


def files(root: Path) -> dict[str, bytes]:
    """Every file of the store outside .engramory/, by relative path."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and not rel.startswith(".engramory/"):
            out[rel] = p.read_bytes()
    return out


def test_transaction_writes_and_journals_one_entry(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_bytes(b"# Memory Index\n")
    with journal.transaction(str(tmp_path), command="new", argv=["--name", "x"]) as tx:
        idx = tx.read("MEMORY.md")
        assert idx == b"# Memory Index\n"
        tx.write("x.md", b"note\n")
        tx.write("MEMORY.md", idx + b"- [x](x.md)\n")
    assert files(tmp_path) == {"MEMORY.md": b"# Memory Index\n- [x](x.md)\n", "x.md": b"note\n"}
    found = journal.entries(str(tmp_path))
    assert len(found) == 1
    e = found[0]
    assert tx.entry is not None and tx.entry.id == e.id == 1
    assert e.command == "new" and e.argv == ["--name", "x"]
    by = {c.path: c for c in e.changes}
    assert by["x.md"].before is None and by["x.md"].after == journal.sha256(b"note\n")
    assert by["MEMORY.md"].before_size == 15 and by["MEMORY.md"].after_size == 27
    assert e.time.endswith("Z")


def test_exception_inside_block_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"a")
    with pytest.raises(RuntimeError):
        with journal.transaction(str(tmp_path), command="t") as tx:
            tx.write("a.md", b"changed")
            tx.write("b.md", b"new")
            raise RuntimeError("boom")
    assert files(tmp_path) == {"a.md": b"a"}
    assert journal.entries(str(tmp_path)) == []


def test_precondition_conflict_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_bytes(b"one\n")
    with pytest.raises(JournalConflict, match="MEMORY.md changed"):
        with journal.transaction(str(tmp_path), command="t") as tx:
            data = tx.read("MEMORY.md")
            (tmp_path / "MEMORY.md").write_bytes(b"someone else\n")  # a writer outside engramory
            tx.write("MEMORY.md", (data or b"") + b"two\n")
            tx.write("new.md", b"x")
    assert files(tmp_path) == {"MEMORY.md": b"someone else\n"}
    assert journal.entries(str(tmp_path)) == []


def test_mode_kept_and_new_file_mode(tmp_path: Path) -> None:
    p = tmp_path / "a.md"
    p.write_bytes(b"a")
    p.chmod(0o640)
    with journal.transaction(str(tmp_path), command="t") as tx:
        tx.write("a.md", b"b")
        tx.move("a.md", "archive/a.md")
    assert not p.exists()
    moved = tmp_path / "archive" / "a.md"
    assert moved.read_bytes() == b"b"
    assert moved.stat().st_mode & 0o777 == 0o640
    journal.undo(str(tmp_path))
    assert p.read_bytes() == b"a" and p.stat().st_mode & 0o777 == 0o640
    assert not moved.exists()


def test_no_change_no_entry(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"a")
    with journal.transaction(str(tmp_path), command="t") as tx:
        tx.write("a.md", b"a")
    assert tx.entry is None
    assert journal.entries(str(tmp_path)) == []


@pytest.mark.parametrize("bad", ["../x.md", "/etc/x", "a/../b.md", ".engramory/journal.jsonl", "a\\b.md", "", "./a.md"])
def test_paths_outside_the_store_refused(tmp_path: Path, bad: str) -> None:
    with pytest.raises(JournalError):
        with journal.transaction(str(tmp_path), command="t") as tx:
            tx.write(bad, b"x")
    assert files(tmp_path) == {}


def test_symlink_not_followed_or_replaced(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "t.md").write_bytes(b"theirs")
    store = tmp_path / "store"
    store.mkdir()
    (store / "link.md").symlink_to(outside / "t.md")
    (store / "dir").symlink_to(outside)
    for rel in ("link.md", "dir/x.md"):
        with pytest.raises(JournalError):
            with journal.transaction(str(store), command="t") as tx:
                tx.write(rel, b"mine")
    assert (outside / "t.md").read_bytes() == b"theirs"
    assert not (outside / "x.md").exists()


def test_undo_byte_for_byte_and_journaled(tmp_path: Path) -> None:
    root = str(tmp_path)
    (tmp_path / "MEMORY.md").write_bytes(b"v0\r\n\xe6\x97\xa5")
    snapshots = [files(tmp_path)]
    for i in range(1, 4):
        with journal.transaction(root, command="c%d" % i) as tx:
            tx.write("MEMORY.md", (tx.read("MEMORY.md") or b"") + b"line %d\n" % i)
            tx.write("n%d.md" % i, b"n")
            if i == 3:
                tx.delete("n1.md")
        snapshots.append(files(tmp_path))
    for k in range(1, 4):
        u = journal.undo(root)
        assert u.command == "undo" and u.undoes == 4 - k
        assert files(tmp_path) == snapshots[3 - k]
    found = journal.entries(root)
    assert [e.id for e in found] == [1, 2, 3, 4, 5, 6]
    assert [e.undone for e in found[:3]] == [True, True, True]
    with pytest.raises(JournalError, match="nothing to undo"):
        journal.undo(root)
    # undoing an undo puts the entry back (redo)
    journal.undo(root, 6)
    assert files(tmp_path) == snapshots[1]
    assert not journal.entries(root)[0].undone


def test_undo_refuses_when_a_later_entry_changed_the_file(tmp_path: Path) -> None:
    root = str(tmp_path)
    with journal.transaction(root, command="a") as tx:
        tx.write("x.md", b"1")
    with journal.transaction(root, command="b") as tx:
        tx.write("x.md", b"2")
    before = files(tmp_path)
    with pytest.raises(JournalConflict, match="undo entry 2"):
        journal.undo(root, 1)
    assert files(tmp_path) == before
    (tmp_path / "x.md").write_bytes(b"hand edit")
    with pytest.raises(JournalConflict, match="outside engramory"):
        journal.undo(root)
    with pytest.raises(JournalError, match="no journal entry 9"):
        journal.undo(root, 9)


def test_secret_prior_bytes_are_kept_privately_and_undone(tmp_path: Path) -> None:
    """Issue 19, item 3: a file holding a secret is kept like any other (the blob store is
    local and private), so its undo is possible; the journal itself never holds the bytes."""
    root = str(tmp_path)
    secret = b"token: ghp_" + b"A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8\n"
    (tmp_path / "s.md").write_bytes(secret)
    with journal.transaction(root, command="t") as tx:
        tx.write("s.md", b"cleaned\n")
    e = journal.entries(root)[0]
    assert e.changes[0].kept is True and e.undoable
    blobs = tmp_path / ".engramory" / "blobs"
    assert blobs.stat().st_mode & 0o777 == 0o700
    kept = [p for p in blobs.iterdir() if p.name == journal.sha256(secret)]
    assert kept and kept[0].stat().st_mode & 0o777 == 0o600
    assert (blobs / ".gitignore").read_text().splitlines()[-1] == "*"
    assert secret not in (tmp_path / ".engramory" / "journal.jsonl").read_bytes()
    journal.undo(root)
    assert (tmp_path / "s.md").read_bytes() == secret


def test_blob_store_is_bounded_and_never_drops_what_an_undoable_entry_needs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from engramory.store import blobstore

    monkeypatch.setattr(blobstore, "BLOB_CAP", 10_000)
    root = str(tmp_path)
    versions = [bytes([65 + i]) * 3000 for i in range(10)]
    for data in versions:
        with journal.transaction(root, command="t") as tx:
            tx.write("big.md", data)
    blobs = tmp_path / ".engramory" / "blobs"
    assert sum(p.stat().st_size for p in blobs.iterdir() if blobstore.is_digest(p.name)) <= 10_000
    assert journal.entries(root)[-1].undoable
    # undo, newest first, gives back each version byte for byte, as far back as the live
    # journal reaches; it stops at a rotated entry, named as such, never at a missing blob
    undone = 0
    while True:
        try:
            u = journal.undo(root)
        except JournalError as exc:
            assert "rotated out of the live journal" in str(exc)
            break
        undone += 1
        target = u.undoes or 0
        assert (tmp_path / "big.md").read_bytes() == (versions[target - 2] if target > 1 else b"")
    assert undone >= 2
    assert sum(p.stat().st_size for p in blobs.iterdir() if blobstore.is_digest(p.name)) <= 10_000


def test_a_prior_version_too_large_to_keep_is_refused_before_writing(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from engramory.store import blobstore

    monkeypatch.setattr(blobstore, "BLOB_FILE_MAX", 1000)
    root = str(tmp_path)
    (tmp_path / "big.md").write_bytes(b"x" * 1001)
    with pytest.raises(journal.UndoNotKept, match="1,001 bytes, over the 1,000 bytes.*--no-undo"):
        with journal.transaction(root, command="t") as tx:
            tx.write("big.md", b"small")
    assert (tmp_path / "big.md").read_bytes() == b"x" * 1001
    assert journal.entries(root) == []
    with journal.transaction(root, command="t", no_undo=True) as tx:
        tx.write("big.md", b"small")
    assert tx.entry is not None and not tx.entry.undoable and tx.entry.no_undo
    with pytest.raises(JournalError, match="--no-undo"):
        journal.undo(root)


def test_argv_is_journaled_without_bodies_or_secrets() -> None:
    from engramory.store.journalfile import slim_argv

    body = "x" * 4096
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    out = slim_argv(["update", "n", "--body", body, "--why=" + body, "--bo", "short", "--hook", "see " + token,
                     "--how", "-", "--description", "d" * 500])
    assert out[:3] == ["update", "n", "--body"]
    assert out[3] == "<4,096 bytes, sha256 %s>" % journal.sha256(body.encode())
    assert out[4].startswith("--why=<4,096 bytes") and out[6].startswith("<5 bytes")
    assert token not in " ".join(out) and "masked" in out[8]
    assert out[10] == "-"  # stdin: no text here to keep
    assert len(out[12]) < 300
    assert len(json.dumps(out)) < 1000


def test_the_journal_is_read_from_its_end(tmp_path: Path) -> None:
    from engramory.store import journalfile

    root = str(tmp_path)
    for i in range(30):
        with journal.transaction(root, command="c%d" % i) as tx:
            tx.write("a.md", b"%d" % i)
    journal.undo(root)
    lines = list(journalfile.lines_back(str(tmp_path / ".engramory" / "journal.jsonl"), chunk=97))
    assert [json.loads(line)["id"] for _, line in lines] == list(range(31, 0, -1))
    raw = (tmp_path / ".engramory" / "journal.jsonl").read_bytes()
    assert all(raw[off:off + len(line)] == line for off, line in lines)
    newest = journalfile.Reader(root).newest(2)
    assert [e.id for e in newest] == [31, 30] and newest[1].undone and not newest[0].undone
    assert journalfile.last_id(root) == 31


def test_rotation_keeps_the_newest_entries_live_and_the_rest_as_metadata(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from engramory.store import journalfile

    monkeypatch.setattr(journalfile, "JOURNAL_MAX", 4000)
    monkeypatch.setattr(journalfile, "JOURNAL_KEEP", 2000)
    monkeypatch.setattr(journalfile, "HISTORY_MAX", 3000)
    root = str(tmp_path)
    for i in range(60):
        with journal.transaction(root, command="c", argv=["--body", "b" * 100, "--hook", "h%d" % i]) as tx:
            tx.write("a.md", b"%d" % i)
    live = tmp_path / ".engramory" / "journal.jsonl"
    history = tmp_path / ".engramory" / "journal-history.jsonl"
    assert live.stat().st_size <= 4000 + 1000 and history.stat().st_size <= 3000
    found = journal.entries(root)
    ids = [e.id for e in found]
    assert ids == sorted(ids) and ids[-1] == 60
    old = [e for e in found if e.rotated]
    assert old and all(e.argv == [] and not e.undoable for e in old)
    assert b"argv" not in history.read_bytes() and b'"before"' in history.read_bytes()
    journal.undo(root)
    assert (tmp_path / "a.md").read_bytes() == b"58"


def test_record_journals_changes_made_elsewhere(tmp_path: Path) -> None:
    root = str(tmp_path)
    (tmp_path / "a.md").write_bytes(b"new a")
    e = journal.record(root, "compact", [Change("a.md", b"old a", b"new a"), Change("z.md", b"z", None)])
    assert e is not None and e.command == "compact"
    assert journal.record(root, "noop", [Change("a.md", b"x", b"x")]) is None
    journal.undo(root)
    assert files(tmp_path) == {"a.md": b"old a", "z.md": b"z"}


def test_lock_fallback_excl_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(journal, "_force_fallback", True)
    root = str(tmp_path)
    lockfile = tmp_path / ".engramory" / "lock.excl"
    with journal.transaction(root, command="t") as tx:
        assert lockfile.exists()
        tx.write("a.md", b"a")
    assert not lockfile.exists()
    # a stale lock file (its process is gone) is taken over
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    import socket
    lockfile.write_text("%s %s 0\n" % (dead.stdout.strip(), socket.gethostname()))
    with journal.transaction(root, command="t", timeout=2) as tx:
        tx.write("b.md", b"b")
    assert (tmp_path / "b.md").exists()
    # a live holder makes us wait, then time out with the file named
    lockfile.write_text("%d %s 0\n" % (os.getppid(), socket.gethostname()))
    with pytest.raises(journal.LockTimeout, match="lock.excl"):
        with journal.transaction(root, command="t", timeout=0.2) as tx:
            tx.write("c.md", b"c")
    assert not (tmp_path / "c.md").exists()


def test_flock_excludes_another_process(tmp_path: Path) -> None:
    root = str(tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent("""
            import sys, time
            sys.path.insert(0, %r)
            from engramory.store import journal
            with journal.lock(%r):
                print("held", flush=True)
                time.sleep(3)
        """ % (str(ROOT), root))], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(journal.LockTimeout):
            with journal.transaction(root, command="t", timeout=0.3) as tx:
                tx.write("a.md", b"a")
    finally:
        holder.communicate()
    with journal.transaction(root, command="t", timeout=5) as tx:
        tx.write("a.md", b"a")
    assert (tmp_path / "a.md").read_bytes() == b"a"


CRASH = """
import os, sys
sys.path.insert(0, %(repo)r)
from engramory.store import journal
def crash(tmp, final):
    if final.endswith(%(at)r):
        os._exit(17)
journal._before_replace = crash
with journal.transaction(%(root)r, command="crashy") as tx:
    tx.write("n.md", b"new note")
    tx.write("MEMORY.md", b"new index")
"""


@pytest.mark.parametrize("at", ["n.md", "MEMORY.md"])
def test_crash_between_temp_write_and_rename_leaves_old_file(tmp_path: Path, at: str) -> None:
    root = tmp_path / "store"
    root.mkdir()
    (root / "MEMORY.md").write_bytes(b"old index")
    (root / "n.md").write_bytes(b"old note")
    r = subprocess.run([sys.executable, "-I", "-S", "-c", CRASH % {"repo": str(ROOT), "root": str(root), "at": at}])
    assert r.returncode == 17
    assert (root / "MEMORY.md").read_bytes() == b"old index"
    if at == "n.md":
        assert (root / "n.md").read_bytes() == b"old note"
    else:
        assert (root / "n.md").read_bytes() == b"new note"  # written before the crash
    assert any(TMP in p.name for p in root.iterdir() for TMP in [journal.TMP_MARK])
    assert (root / ".engramory" / "pending.json").exists()
    # the next transaction journals what the crash left and clears the temp files
    with journal.transaction(str(root), command="next") as tx:
        tx.write("other.md", b"o")
    found = journal.entries(str(root))
    assert not any(journal.TMP_MARK in p.name for p in root.iterdir())
    if at == "n.md":
        assert [e.command for e in found] == ["next"]
    else:
        assert [e.command for e in found] == ["crashy", "next"] and found[0].interrupted
        assert found[0].paths == ["n.md"]
        journal.undo(str(root))
        journal.undo(str(root))
        assert (root / "n.md").read_bytes() == b"old note"
    assert not (root / ".engramory" / "pending.json").exists()


def test_torn_journal_line_is_skipped(tmp_path: Path) -> None:
    root = str(tmp_path)
    with journal.transaction(root, command="a") as tx:
        tx.write("a.md", b"a")
    jp = tmp_path / ".engramory" / "journal.jsonl"
    with open(jp, "ab") as f:
        f.write(b'{"id": 2, "comm')
    with journal.transaction(root, command="b") as tx:
        tx.write("b.md", b"b")
    assert [e.command for e in journal.entries(root)] == ["a", "b"]
    lines = jp.read_bytes().split(b"\n")
    assert json.loads(lines[-2])["command"] == "b"


def test_nested_transaction_same_process_does_not_deadlock(tmp_path: Path) -> None:
    root = str(tmp_path)
    with journal.transaction(root, command="outer") as tx:
        tx.write("a.md", b"a")
        with journal.transaction(root, command="inner", timeout=0.5) as tx2:
            tx2.write("b.md", b"b")
    assert [e.command for e in journal.entries(root)] == ["inner", "outer"]


def test_doctor_ignores_the_journal_folder(tmp_path: Path) -> None:
    from engramory.doctor import run as doctor

    root = str(tmp_path)
    (tmp_path / "MEMORY.md").write_bytes(b"# Memory Index\n")
    with journal.transaction(root, command="t") as tx:
        tx.write("MEMORY.md", b"# Memory Index\n\n## user\n")
    with journal.transaction(root, command="t") as tx:
        tx.write("MEMORY.md", b"# Memory Index\n")
    (tmp_path / ".engramory" / "stray.md").write_bytes(b"not a note")
    _, findings = doctor.audit(root, doctor.Context(git=False))
    assert [f for f in findings if ".engramory" in f.path] == []


def test_fallback_lock_of_a_killed_process_is_taken_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import signal

    root = str(tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent("""
            import sys, time
            sys.path.insert(0, %r)
            from engramory.store import journal
            journal._force_fallback = True
            with journal.lock(%r):
                print("held", flush=True)
                time.sleep(60)
        """ % (str(ROOT), root))], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    holder.send_signal(signal.SIGKILL)
    holder.communicate()
    assert (tmp_path / ".engramory" / journal.LOCK_EXCL).exists()  # left behind by the dead process
    monkeypatch.setattr(journal, "_force_fallback", True)
    with journal.transaction(root, command="t", timeout=5) as tx:
        tx.write("a.md", b"a")
    assert (tmp_path / "a.md").read_bytes() == b"a"
    assert not (tmp_path / ".engramory" / journal.LOCK_EXCL).exists()
