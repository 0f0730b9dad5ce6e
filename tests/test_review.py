"""Review of what others changed: the manifest, reconcile (stat first, hash only what moved),
one journal entry per reconcile with the prior bytes, the SessionStart line, `engramory
review`, `engramory undo ID` bringing a deleted note back, and the backstops' calls."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from engramory import notices
from engramory.commands import compact as compact_cmd
from engramory.commands import review as review_cmd
from engramory.store import journal, review
from tests.conftest import ROOT

FIXTURE = ROOT / "tests" / "fixtures" / "stores" / "clean-protocol"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "mem"
    shutil.copytree(FIXTURE, root)
    return root


def test_first_reconcile_is_a_silent_baseline(store: Path) -> None:
    found = review.reconcile(str(store))
    assert found.baseline and found.entry is None
    manifest = review.load_manifest(str(store))
    assert manifest is not None and "MEMORY.md" in manifest["files"] and "archive/project-solr-tuning.md" in manifest["files"]
    assert journal.entries(str(store)) == []
    assert review.notice_line(str(store)) is None


def test_rm_is_journaled_listed_and_undone(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    review.reconcile(str(store))
    victim = store / "user-terse-replies.md"
    data = victim.read_bytes()
    victim.unlink()
    (store / "reference-incident-runbook.md").write_text("rewritten by a sync client\n", encoding="utf-8")
    found = review.reconcile(str(store), "after Bash")
    assert found.deleted == ["user-terse-replies.md"] and found.changed == ["reference-incident-runbook.md"]
    assert found.entry is not None and found.entry.command == review.COMMAND
    line = review.notice_line(str(store))
    assert line is not None and line.startswith("1 note deleted and 1 changed outside engramory")
    assert review_cmd.main([str(store)]) == 1
    out = capsys.readouterr().out
    assert "deleted user-terse-replies.md" in " ".join(out.split()) and "engramory undo" in out
    assert review.notice_line(str(store)) is None  # reviewed
    assert review_cmd.main([str(store)]) == 0
    journal.undo(str(store), found.entry.id)
    assert victim.read_bytes() == data
    # the undo is engramory's own write: the next reconcile absorbs it silently
    again = review.reconcile(str(store))
    assert again.entry is None and not again.deleted and not again.added


def test_engramory_writes_are_not_reported(store: Path) -> None:
    review.reconcile(str(store))
    code = compact_cmd.main([str(store), "--target", "3/100", "--apply", "-"])
    assert code in (1, 2)
    found = review.reconcile(str(store))
    assert found.entry is None and not found.changed and not found.deleted and not found.added


def test_unchanged_store_reads_no_file(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    review.reconcile(str(store))
    reads: list[str] = []
    real = review._read
    monkeypatch.setattr(review, "_read", lambda root, rel: reads.append(rel) or real(root, rel))
    before = (store / ".engramory" / "manifest.json").stat().st_mtime_ns
    found = review.reconcile(str(store))
    assert reads == [] and found.entry is None
    assert (store / ".engramory" / "manifest.json").stat().st_mtime_ns == before  # nothing written
    os.utime(store / "MEMORY.md", ns=(1, 1))  # touched, same bytes: hashed once, not reported
    found = review.reconcile(str(store))
    assert reads == ["MEMORY.md"] and found.entry is None


def test_added_notes_are_journaled_but_not_in_the_notice(store: Path) -> None:
    review.reconcile(str(store))
    (store / "user-new.md").write_text("---\nname: user-new\n---\nnew\n", encoding="utf-8")
    found = review.reconcile(str(store))
    assert found.added == ["user-new.md"] and found.entry is not None
    assert review.notice_line(str(store)) is None
    assert [k for k, _ in review.kinds(review.unreviewed(str(store))[0])] == ["added"]


def test_review_json_and_bad_root(store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    review.reconcile(str(store))
    (store / "user-terse-replies.md").unlink()
    assert review_cmd.main([str(store), "--json", "--keep"]) == 1
    obj: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert obj["entries"][0]["changes"] == [{"kind": "deleted", "path": "user-terse-replies.md"}]
    assert review_cmd.main([str(store), "--json"]) == 1  # --keep left it unreviewed
    capsys.readouterr()
    assert review_cmd.main([str(tmp_path / "missing")]) == 66


def _payload(event: str, cwd: Path, tool: str = "Bash") -> dict[str, Any]:
    return {"session_id": "s1", "cwd": str(cwd), "hook_event_name": event, "tool_name": tool, "tool_input": {}}


def test_backstops_reconcile(store: Path, tmp_path: Path) -> None:
    env = {"ENGRAMORY_INDEX_PATH": str(store / "MEMORY.md"), "TMPDIR": str(tmp_path), "HOME": str(tmp_path)}
    assert notices.session_start(_payload("SessionStart", tmp_path), env) == ""
    (store / "user-terse-replies.md").unlink()
    out = notices.post_tool(_payload("PostToolUse", tmp_path), env)
    text = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert "deleted 1 note" in text and "engramory undo" in text
    assert notices.post_tool(_payload("PostToolUse", tmp_path), env) == ""  # said once
    start = json.loads(notices.session_start(_payload("SessionStart", tmp_path), env))
    assert "1 note deleted outside engramory" in start["hookSpecificOutput"]["additionalContext"]


def test_a_held_lock_postpones_the_reconcile(store: Path) -> None:
    import subprocess
    import sys
    import time

    review.reconcile(str(store))
    (store / "user-terse-replies.md").unlink()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom engramory.store import journal\n"
         "with journal.lock(sys.argv[1]):\n    print('held', flush=True)\n    time.sleep(3)\n", str(store)],
        stdout=subprocess.PIPE, cwd=str(ROOT), text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        t0 = time.monotonic()
        found = review.reconcile(str(store), wait=0.2)
        assert time.monotonic() - t0 < 2.0
        assert found.entry is None and not found.deleted  # left for later, nothing half-seen
    finally:
        holder.wait(timeout=30)
        if holder.stdout is not None:
            holder.stdout.close()
    found = review.reconcile(str(store))
    assert found.deleted == ["user-terse-replies.md"] and found.entry is not None


def test_a_baseline_out_of_time_keeps_the_rest_of_the_blobs_later(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(review, "BLOB_BUDGET", -1.0)  # no time at all: every copy is left for later
    review.reconcile(str(store))
    manifest = review.load_manifest(str(store))
    assert manifest is not None and len(manifest["pending"]) == len(manifest["files"])
    monkeypatch.setattr(review, "BLOB_BUDGET", 30.0)
    assert review.reconcile(str(store)).entry is None  # a top-up, nothing reported
    manifest = review.load_manifest(str(store))
    assert manifest is not None and manifest["pending"] == []
    victim = store / "user-terse-replies.md"
    data = victim.read_bytes()
    victim.unlink()
    found = review.reconcile(str(store))
    assert found.deleted == ["user-terse-replies.md"] and found.entry is not None
    journal.undo(str(store), found.entry.id)
    assert victim.read_bytes() == data


def test_a_large_store_is_reviewed_in_the_background_at_session_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SessionStart must stay fast at any store size: past LARGE_FOLDER entries (no manifest
    yet) the review runs in a detached child, which still writes the manifest."""
    import time

    from engramory import notices

    root = tmp_path / "mem"
    root.mkdir()
    monkeypatch.setattr(review, "LARGE_FOLDER", 5)
    for i in range(8):
        (root / ("user-n%d.md" % i)).write_text("---\nname: n%d\ntype: user\n---\nfact %d\n" % (i, i))
    (root / "MEMORY.md").write_text("".join("- [n%d](user-n%d.md) - x\n" % (i, i) for i in range(8)))
    assert review.large_store(str(root))
    assert notices.reconcile_stores([str(root / "MEMORY.md")], "at session start", True) == []
    deadline = time.monotonic() + 30
    while review.load_manifest(str(root)) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    manifest = review.load_manifest(str(root))
    assert manifest is not None and "user-n3.md" in manifest["files"]
    assert not review.large_store(str(root))  # its manifest is small: later reviews run inline
    assert not review.large_store(str(tmp_path / "missing"))


def test_a_write_leaves_the_manifest_at_its_own_after_state(store: Path) -> None:
    root = str(store)
    review.reconcile(root)
    with journal.transaction(root, "t") as tx:
        tx.write("user-terse-replies.md", b"version two\n")
    manifest = review.load_manifest(root)
    assert manifest is not None and tx.entry is not None
    assert manifest["files"]["user-terse-replies.md"][2] == journal.sha256(b"version two\n")
    assert manifest["journal_seen"] == tx.entry.id
    found = review.reconcile(root)
    assert found.entry is None and not found.changed


def test_a_crash_between_an_entry_and_the_manifest_takes_the_newest_entry_as_ours(
        store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from engramory.store import manifest

    root = str(store)
    rel = "user-terse-replies.md"
    review.reconcile(root)
    monkeypatch.setattr(manifest, "after_write", lambda *args: None)  # the process died there
    for data in (b"version two\n", b"version three\n"):
        with journal.transaction(root, "t") as tx:
            tx.write(rel, data)
    monkeypatch.undo()
    assert review.reconcile(root).entry is None  # both writes are ours
    (store / rel).write_bytes(b"overwritten outside\n")
    found = review.reconcile(root)
    assert found.changed == [rel] and found.entry is not None
    assert journal.read_blob(root, found.entry.changes[0].before or "") == b"version three\n"
    journal.undo(root, found.entry.id)
    assert (store / rel).read_bytes() == b"version three\n"
