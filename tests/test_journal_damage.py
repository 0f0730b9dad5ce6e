"""Issue 19, items 8 and 14: a FIFO, a folder, a device or a plain file where engramory keeps
its metadata (`.engramory/journal.jsonl`, `pending.json`, `manifest.json`, `lock`, `blobs`)
never hangs or crashes a command: a clear message naming the file and a non-zero exit; the
hooks fail open, quietly and at once. Damaged contents (a line that is not JSON, a torn last
line, a manifest field of the wrong type) are read around, with a message."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "engramory.py"
MODULE = [sys.executable, "-m", "engramory"]
HOOKS = ROOT / "hooks"
NAMES = ["journal.jsonl", "pending.json", "manifest.json", "lock", "blobs"]
COMMANDS = {
    "new": ["new", "{root}", "--type", "user", "--name", "gamma", "--description", "Gamma fact about the queue",
            "--body", "The queue drains at night."],
    "update": ["update", "alpha", "{root}", "--body", "A changed body."],
    "archive": ["archive", "alpha", "{root}"],
    "log": ["log", "{root}"],
    "undo": ["undo", "{root}"],
    "review": ["review", "{root}"],
}


def env_for(tmp: Path, **extra: str) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp), "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT),
           "LANG": "C.UTF-8"}
    env.update(extra)
    return env


def run(tmp: Path, argv: list[str], prefix: list[str] = MODULE, timeout: float = 20) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*prefix, *argv], capture_output=True, text=True, env=env_for(tmp), cwd=str(tmp),
                          timeout=timeout, stdin=subprocess.DEVNULL)


def notes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and ".engramory" not in p.parts}


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "mem"
    root.mkdir()
    (root / "MEMORY.md").write_bytes((ROOT / "templates" / "MEMORY.md").read_bytes())
    r = run(tmp_path, ["new", str(root), "--type", "user", "--name", "alpha", "--description",
                       "Alpha fact about the build cache", "--body", "The cache lives under the build folder."])
    assert r.returncode == 0, r.stderr
    assert run(tmp_path, ["review", str(root)]).returncode == 0  # a manifest exists
    return root


def put(where: Path, kind: str) -> None:
    """Replace whatever is at `where` by `kind`."""
    if where.is_dir() and not where.is_symlink():
        for p in sorted(where.rglob("*"), reverse=True):
            p.rmdir() if p.is_dir() else p.unlink()
        where.rmdir()
    elif where.exists() or where.is_symlink():
        where.unlink()
    if kind == "fifo":
        os.mkfifo(where)
    elif kind == "folder":
        where.mkdir()
    elif kind == "device":
        where.symlink_to("/dev/zero")
    elif kind == "file":
        where.write_bytes(b"not what engramory keeps here\n")


def kinds_for(name: str) -> list[str]:
    return ["fifo", "file"] if name == "blobs" else ["fifo", "folder"] + (["device"] if name == "journal.jsonl" else [])


CASES = [(name, kind) for name in NAMES for kind in kinds_for(name)]


# -- item 8: never hang, never crash ------------------------------------------------------------


@pytest.mark.parametrize(("name", "kind"), CASES)
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_fifo_folder_or_device_in_the_metadata_gives_a_message_and_a_nonzero_exit(
        store: Path, name: str, kind: str, command: str) -> None:
    put(store / ".engramory" / name, kind)
    before = notes(store)
    t0 = time.monotonic()
    r = run(store.parent, [a.replace("{root}", str(store)) for a in COMMANDS[command]])
    assert time.monotonic() - t0 < 15
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode not in (0, 1) or command in ("new", "update", "archive", "undo"), (r.returncode, r.stderr)
    assert r.returncode != 0, r.stdout
    assert name in r.stderr and "move it aside" in r.stderr, r.stderr
    assert notes(store) == before  # nothing was written


@pytest.mark.parametrize("name", NAMES)
def test_the_copied_tool_says_the_same(store: Path, name: str) -> None:
    put(store / ".engramory" / name, "fifo")
    for command in ("update", "log", "undo", "review"):
        r = run(store.parent, [a.replace("{root}", str(store)) for a in COMMANDS[command]],
                prefix=[sys.executable, "-I", "-S", str(TOOL)])
        assert r.returncode != 0 and name in r.stderr and "Traceback" not in r.stderr, (command, r.stderr)


def session_payload(cwd: Path) -> bytes:
    return json.dumps({"session_id": "s1", "transcript_path": str(cwd / "t.jsonl"), "cwd": str(cwd),
                       "hook_event_name": "SessionStart", "source": "startup"}).encode()


def bash_payload(cwd: Path) -> bytes:
    return json.dumps({"session_id": "s1", "transcript_path": str(cwd / "t.jsonl"), "cwd": str(cwd),
                       "hook_event_name": "PostToolUse", "tool_name": "Bash",
                       "tool_input": {"command": "rm alpha.md"}, "tool_response": {"stdout": ""}}).encode()


@pytest.mark.parametrize(("name", "kind"), CASES)
@pytest.mark.parametrize("hook", ["engramory_session_start.py", "engramory_post_tool.py"])
def test_the_hooks_fail_open_quietly_and_at_once(store: Path, name: str, kind: str, hook: str) -> None:
    put(store / ".engramory" / name, kind)
    (store / "alpha.md").unlink()  # something for the review to find, if it could run
    payload = session_payload(store.parent) if "session" in hook else bash_payload(store.parent)
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-I", "-S", str(HOOKS / hook)], input=payload, capture_output=True,
                       timeout=20, env=env_for(store.parent, ENGRAMORY_INDEX_PATH=str(store / "MEMORY.md"),
                                               CLAUDE_CONFIG_DIR=str(store.parent / "claude")))
    assert time.monotonic() - t0 < 8
    assert r.returncode == 0 and b"Traceback" not in r.stderr, r.stderr
    if r.stdout.strip():
        json.loads(r.stdout)  # whatever it says is the host's JSON


# -- item 14: damaged metadata, a clear message ------------------------------------------------


def test_log_and_undo_on_a_journal_that_is_a_folder(store: Path) -> None:
    put(store / ".engramory" / "journal.jsonl", "folder")
    for command in ("log", "undo"):
        r = run(store.parent, [command, str(store)])
        assert r.returncode != 0 and "journal.jsonl is a folder" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_undo_when_blobs_is_a_file(store: Path) -> None:
    put(store / ".engramory" / "blobs", "file")
    r = run(store.parent, ["undo", str(store)])
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert "blobs is a file" in r.stderr and "move it aside" in r.stderr, r.stderr
    assert (store / "alpha.md").exists()


def test_review_with_a_manifest_field_of_the_wrong_type(store: Path) -> None:
    where = store / ".engramory" / "manifest.json"
    manifest = json.loads(where.read_text())
    manifest["journal_seen"] = "x"
    manifest["files"]["MEMORY.md"] = "not a row"
    where.write_text(json.dumps(manifest))
    (store / "alpha.md").unlink()
    r = run(store.parent, ["review", str(store), "--json"])
    assert "Traceback" not in r.stderr and r.returncode == 1, r.stderr
    assert '"journal_seen" is "x", not an entry id; read as 0' in r.stderr and "1 damaged row" in r.stderr
    assert [c for e in json.loads(r.stdout)["entries"] for c in e["changes"]] == [
        {"kind": "deleted", "path": "alpha.md"}]


def test_review_with_a_manifest_that_is_not_json(store: Path) -> None:
    (store / ".engramory" / "manifest.json").write_bytes(b"{\"version\": 1, \"files\": {")
    r = run(store.parent, ["review", str(store)])
    assert r.returncode == 0 and "Traceback" not in r.stderr
    assert "manifest.json is damaged (not JSON" in r.stderr and "a new baseline is taken" in r.stderr


def test_a_line_that_is_not_json_and_a_torn_last_line_are_skipped_with_a_message(store: Path) -> None:
    jp = store / ".engramory" / "journal.jsonl"
    good = jp.read_bytes()
    jp.write_bytes(b"not json at all\n" + good + b'{"id": 9, "comm')
    r = run(store.parent, ["log", str(store), "--json"])
    assert r.returncode == 0 and [e["id"] for e in json.loads(r.stdout)] == [1]
    assert "2 lines of the journal are not an entry" in r.stderr
    r = run(store.parent, ["new", str(store), "--type", "user", "--name", "gamma", "--description",
                           "Gamma fact about the queue", "--body", "The queue drains at night."])
    assert r.returncode == 0, r.stderr
    assert jp.read_bytes().endswith(b'"comm\n' + jp.read_bytes().split(b'"comm\n', 1)[1])
    assert [e["id"] for e in json.loads(run(store.parent, ["log", str(store), "--json"]).stdout)] == [2, 1]
    assert run(store.parent, ["undo", str(store)]).returncode == 0
    assert not (store / "gamma.md").exists()


def test_a_journal_line_naming_a_blob_outside_the_folder_is_never_read(store: Path, tmp_path: Path) -> None:
    jp = store / ".engramory" / "journal.jsonl"
    entry = json.loads(jp.read_bytes().splitlines()[-1])
    (tmp_path / "outside").write_bytes(b"secret outside the store\n")
    entry["changes"][0]["before"] = "../../outside"
    entry["id"] = 2
    with open(jp, "ab") as f:
        f.write(json.dumps(entry).encode() + b"\n")
    r = run(store.parent, ["undo", "2", str(store)])
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert b"secret outside" not in b"".join(p.read_bytes() for p in store.rglob("*.md"))


def test_the_metadata_folder_itself_a_file(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    root.mkdir()
    (root / "MEMORY.md").write_bytes((ROOT / "templates" / "MEMORY.md").read_bytes())
    (root / ".engramory").write_bytes(b"a file where the folder belongs\n")
    for command in ("new", "log", "undo", "review"):
        r = run(tmp_path, [a.replace("{root}", str(root)) for a in COMMANDS[command]])
        assert r.returncode != 0 and "Traceback" not in r.stderr, (command, r.stderr)
        assert ".engramory is a file, not the folder engramory keeps its journal in" in r.stderr, r.stderr
    assert not (root / "gamma.md").exists()


def test_a_garbled_intent_record_and_blob_total_are_read_around(store: Path) -> None:
    meta = store / ".engramory"
    (meta / "pending.json").write_bytes(b"\xff\xfe not an intent record")
    (meta / "blobs" / ".total").write_bytes(b"12x")
    r = run(store.parent, ["update", "alpha", str(store), "--body", "A changed body."])
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert not (meta / "pending.json").exists()
    kept = sum(p.stat().st_size for p in (meta / "blobs").iterdir() if len(p.name) == 64)
    assert (meta / "blobs" / ".total").read_text().strip() == str(kept)  # recounted
    assert run(store.parent, ["undo", str(store)]).returncode == 0
