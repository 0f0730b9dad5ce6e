"""Issue 19, the journal's half, through the real entry points (`python3 -m engramory ...` and
`tools/engramory.py` under `-I -S`, as subprocesses): review keeps engramory's own writes
(item 2), undo is always kept or refused before writing (3), the journal never holds a
secret (4), `undo` with no id takes back engramory's own newest write (13), and compact
names the entry its own transaction appended (17)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "engramory.py"
ENTRY_POINTS = {
    "module": [sys.executable, "-m", "engramory"],
    "tool": [sys.executable, "-I", "-S", str(TOOL)],
}
TOKEN = "ghp_" + "Q7r8A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
PASSWORD = "Zx81qLp0Wm3vTy7uKd42"

Run = Callable[..., "subprocess.CompletedProcess[str]"]


def env_for(tmp: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp), "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT),
            "LANG": "C.UTF-8"}


@pytest.fixture(params=sorted(ENTRY_POINTS))
def run(request: pytest.FixtureRequest, tmp_path: Path) -> Run:
    prefix = ENTRY_POINTS[request.param]

    def go(*args: object, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([*prefix, *map(str, args)], capture_output=True, text=True, env=env_for(tmp_path),
                              cwd=str(tmp_path), timeout=timeout, stdin=subprocess.DEVNULL)
        assert "Traceback" not in proc.stderr, proc.stderr
        return proc

    return go


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "mem"
    root.mkdir()
    (root / "MEMORY.md").write_bytes((ROOT / "templates" / "MEMORY.md").read_bytes())
    return root


def new(run: Run, store: Path, name: str, desc: str, body: str, *extra: str) -> subprocess.CompletedProcess[str]:
    r = run("new", store, "--type", "user", "--name", name, "--description", desc, "--body", body, *extra)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def review_rows(run: Run, store: Path) -> list[dict[str, object]]:
    r = run("review", store, "--json")
    assert r.returncode == 1, r.stdout + r.stderr
    rows: list[dict[str, object]] = json.loads(r.stdout)["entries"]
    return rows


def journal_bytes(store: Path) -> bytes:
    meta = store / ".engramory"
    return b"".join(p.read_bytes() for p in sorted(meta.glob("journal*")) if p.is_file())


# -- item 2: review forgets our own writes -------------------------------------------------------


def test_review_reports_a_deleted_note_engramory_wrote_and_undo_brings_it_back(run: Run, store: Path) -> None:
    new(run, store, "alpha", "Alpha fact about the build cache", "The cache lives under the build folder.")
    assert run("review", store).returncode == 0  # the baseline
    index_before = (store / "MEMORY.md").read_bytes()
    new(run, store, "beta", "Beta fact about the release train", "Releases leave on Tuesdays.")
    beta = (store / "beta.md").read_bytes()
    (store / "beta.md").unlink()
    rows = review_rows(run, store)
    assert [c for e in rows for c in e["changes"]] == [{"kind": "deleted", "path": "beta.md"}]  # type: ignore[attr-defined]
    r = run("undo", rows[0]["id"], store)
    assert r.returncode == 0, r.stderr
    assert (store / "beta.md").read_bytes() == beta
    r = run("undo", store)  # engramory's own newest write: the new of beta
    assert r.returncode == 0, r.stderr
    assert not (store / "beta.md").exists() and (store / "MEMORY.md").read_bytes() == index_before


def test_undo_of_a_review_entry_gives_back_the_latest_write_not_an_older_one(run: Run, store: Path) -> None:
    new(run, store, "alpha", "Alpha fact about the build cache", "Version one of the fact.")
    assert run("review", store).returncode == 0
    r = run("update", "alpha", store, "--body", "Version two of the fact.")
    assert r.returncode == 0, r.stderr
    v2 = (store / "alpha.md").read_bytes()
    (store / "alpha.md").write_text("overwritten by a sync client\n")
    rows = review_rows(run, store)
    assert [c for e in rows for c in e["changes"]] == [{"kind": "changed", "path": "alpha.md"}]  # type: ignore[attr-defined]
    r = run("undo", rows[0]["id"], store)
    assert r.returncode == 0, r.stderr
    assert (store / "alpha.md").read_bytes() == v2
    assert run("review", store).returncode == 0  # the undo is engramory's own write: nothing to report


def test_a_hand_edit_before_an_update_is_journaled_so_undoing_everything_gives_the_start(
        run: Run, store: Path) -> None:
    new(run, store, "alpha", "Alpha fact about the build cache", "Version one of the fact.")
    assert run("review", store).returncode == 0
    start = {p.name: p.read_bytes() for p in store.glob("*.md")}
    (store / "alpha.md").write_bytes((store / "alpha.md").read_bytes() + b"\nA line added by hand.\n")
    assert run("update", "alpha", store, "--description", "Alpha fact about the build cache, sharper").returncode == 0
    log = json.loads(run("log", store, "--json").stdout)
    assert [e["command"] for e in log[:2]] == ["update", "external"]  # the hand edit, journaled first
    for e in log[:2]:
        assert run("undo", e["id"], store).returncode == 0
    assert {p.name: p.read_bytes() for p in store.glob("*.md")} == start


# -- item 3: undo must always be kept ------------------------------------------------------------


def test_a_hand_written_note_with_a_password_is_kept_for_undo_and_redo(run: Run, store: Path) -> None:
    assert run("review", store).returncode == 0
    creds = store / "creds.md"
    creds.write_text("---\nname: creds\ndescription: where the staging login is\n---\npassword = %s\n" % PASSWORD)
    data = creds.read_bytes()
    rows = review_rows(run, store)
    assert [c for e in rows for c in e["changes"]] == [{"kind": "added", "path": "creds.md"}]  # type: ignore[attr-defined]
    undone = run("undo", rows[0]["id"], store, "--json")
    assert undone.returncode == 0, undone.stderr
    assert not creds.exists()
    r = run("search", "staging login", store)  # its bytes are in the blob store now: never searched
    assert r.returncode == 1 and PASSWORD not in r.stdout + r.stderr, r.stdout
    redo = json.loads(undone.stdout)["entry"]
    r = run("undo", redo["id"], store)  # the redo it offers
    assert r.returncode == 0, r.stderr
    assert creds.read_bytes() == data and redo["undoable"] is True
    blobs = store / ".engramory" / "blobs"
    assert blobs.stat().st_mode & 0o777 == 0o700
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in blobs.iterdir())
    for args in (("log", store), ("log", store, "--json"), ("review", store, "--all", "--json")):
        r = run(*args)
        assert PASSWORD not in r.stdout + r.stderr, args
    assert PASSWORD.encode() not in journal_bytes(store)


def test_compact_dropping_a_dead_pointer_of_an_index_holding_a_secret_is_undone(run: Run, store: Path) -> None:
    new(run, store, "alpha", "Alpha fact about the build cache", "The cache lives under the build folder.")
    index = store / "MEMORY.md"
    index.write_bytes(index.read_bytes() + ("- CI deploy token: %s\n- [Gone](gone.md) \u2014 a note deleted by hand\n"
                                            % TOKEN).encode())
    before = index.read_bytes()
    r = run("compact", store, "--target", "4/200", "--apply", "-")
    assert r.returncode in (1, 2), r.stdout + r.stderr  # applied (2: and decisions are left)
    assert index.read_bytes() != before
    eid = json.loads(run("log", store, "--json", "--limit", "1").stdout)[0]["id"]
    assert "`engramory undo %d` restores the store byte for byte" % eid in r.stdout
    r = run("undo", eid, store)
    assert r.returncode == 0, r.stderr
    assert index.read_bytes() == before


def test_undo_that_cannot_be_kept_is_refused_before_writing_unless_no_undo(run: Run, store: Path) -> None:
    big = store / "big.md"
    big.write_bytes(b"---\nname: big\ndescription: a dump\ntype: reference\n---\n" + b"x" * (9 << 20))
    index = store / "MEMORY.md"
    index.write_bytes(index.read_bytes() + b"- [Big](big.md) \xe2\x80\x94 a dump\n")
    before = {p.name: p.read_bytes() for p in store.rglob("*") if p.is_file() and ".engramory" not in p.parts}
    r = run("archive", "big", store)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "--no-undo" in r.stderr and "8,388,608" in r.stderr and "big.md" in r.stderr
    assert {p.name: p.read_bytes() for p in store.rglob("*") if p.is_file() and ".engramory" not in p.parts} == before
    assert not (store / ".engramory" / "journal.jsonl").exists()
    r = run("archive", "big", store, "--no-undo", "--json")
    assert r.returncode == 0, r.stderr
    receipt = json.loads(r.stdout)
    assert receipt["undoable"] is False and (store / "archive" / "big.md").exists()
    r = run("log", store)
    assert "cannot be undone" in r.stdout and "takes it back" not in r.stdout
    r = run("undo", store)
    assert r.returncode == 1 and "--no-undo" in r.stderr
    assert (store / "archive" / "big.md").exists()


def test_receipts_never_promise_an_undo_that_cannot_happen(run: Run, store: Path) -> None:
    new(run, store, "alpha", "Alpha fact about the build cache", "The cache lives under the build folder.")
    r = run("update", "alpha", store, "--body", "A new body.", "--no-undo")
    assert r.returncode == 0, r.stderr
    assert "takes it back" not in r.stdout and "undo is NOT possible" in r.stdout


# -- item 4: the journal keeps arguments without their secrets -----------------------------------


@pytest.mark.parametrize("option", ["--hook", "--title"])
def test_a_secret_in_an_argument_never_reaches_the_journal_or_log(run: Run, store: Path, option: str) -> None:
    run("new", store, "--type", "user", "--name", "gamma", "--description", "Gamma fact about deploys",
        "--body", "Deploys go through the queue.", option, "token " + TOKEN)
    new(run, store, "delta", "Delta fact about the queue", "The queue drains at night.")
    assert run("update", "delta", store, "--title", "see " + TOKEN).returncode in (0, 1)
    assert TOKEN.encode() not in journal_bytes(store)
    for args in (("log", store), ("log", store, "--json")):
        r = run(*args)
        assert r.returncode == 0 and TOKEN not in r.stdout + r.stderr


# -- item 13: undo with no id is engramory's own newest write --------------------------------------


def test_undo_with_no_id_skips_a_hand_edit_review_journaled(run: Run, store: Path) -> None:
    new(run, store, "alpha", "Alpha fact about the build cache", "The cache lives under the build folder.")
    new(run, store, "beta", "Beta fact about the release train", "Releases leave on Tuesdays.")
    assert run("review", store).returncode == 0
    edited = (store / "alpha.md").read_bytes() + b"\nA line the user added by hand.\n"
    (store / "alpha.md").write_bytes(edited)
    external = review_rows(run, store)[0]["id"]
    r = run("undo", store, "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["entry"]["undoes"] == 2  # the new of beta, not the hand edit
    assert not (store / "beta.md").exists() and (store / "alpha.md").read_bytes() == edited
    assert run("undo", external, store).returncode == 0  # an external entry: only by its id
    assert b"by hand" not in (store / "alpha.md").read_bytes()
    help_text = " ".join(run("undo", "--help").stdout.split())
    assert "never a change made outside engramory" in help_text and "only by their ID" in help_text


# -- item 17: compact reports its own entry --------------------------------------------------------

RACE = """
import sys
sys.path.insert(0, sys.argv[1])
from engramory import cli
from engramory.store import journal
root = sys.argv[2]
real_exit = journal.StoreLock.__exit__
state = {"raced": False}

def exit_then_let_a_waiting_writer_in(self, *exc):
    real_exit(self, *exc)
    if not state["raced"] and not journal.StoreLock._held:
        state["raced"] = True  # a `new` that waited for the lock commits before compact reads on
        import contextlib, io
        with contextlib.redirect_stdout(io.StringIO()):
            assert cli.main(["new", root, "--type", "user", "--name", "racer", "--description",
                             "A writer that waited for the lock", "--body", "It committed in between."]) == 0

journal.StoreLock.__exit__ = exit_then_let_a_waiting_writer_in
raise SystemExit(cli.main(["compact", root, "--target", "4/200", "--apply", "-"] + sys.argv[3:]))
"""


@pytest.mark.parametrize("as_json", [False, True])
def test_compact_apply_names_its_own_entry_not_a_writer_that_came_after(store: Path, as_json: bool) -> None:
    index = store / "MEMORY.md"
    index.write_bytes(index.read_bytes() + b"- [Gone](gone.md) \xe2\x80\x94 a note deleted by hand\n" * 3)
    r = subprocess.run([sys.executable, "-I", "-S", "-c", RACE, str(ROOT), str(store)] + (["--json"] if as_json else []),
                       capture_output=True, text=True, timeout=60, env=env_for(store.parent))
    assert r.returncode in (1, 2), r.stderr  # applied (2: and decisions are left)
    entries = {e["command"]: e["id"] for e in json.loads(subprocess.run(
        [sys.executable, "-I", "-S", str(TOOL), "log", str(store), "--json"], capture_output=True, text=True,
        timeout=60, env=env_for(store.parent)).stdout)}
    assert set(entries) == {"compact", "new"} and entries["new"] > entries["compact"]
    if as_json:
        assert json.loads(r.stdout)["journal_id"] == entries["compact"]
    else:
        assert "as journal entry %d;" % entries["compact"] in r.stdout
