"""`engramory sync init`: refused outside a repository (naming `git init`); writes the
attributes, the ignore line and the driver (runnable from any directory with nothing on
PYTHONPATH); idempotent; --dry-run writes nothing; --undo gives back every byte and the config."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.unit.sync.gitkit import Kit


@pytest.fixture
def kit(tmp_path: Path) -> Kit:
    return Kit(tmp_path)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and ".git" not in p.parts[len(folder.parts):][:1] and ".engramory" not in p.parts}


def test_refused_outside_a_repository(kit: Kit) -> None:
    store = kit.tmp / "mem"
    store.mkdir()
    (store / "MEMORY.md").write_text("# Memory Index\n", encoding="utf-8")
    done = kit.engramory("sync", "init", str(store))
    assert done.returncode == 1
    assert "not inside a git repository" in done.stderr and "`git init %s`" % store in done.stderr
    assert sorted(os.listdir(store)) == ["MEMORY.md"]


def test_writes_attributes_ignore_and_the_driver(kit: Kit) -> None:
    repo = kit.repo(kit.tmp / "mem")
    done = kit.ok("sync", "init", str(repo), "--json")
    report = json.loads(done.stdout)
    assert report["ok"] and len(report["steps"]) == 4
    assert (repo / ".gitattributes").read_text(encoding="utf-8") == "/MEMORY.md merge=engramory-index\n"
    assert (repo / ".gitignore").read_text(encoding="utf-8") == "/.engramory/\n"
    driver = kit.git(repo, "config", "--get", "merge.engramory-index.driver").stdout.strip()
    assert driver.endswith("merge-index %O %A %B %L %P") and " -I -S " in driver
    assert kit.git(repo, "check-attr", "merge", "MEMORY.md").stdout.strip().endswith("merge: engramory-index")
    assert kit.git(repo, "status", "--porcelain").stdout.count("??") == 2  # written, not committed
    assert kit.git(repo, "check-ignore", ".engramory/journal.jsonl", check=False).returncode == 0


def test_the_driver_runs_from_any_directory_with_nothing_on_the_path(kit: Kit) -> None:
    repo = kit.repo(kit.tmp / "mem")
    kit.ok("sync", "init", str(repo))
    driver = kit.git(repo, "config", "--get", "merge.engramory-index.driver").stdout.strip()
    elsewhere = kit.tmp / "elsewhere"
    elsewhere.mkdir()
    for name, data in (("o", b"- [A](a.md)\n"), ("a", b"- [A](a.md)\n- [B](b.md)\n"), ("b", b"- [C](c.md)\n- [A](a.md)\n")):
        (elsewhere / name).write_bytes(data)
    command = driver.replace("%O", "o").replace("%A", "a").replace("%B", "b").replace("%L", "7").replace("%P", "MEMORY.md")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(kit.home)}
    done = subprocess.run(["sh", "-c", command], cwd=str(elsewhere), env=env, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (elsewhere / "a").read_bytes() == b"- [C](c.md)\n- [A](a.md)\n- [B](b.md)\n"


def test_idempotent_and_dry_run(kit: Kit) -> None:
    repo = kit.repo(kit.tmp / "mem")
    dry = kit.ok("sync", "init", str(repo), "--dry-run")
    assert dry.stdout.startswith("would create") and not (repo / ".gitattributes").exists()
    assert kit.git(repo, "config", "--get", "merge.engramory-index.driver", check=False).returncode == 1
    kit.ok("sync", "init", str(repo))
    before = snapshot(repo)
    again = kit.ok("sync", "init", str(repo))
    assert "already set up for sync: nothing to do" in again.stdout
    assert snapshot(repo) == before


def test_undo_gives_back_the_bytes_and_the_config(kit: Kit) -> None:
    repo = kit.repo(kit.tmp / "mem")
    (repo / ".gitattributes").write_bytes(b"*.png binary\r\n*.md text")  # CRLF, no final newline
    kit.git(repo, "config", "merge.engramory-index.name", "my own name")
    config = (repo / ".git" / "config").read_bytes()
    before = snapshot(repo)
    kit.ok("sync", "init", str(repo))
    assert (repo / ".gitattributes").read_bytes() == b"*.png binary\r\n*.md text\r\n/MEMORY.md merge=engramory-index\r\n"
    kit.ok("sync", "init", str(repo))  # a second init must not lose what the first one kept
    dry = kit.ok("sync", "init", "--undo", "--dry-run", str(repo))
    assert "would restore" in dry.stdout and (repo / ".gitignore").exists()
    kit.ok("sync", "init", "--undo", str(repo))
    assert snapshot(repo) == before
    assert kit.git(repo, "config", "--get", "merge.engramory-index.name").stdout.strip() == "my own name"
    assert kit.git(repo, "config", "--get", "merge.engramory-index.driver", check=False).returncode == 1
    assert (repo / ".git" / "config").read_bytes() == config


def test_undo_refuses_a_file_changed_since(kit: Kit) -> None:
    repo = kit.repo(kit.tmp / "mem")
    kit.ok("sync", "init", str(repo))
    with open(repo / ".gitignore", "a", encoding="utf-8") as f:
        f.write("*.tmp\n")
    done = kit.engramory("sync", "init", "--undo", str(repo))
    assert done.returncode == 1 and ".gitignore changed since" in done.stderr
    assert (repo / ".gitattributes").exists() and kit.git(repo, "config", "--get", "merge.engramory-index.driver").stdout


def test_a_store_inside_a_project_repository(kit: Kit) -> None:
    project = kit.repo(kit.tmp / "project", b"# not a store\n")
    store = project / "memory"
    store.mkdir()
    (store / "MEMORY.md").write_text("# Memory Index\n", encoding="utf-8")
    kit.ok("sync", "init", str(store))
    assert (store / ".gitattributes").exists() and not (project / ".gitattributes").exists()
    assert kit.git(project, "check-attr", "merge", "memory/MEMORY.md").stdout.strip().endswith("engramory-index")
    assert kit.git(project, "check-attr", "merge", "MEMORY.md").stdout.strip().endswith("unspecified")


def test_help_names_every_option(kit: Kit) -> None:
    text = " ".join(kit.ok("sync", "init", "--help").stdout.split())
    for word in ("--dry-run", "--undo", "--json", "git init", "exit codes"):
        assert word in text
    text = " ".join(kit.ok("sync", "--help").stdout.split())
    for word in ("--force", "--json", "sync init", "max(10, 10%)", "exit codes"):
        assert word in text


def test_without_tools_the_driver_is_a_c_command_that_still_runs(kit: Kit, monkeypatch: pytest.MonkeyPatch) -> None:
    """A wheel install has no tools/engramory.py beside the package: the driver then puts the
    package's folder on sys.path itself."""
    from engramory.sync import init

    real = os.path.isfile
    monkeypatch.setattr(os.path, "isfile", lambda p: False if p.endswith("engramory.py") else real(p))
    command = init.driver_command()
    monkeypatch.undo()
    assert " -I -S -c " in command and command.endswith("merge-index %O %A %B %L %P")
    for name, data in (("o", b"- [A](a.md)\n"), ("a", b"- [A](a.md)\n- [B](b.md)\n"), ("b", b"- [C](c.md)\n- [A](a.md)\n")):
        (kit.tmp / name).write_bytes(data)
    line = command.replace("%O", "o").replace("%A", "a").replace("%B", "b").replace("%L", "7").replace("%P", "MEMORY.md")
    done = subprocess.run(["sh", "-c", line], cwd=str(kit.tmp), env={"PATH": "/usr/bin:/bin"}, capture_output=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert (kit.tmp / "a").read_bytes() == b"- [C](c.md)\n- [A](a.md)\n- [B](b.md)\n"
