"""Issue 19, item 7 and "one bounded reader": no command hangs on a FIFO, dies on a device or
reads a huge file whole, and compact never plans over a store it could not read fully.

Every case runs the real entry points as subprocesses, `python3 -m engramory` and the copied
folder's `tools/engramory.py` under `-I -S`, with a timeout: a hang is a failure, not a stuck
suite."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

from tests.compact_stores import snapshot
from tests.conftest import ROOT

ENTRIES = {
    "module": [sys.executable, "-m", "engramory"],
    "tools": [sys.executable, "-I", "-S", str(ROOT / "tools" / "engramory.py")],
}
TIMEOUT = 20  # seconds: every command here finishes in well under one
BIG = 100_000_000  # the 100 MB note


def cli(entry: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAMORY_")}
    return subprocess.run(ENTRIES[entry] + list(args), capture_output=True, text=True, timeout=TIMEOUT,
                          cwd=str(cwd or ROOT), env=env)


def store(root: Path, n: int = 160) -> Path:
    """n notes, one pointer each: over the warn cap, so compact has a plan to make."""
    root.mkdir(parents=True, exist_ok=True)
    lines: List[str] = []
    for i in range(n):
        (root / ("project-n%d.md" % i)).write_text(
            "---\nname: project-n%d\ndescription: About fact number %d of the project\ntype: project\n"
            "created: 2026-01-01\nupdated: 2026-%02d-01\n---\n\nfact %d\n" % (i, i, 1 + i % 12, i), encoding="utf-8")
        lines.append("- [n%d](project-n%d.md) \u2014 hook %d\n" % (i, i, i))
    (root / "MEMORY.md").write_text("".join(lines), encoding="utf-8")
    return root


def sparse(path: Path, size: int, head: bytes = b"") -> None:
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(size)


# -- item 7: compact ------------------------------------------------------------------------


@pytest.mark.parametrize("entry", sorted(ENTRIES))
@pytest.mark.parametrize("apply", [False, True])
def test_compact_refuses_a_fifo_config_without_hanging(tmp_path: Path, entry: str, apply: bool) -> None:
    root = store(tmp_path / "mem")
    os.mkfifo(root / ".engramory.json")
    before = snapshot(root)
    done = cli(entry, "compact", str(root), *(["--apply", "-"] if apply else []))
    assert done.returncode == 66, done.stderr
    assert ".engramory.json" in done.stderr and "not a regular file" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert snapshot(root) == before


@pytest.mark.parametrize("entry", sorted(ENTRIES))
def test_compact_refuses_a_config_linked_to_dev_zero(tmp_path: Path, entry: str) -> None:
    root = store(tmp_path / "mem")
    (root / ".engramory.json").symlink_to("/dev/zero")
    done = cli(entry, "compact", str(root), "--apply", "-")
    assert done.returncode == 66, done.stderr
    assert "MemoryError" not in done.stderr and "Traceback" not in done.stderr
    assert ".engramory.json" in done.stderr and "not a regular file" in done.stderr


@pytest.mark.parametrize("entry", sorted(ENTRIES))
def test_compact_refuses_a_note_linked_to_a_fifo(tmp_path: Path, entry: str) -> None:
    root = store(tmp_path / "mem")
    os.mkfifo(root / ".pipe")
    (root / "project-pipe.md").symlink_to(".pipe")
    with (root / "MEMORY.md").open("a", encoding="utf-8") as f:
        f.write("- [pipe](project-pipe.md) \u2014 a note that is a FIFO\n")
    before = snapshot(root)
    for args in ([], ["--json"], ["--apply", "-"]):
        done = cli(entry, "compact", str(root), *args)
        assert done.returncode == 66, (args, done.stderr)
        assert "project-pipe.md" in done.stderr and "not a regular file" in done.stderr
        assert "1 file of the store could not be read" in done.stderr and "Traceback" not in done.stderr
        assert snapshot(root) == before


def peak_rss_kb(cmd: List[str]) -> tuple[int, subprocess.CompletedProcess[str]]:
    """The command's own peak RSS: measured by a fresh parent that has no other child."""
    probe = ("import resource, subprocess, sys; d = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
             "sys.stdout.write(d.stdout); sys.stderr.write(d.stderr); "
             "sys.stderr.write('\\nPEAK %d\\n' % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
             "raise SystemExit(d.returncode)")
    done = subprocess.run([sys.executable, "-c", probe] + cmd, capture_output=True, text=True, timeout=60, cwd=str(ROOT))
    peak = int(done.stderr.rsplit("PEAK ", 1)[1])
    done.stderr = done.stderr.rsplit("\nPEAK ", 1)[0]
    return peak, done


@pytest.mark.parametrize("entry", sorted(ENTRIES))
def test_compact_refuses_a_100_mb_note_with_numbers_and_never_reads_it_whole(tmp_path: Path, entry: str) -> None:
    root = store(tmp_path / "mem")
    sparse(root / "project-huge.md", BIG, b"---\nname: project-huge\ndescription: a dump\ntype: project\n---\n")
    with (root / "MEMORY.md").open("a", encoding="utf-8") as f:
        f.write("- [huge](project-huge.md) \u2014 a dump\n")
    before = snapshot(root)
    peak, done = peak_rss_kb(ENTRIES[entry] + ["compact", str(root)])
    assert done.returncode == 66, done.stderr
    assert "project-huge.md (100,000,000 bytes" in done.stderr and "4,194,304" in done.stderr, done.stderr
    assert peak < 60_000, "peak RSS %d KB: the note was read whole" % peak
    assert snapshot(root) == before


def test_compact_refuses_an_md_entry_that_is_not_a_file(tmp_path: Path) -> None:
    root = store(tmp_path / "mem")
    os.mkfifo(root / "project-fifo.md")
    done = cli("module", "compact", str(root))
    assert done.returncode == 66 and "project-fifo.md" in done.stderr and "not a regular file" in done.stderr


def test_compact_still_plans_over_a_note_that_is_not_utf8(tmp_path: Path) -> None:
    """A note in another encoding was read whole (its bytes are in the digest); the plan
    leaves it alone, as before."""
    root = store(tmp_path / "mem")
    (root / "project-latin1.md").write_bytes(b"---\nname: project-latin1\n---\ncaf\xe9\n")
    done = cli("module", "compact", str(root))
    assert done.returncode == 1, done.stderr
    assert "project-latin1.md" not in done.stdout


def test_a_pointer_whose_target_cannot_be_looked_at_is_not_dropped_as_dead(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a target that is not there is dead: one behind a folder without permission (faked
    here: the suite runs as root) may be a note compact never read."""
    from engramory.compact import apply as compact

    root = store(tmp_path / "mem")
    with (root / "MEMORY.md").open("a", encoding="utf-8") as f:
        f.write("- [locked](locked/project-x.md) \u2014 behind a folder it cannot enter\n"
                "- [gone](project-gone.md) \u2014 truly gone\n")
    real_stat = os.stat

    def stat(path: object, *args: object, **kwargs: object) -> os.stat_result:
        if "locked" in os.fspath(path):  # type: ignore[arg-type]
            raise PermissionError(13, "Permission denied", path)
        return real_stat(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "stat", stat)
    plan = compact.plan_for(str(root), 1, 10)
    dead = [op.reason for op in plan.operations if op.op == "drop-dead-pointer"]
    assert len(dead) == 1 and dead[0].startswith("project-gone.md does not exist"), dead


@pytest.mark.parametrize("entry", sorted(ENTRIES))
def test_a_100_mb_note_is_a_finding_or_a_refusal_with_numbers_in_every_read_only_command(
        tmp_path: Path, entry: str) -> None:
    """Past the reader's limit a note is never read whole: the doctor reports its size, search
    says it searched only the first MiB, compact refuses; all in bounded memory."""
    root = store(tmp_path / "mem", 20)
    sparse(root / "project-huge.md", BIG, b"---\nname: project-huge\ndescription: a dump of deploy logs\n"
                                         b"type: project\n---\n")
    cases = {
        ("doctor", str(root)): "project-huge.md: warning note-too-large: 100,000,000 bytes",
        ("doctor", "--json", str(root)): "100,000,000 bytes, over the 8,192-byte cap",
        ("search", "deploy", str(root)): "only the first 1,048,576 bytes of project-huge.md (100,000,000 bytes)",
        ("compact", str(root), "--target", "1/10"): "project-huge.md (100,000,000 bytes, past the 4,194,304-byte",
        ("check", str(root / "MEMORY.md")): "OK: ",
    }
    for args, said in cases.items():
        peak, done = peak_rss_kb(ENTRIES[entry] + list(args))
        assert said in done.stdout + done.stderr, (args, done.stdout[-2000:], done.stderr)
        assert "Traceback" not in done.stderr
        assert peak < 60_000, "%s: peak RSS %d KB" % (args, peak)


def test_a_fifo_settings_file_hangs_no_hook_and_no_command(tmp_path: Path) -> None:
    """Claude Code's settings.json is read to find autoMemoryDirectory, on the hooks' path
    too: a FIFO there hung SessionStart and PostToolUse until the host's timeout, and `doctor`
    with no ROOT for ever. It goes through the bounded reader now, like every store file."""
    import json

    config = tmp_path / "claude"
    config.mkdir()
    os.mkfifo(config / "settings.json")
    project = tmp_path / "proj"
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ENGRAMORY_", "CLAUDE_"))}
    env.update(CLAUDE_CONFIG_DIR=str(config), HOME=str(tmp_path))
    base = {"session_id": "s", "transcript_path": "/dev/null", "cwd": str(project)}
    runs = [
        (ENTRIES["module"] + ["doctor"], b""),
        (ENTRIES["tools"] + ["doctor"], b""),
        ([sys.executable, "-I", "-S", str(ROOT / "hooks" / "engramory_session_start.py")],
         json.dumps(dict(base, hook_event_name="SessionStart", source="startup")).encode()),
        ([sys.executable, "-I", "-S", str(ROOT / "hooks" / "engramory_post_tool.py")],
         json.dumps(dict(base, hook_event_name="PostToolUse", tool_name="Bash", tool_input={"command": "ls"},
                         tool_response={"stdout": ""})).encode()),
    ]
    for cmd, stdin in runs:
        done = subprocess.run(cmd, input=stdin, capture_output=True, timeout=TIMEOUT, cwd=str(project), env=env)
        assert b"Traceback" not in done.stderr, (cmd, done.stderr)
