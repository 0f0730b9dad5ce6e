"""`engramory sync` on real git: two clones of a bare repository on loopback paths save notes
with `engramory new` and sync in either order; both end with every note and one pointer each,
within the caps, and each machine's journal still undoes its own writes. A sync that would
delete 30 of 100 notes is refused (a move into archive/ is not); conflicts stop it before the
push with the files listed; the commit lists the journal and the changes made outside it; and
a clear refusal for no git, no remote, no upstream and a detached HEAD."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import List

import pytest

from tests.unit.sync.gitkit import Kit, note


@pytest.fixture
def kit(tmp_path: Path) -> Kit:
    return Kit(tmp_path)


def pointers(root: Path) -> List[str]:
    return re.findall(r"^- \[[^\]]*\]\(([^)]+)\)", (root / "MEMORY.md").read_text(encoding="utf-8"), re.M)


def notes_in(root: Path) -> List[str]:
    return sorted(p.name for p in root.glob("*.md") if p.name != "MEMORY.md")


@pytest.mark.parametrize("first", ["laptop", "desktop"])
def test_two_machines_one_remote_either_order(kit: Kit, first: str) -> None:
    bare = kit.remote_with_store()
    laptop, desktop = kit.clone(bare, "laptop"), kit.clone(bare, "desktop")
    kit.new(laptop, "laptop-editor", "The user edits with vim and never with an IDE")
    kit.new(laptop, "laptop-shell", "The user works in zsh with the default prompt")
    kit.new(desktop, "desktop-tests", "The user runs the tests with pytest -q before each push")
    kit.ok("review", str(desktop))  # the review baseline: what the pull brings must not show as someone else's
    order = [laptop, desktop, laptop] if first == "laptop" else [desktop, laptop, desktop]
    for machine in order:
        kit.ok("sync", str(machine))
    want = ["desktop-tests.md", "laptop-editor.md", "laptop-shell.md"]
    for machine in (laptop, desktop):
        assert notes_in(machine) == want
        assert sorted(pointers(machine)) == want  # one pointer each
        assert kit.engramory("check", str(machine / "MEMORY.md")).returncode == 0  # within the caps
    assert "nothing changed outside engramory" in kit.ok("review", str(desktop)).stdout
    # each journal still undoes its own writes, by key in the merged index
    for machine, mine in ((laptop, "laptop-editor"), (desktop, "desktop-tests")):
        entry = next(e for e in reversed(journal_of(machine)) if e["command"] == "new" and
                     any(c["path"] == mine + ".md" for c in e["changes"]))
        kit.ok("undo", str(entry["id"]), str(machine))
        assert mine + ".md" not in notes_in(machine) and mine + ".md" not in pointers(machine)
        assert len(pointers(machine)) == 2
    for machine in order:
        kit.ok("sync", str(machine))
    for machine in (laptop, desktop):
        assert notes_in(machine) == ["laptop-shell.md"] and pointers(machine) == ["laptop-shell.md"]


def journal_of(root: Path) -> List[dict]:
    lines = (root / ".engramory" / "journal.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def hundred(kit: Kit) -> Path:
    bare = kit.tmp / "remote.git"
    kit.git(kit.tmp, "init", "-q", "--bare", "-b", "main", str(bare))
    index = "# Memory Index\n\n## user\n" + "".join("- [Fact %d](n%d.md)\n" % (i, i) for i in range(100))
    seed = kit.repo(kit.tmp / "seed", index.encode())
    for i in range(100):
        (seed / ("n%d.md" % i)).write_bytes(note("n%d" % i))
    kit.ok("sync", "init", str(seed))
    kit.git(seed, "add", "-A")
    kit.git(seed, "commit", "-q", "-m", "a hundred notes")
    kit.git(seed, "remote", "add", "origin", str(bare))
    kit.git(seed, "push", "-q", "-u", "origin", "main")
    return bare


def drop(root: Path, numbers: range) -> None:
    for i in numbers:
        (root / ("n%d.md" % i)).unlink()
    text = (root / "MEMORY.md").read_text(encoding="utf-8")
    (root / "MEMORY.md").write_text("".join(line for line in text.splitlines(True)
                                            if not any("(n%d.md)" % i in line for i in numbers)), encoding="utf-8")


def test_a_sync_that_deletes_30_of_100_notes_is_refused(kit: Kit) -> None:
    bare = hundred(kit)
    a, b = kit.clone(bare, "a"), kit.clone(bare, "b")
    drop(a, range(30))
    head = kit.git(a, "rev-parse", "HEAD").stdout
    done = kit.engramory("sync", str(a), "--json")
    report = json.loads(done.stdout)
    assert done.returncode == 1 and report["status"] == "mass-delete"
    assert "deletion of 30 of the 100 live notes by this machine" in report["messages"][-1]
    assert "Nothing was committed, merged or pushed" in report["messages"][-1]
    assert kit.git(a, "rev-parse", "HEAD").stdout == head and kit.git(a, "status", "--porcelain").stdout
    assert kit.git(bare, "rev-parse", "main").stdout == head
    kit.ok("sync", str(a), "--force")  # meant: it goes, as an ordinary commit and push
    done = kit.engramory("sync", str(b))
    assert done.returncode == 1 and "pull the deletion of 30 of the 100 live notes by the other side" in done.stderr
    assert len(notes_in(b)) == 100
    kit.ok("sync", str(b), "--force")
    assert len(notes_in(b)) == 70


def test_ten_deletions_and_a_move_into_archive_are_not_refused(kit: Kit) -> None:
    bare = hundred(kit)
    a, b = kit.clone(bare, "a"), kit.clone(bare, "b")
    drop(a, range(10))
    kit.ok("sync", str(a))
    kit.ok("archive", *["n%d" % i for i in range(10, 50)], str(a))
    kit.ok("sync", str(a))
    kit.ok("sync", str(b))
    assert len(notes_in(b)) == 50 and len(list((b / "archive").glob("*.md"))) == 40


def test_conflicts_stop_the_sync_before_the_push(kit: Kit) -> None:
    bare = kit.remote_with_store()
    a, b = kit.clone(bare, "a"), kit.clone(bare, "b")
    kit.new(a, "shared-fact", "The user deploys on Tuesdays after the standup")
    kit.ok("sync", str(a))
    kit.ok("sync", str(b))
    kit.ok("update", "shared-fact", str(a), "--description", "The user deploys on Tuesdays at noon")
    kit.ok("update", "shared-fact", str(b), "--description", "The user deploys on Wednesdays after the standup")
    kit.ok("sync", str(a))
    remote_head = kit.git(bare, "rev-parse", "main").stdout
    done = kit.engramory("sync", str(b), "--json")
    report = json.loads(done.stdout)
    assert done.returncode == 1 and report["status"] == "conflicts"
    assert sorted(report["conflicts"]) == ["MEMORY.md", "shared-fact.md"]
    said = report["messages"][-1]
    assert "MEMORY.md (1 conflict (shared-fact.md), all in one block after the title line" in said
    assert "Nothing was pushed" in said
    assert "`git merge --abort`" in said
    assert kit.git(bare, "rev-parse", "main").stdout == remote_head
    index = (b / "MEMORY.md").read_text(encoding="utf-8")
    assert "at noon" in index and "Wednesdays" in index and index.count("<<<<<<<") == 1
    again = kit.engramory("sync", str(b))
    assert again.returncode == 1 and "a merge is not finished" in again.stderr
    kit.git(b, "merge", "--abort")
    assert "Wednesdays" in (b / "MEMORY.md").read_text(encoding="utf-8")


def test_the_commit_lists_the_journal_and_the_changes_made_outside_it(kit: Kit) -> None:
    bare = kit.remote_with_store()
    a = kit.clone(bare, "a")
    kit.new(a, "first-fact", "The user keeps release notes in CHANGES.md")
    kit.ok("sync", str(a))
    kit.new(a, "second-fact", "The user tags releases as vX.Y.Z in git")
    (a / "hand-made.md").write_bytes(note("hand-made"))
    kit.ok("sync", str(a))
    message = kit.git(a, "log", "-1", "--format=%B").stdout
    assert message.startswith("engramory sync: 1 write by engramory, 1 change from outside it")
    assert re.search(r"^  \d+  new  second-fact\.md, MEMORY\.md$", message, re.M)
    assert "first-fact" not in message  # listed by the sync before
    assert "changed outside engramory" in message and "  hand-made.md  added" in message


def test_an_index_over_its_cap_after_the_merge_is_not_pushed(kit: Kit) -> None:
    index = "# Memory Index\n\n## user\n" + "".join("- [Fact %d](n%d.md)\n" % (i, i) for i in range(190))
    bare = kit.tmp / "remote.git"
    kit.git(kit.tmp, "init", "-q", "--bare", "-b", "main", str(bare))
    seed = kit.repo(kit.tmp / "seed", index.encode())
    for i in range(190):
        (seed / ("n%d.md" % i)).write_bytes(note("n%d" % i))
    kit.ok("sync", "init", str(seed))
    kit.git(seed, "add", "-A")
    kit.git(seed, "commit", "-q", "-m", "190 notes")
    kit.git(seed, "remote", "add", "origin", str(bare))
    kit.git(seed, "push", "-q", "-u", "origin", "main")
    a, b = kit.clone(bare, "a"), kit.clone(bare, "b")
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
    for i in range(5):
        kit.new(a, "a-fact-%d" % i, "Laptop %s %s %s notes" % tuple(words[(i + k) % 10] * (k + 1) for k in range(3)))
        kit.new(b, "b-fact-%d" % i, "Desktop %s %s %s notes" % tuple(words[(i + k + 5) % 10] * (k + 2) for k in range(3)))
    kit.ok("sync", str(a))
    head = kit.git(bare, "rev-parse", "main").stdout
    done = kit.engramory("sync", str(b))
    assert done.returncode == 1
    assert "over its hard cap of 200 lines" in done.stderr and "engramory compact" in done.stderr
    assert kit.git(bare, "rev-parse", "main").stdout == head
    assert len(pointers(b)) == 200  # nothing dropped


@pytest.mark.parametrize("case", ["no-remote", "no-upstream", "detached-head", "no-git"])
def test_clear_refusals(kit: Kit, case: str) -> None:
    repo = kit.repo(kit.tmp / "mem")
    kit.ok("sync", "init", str(repo))
    env_path = None
    if case == "no-upstream":
        kit.git(kit.tmp, "init", "-q", "--bare", str(kit.tmp / "r.git"))
        kit.git(repo, "remote", "add", "origin", str(kit.tmp / "r.git"))
    if case == "detached-head":
        kit.git(repo, "checkout", "-q", "--detach")
    if case == "no-git":
        env_path = kit.env["PATH"]
        kit.env["PATH"] = str(kit.tmp / "empty")
    try:
        done = kit.engramory("sync", str(repo), "--json")
    finally:
        if env_path is not None:
            kit.env["PATH"] = env_path
    report = json.loads(done.stdout)
    assert done.returncode == 1 and report["status"] == case
    said = report["messages"][-1]
    hint = {"no-remote": "`git remote add origin URL`", "no-upstream": "`git push -u origin main`",
            "detached-head": "`git switch main`", "no-git": "git is not installed"}[case]
    assert hint in said, said
    assert "Traceback" not in done.stderr


def test_a_team_store_in_a_project_repository(kit: Kit) -> None:
    bare = kit.tmp / "project.git"
    kit.git(kit.tmp, "init", "-q", "--bare", "-b", "main", str(bare))
    seed = kit.repo(kit.tmp / "seed", b"# project\n")
    (seed / "memory").mkdir()
    (seed / "memory" / "MEMORY.md").write_text("# Memory Index\n", encoding="utf-8")
    doctor = json.loads(kit.engramory("doctor", "--json", str(seed / "memory")).stdout)
    assert "store-in-git" in {f["code"] for f in doctor["findings"]}  # by accident: an error
    kit.ok("sync", "init", str(seed / "memory"))
    doctor = json.loads(kit.engramory("doctor", "--json", str(seed / "memory")).stdout)
    assert "store-in-git" not in {f["code"] for f in doctor["findings"]}  # set up to be shared: silent
    kit.git(seed, "add", "-A")
    kit.git(seed, "commit", "-q", "-m", "team memory")
    kit.git(seed, "remote", "add", "origin", str(bare))
    kit.git(seed, "push", "-q", "-u", "origin", "main")
    alice, bob = kit.clone(bare, "alice"), kit.clone(bare, "bob")
    (alice / "src.txt").write_text("work in progress\n", encoding="utf-8")  # not memory: never committed by sync
    kit.new(alice / "memory", "build-cache", "The team clears the build cache with make clean-cache")
    kit.new(bob / "memory", "review-rule", "The team needs two approvals before a merge to main")
    kit.ok("sync", str(alice / "memory"))
    kit.ok("sync", str(bob / "memory"))
    kit.ok("sync", str(alice / "memory"))
    for person in (alice, bob):
        assert sorted(pointers(person / "memory")) == ["build-cache.md", "review-rule.md"]
    assert "?? src.txt" in kit.git(alice, "status", "--porcelain").stdout


def test_a_token_in_a_remote_url_is_never_printed(kit: Kit) -> None:
    repo = kit.repo(kit.tmp / "mem")
    kit.ok("sync", "init", str(repo))
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    kit.git(repo, "remote", "add", "origin", "https://x:%s@127.0.0.1:9/r.git" % token)
    kit.git(repo, "config", "branch.main.remote", "origin")
    kit.git(repo, "config", "branch.main.merge", "refs/heads/main")
    kit.git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    for flag in ([], ["--json"]):
        done = kit.engramory("sync", str(repo), *flag)
        assert done.returncode == 1 and token not in done.stdout + done.stderr
