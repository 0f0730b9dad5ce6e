"""kill -9 of the real server at random points while it writes: no partial file is ever visible
as a note, and after the next start of the server (which rolls back the interrupted write from
the journal) the doctor finds no error and the index is inside its window.

Each round starts the server, sends one write (a create, an edit that moves a pointer, a
delete, a rename) and kills the process after a random delay drawn from the write's own
measured duration, or (every other round) a random delay after the write's first rename, which
the journal's test seam reports on stderr and stretches by a few milliseconds: so most kills
land between the files of one write. CI runs ENGRAMORY_MCP_KILLS rounds (default 40);
`ENGRAMORY_MCP_KILLS=1000` is the full run."""

from __future__ import annotations

import json
import os
import random
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

from engramory.curate import index as curate_index
from engramory.doctor import run as doctor
from engramory.doctor.codes import Context
from engramory.store import frontmatter, journal
from tests.conftest import ROOT
from tests.unit.mcp.mcpkit import init, make_store, msg, note_text

WORDS = ["billing", "deploy", "cache", "schema", "queue", "lint", "merge", "token", "search", "ledger"]
KILLS = int(os.environ.get("ENGRAMORY_MCP_KILLS", "40"))  # read at import: the fixtures clear ENGRAMORY_*
WRAPPER = (
    "import random, sys, time\n"
    "sys.path.insert(0, %r)\n"
    "from engramory.store import journal\n"
    "def seam(tmp, final):\n"
    "    sys.stderr.write('@replace\\n'); sys.stderr.flush(); time.sleep(0.002 + random.random() * 0.01)\n"
    "journal._before_replace = seam\n"
    "from engramory.commands import mcp\n"
    "raise SystemExit(mcp.main(sys.argv[1:]))\n" % str(ROOT))


def start(root: Path) -> subprocess.Popen:  # type: ignore[type-arg]
    p = subprocess.Popen([sys.executable, "-I", "-S", "-c", WRAPPER, "--root", str(root)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdin is not None and p.stdout is not None
    p.stdin.write(b"".join(init()))
    p.stdin.flush()
    json.loads(p.stdout.readline())  # initialized: the kill comes during the write, not the start-up
    return p


def finish(p: subprocess.Popen) -> bytes:  # type: ignore[type-arg]
    """Reap a killed server; what it had answered."""
    p.wait()
    assert p.stdin is not None and p.stdout is not None
    out = p.stdout.read()
    for stream in (p.stdin, p.stdout, p.stderr):
        if stream is not None:
            stream.close()
    return out


def wait_for_replace(p: subprocess.Popen, timeout: float) -> bool:  # type: ignore[type-arg]
    """Whether the server reached its first rename of this write within `timeout` seconds."""
    assert p.stderr is not None
    fd = p.stderr.fileno()
    end = time.monotonic() + timeout
    seen = b""
    while time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], max(0.0, end - time.monotonic()))
        if not ready:
            return False
        chunk = os.read(fd, 4096)
        if not chunk:
            return False
        seen += chunk
        if b"@replace" in seen:
            return True
    return False


def write_call(rng: random.Random, root: Path, k: int) -> Dict[str, Any]:
    live = sorted(p.stem for p in root.glob("*.md") if p.name != "MEMORY.md")
    name = rng.choice(live)
    kind = rng.randrange(4)
    if kind == 0 or len(live) < 10:
        new = "crash-%d" % k
        words = " ".join(rng.choice(WORDS) + str(rng.randrange(1000)) for _ in range(4))
        return {"command": "create", "path": "/memories/%s.md" % new, "file_text": note_text(new, words, "user")}
    if kind == 1:  # a new type: the note and its pointer, under another heading, in one write
        was = "type: reference" if "type: reference" in (root / (name + ".md")).read_text(encoding="utf-8") else "type: user"
        return {"command": "str_replace", "path": "/memories/%s.md" % name, "old_str": was,
                "new_str": "type: user" if was == "type: reference" else "type: reference"}
    if kind == 2:
        return {"command": "delete", "path": "/memories/%s.md" % name}
    return {"command": "rename", "old_path": "/memories/%s.md" % name, "new_path": "/memories/moved-%d.md" % k}


def visible_notes_whole(root: Path) -> None:
    """Every .md file a reader sees (dot files are temp files, never notes) is a whole note."""
    for folder in (root, root / "archive"):
        if not folder.is_dir():
            continue
        for p in folder.iterdir():
            if p.name.startswith(".") or p.name == "MEMORY.md" or not p.name.endswith(".md"):
                continue
            text = p.read_text(encoding="utf-8")
            fm = frontmatter.parse(text)
            assert fm.closed and not fm.problems and text.endswith("\n"), (p, text[-80:])


def errors(root: Path) -> List[str]:
    _, found = doctor.audit(str(root), Context(git=False))
    return ["%s %s: %s" % (f.code, f.path, f.message) for f in found if f.severity == "error"]


def test_kill_9_mid_write_leaves_no_partial_note_and_the_next_start_cleans_up(tmp_path: Path) -> None:
    root = make_store(tmp_path / "store", notes=30)
    rng = random.Random(9)
    durations: List[float] = []
    for k in range(5):  # how long one write takes here, start to answer
        p = start(root)
        assert p.stdin is not None and p.stdout is not None
        t = time.monotonic()
        p.stdin.write(msg(1, "tools/call", {"name": "memory_edit", "arguments": write_call(rng, root, 10_000 + k)}))
        p.stdin.flush()
        p.stdout.readline()
        durations.append(time.monotonic() - t)
        p.kill()
        finish(p)
    window = max(durations) * 1.2
    outcomes = {"answered": 0, "interrupted": 0, "before": 0}
    for k in range(KILLS):
        p = start(root)
        assert p.stdin is not None
        p.stdin.write(msg(1, "tools/call", {"name": "memory_edit", "arguments": write_call(rng, root, k)}))
        p.stdin.flush()
        if k % 2 and wait_for_replace(p, 10.0):
            time.sleep(rng.random() * 0.015)  # a random point among the write's renames
        else:
            time.sleep(rng.random() * window)  # a random point of the whole call
        os.kill(p.pid, signal.SIGKILL)
        out = finish(p)
        pending = (root / journal.DIR / journal.PENDING).exists()
        visible_notes_whole(root)
        outcomes["answered" if out.count(b"\n") >= 1 else "interrupted" if pending else "before"] += 1
        again = subprocess.run([sys.executable, "-I", "-S", str(ROOT / "tools" / "engramory.py"), "mcp", "--root",
                                str(root)], input=b"".join(init()) + msg(2, "ping"), capture_output=True, timeout=120)
        assert again.returncode == 0, again.stderr
        assert not (root / journal.DIR / journal.PENDING).exists()
        visible_notes_whole(root)
        assert errors(root) == [], "round %d (%s)" % (k, outcomes)
        lines, units = curate_index.window().measure((root / "MEMORY.md").read_bytes())
        assert lines <= 200 and units <= 25_000
    print("kill -9 rounds: %d, outcomes %s" % (KILLS, outcomes))
    assert outcomes["interrupted"] > 0, outcomes  # the kills did land mid-write
