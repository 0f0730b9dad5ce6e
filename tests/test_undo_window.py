"""Found by tests/test_store_property.py: `undo` could make the host load less than before
without saying so. It puts back the bytes an entry replaced, so a note whose only entry the
host loaded loses it when the undo takes back the hand edit (journaled by review) that added it,
or when it undoes a write that had made room (an archive, a compaction) and the entry falls
past the window again. The undo is still done (it is the way back), with a warning naming
the notes and what to run next. Through `python3 -m engramory` and `tools/engramory.py`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENTRY_POINTS = {
    "module": [sys.executable, "-m", "engramory"],
    "tool": [sys.executable, "-I", "-S", str(ROOT / "tools" / "engramory.py")],
}
NOTE = "---\nname: %s\ndescription: %s fact about the build\ntype: user\ncreated: 2026-01-01\nupdated: 2026-01-01\n---\nx\n"


def cli(entry: str, *args: object) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAMORY_")}
    done = subprocess.run([*ENTRY_POINTS[entry], *map(str, args)], capture_output=True, text=True, env=env,
                          timeout=60, stdin=subprocess.DEVNULL)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in (0, 1), (args, done.stdout, done.stderr)
    return done


def store(tmp: Path, index: str) -> Path:
    root = tmp / "mem"
    root.mkdir()
    for name in ("s1", "s2"):
        (root / (name + ".md")).write_text(NOTE % (name, name))
    (root / "MEMORY.md").write_text(index)
    return root


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_undo_of_a_hand_edit_that_gave_a_note_its_only_entry_warns(tmp_path: Path, entry: str) -> None:
    root = store(tmp_path, "# Memory Index\n\n## user\n- [S1](s1.md) \u2014 one\n")
    assert cli(entry, "review", root).returncode == 0
    with (root / "MEMORY.md").open("a") as f:
        f.write("- [S2](s2.md) \u2014 added by hand\n")
    rows = json.loads(cli(entry, "review", root, "--json").stdout)["entries"]
    done = cli(entry, "undo", rows[0]["id"], root)
    assert done.returncode == 0, done.stderr
    assert "(s2.md)" not in (root / "MEMORY.md").read_text()  # undone, as asked
    assert "warning:" in done.stdout and "s2.md" in done.stdout.split("warning:", 1)[1], done.stdout
    assert "engramory doctor" in done.stdout
    done = cli(entry, "undo", rows[0]["id"] + 1, root, "--json")  # redo: the entry is back, nothing lost
    assert json.loads(done.stdout)["warnings"] == []


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_undo_of_an_archive_that_made_room_warns_of_the_entry_it_pushes_out(tmp_path: Path, entry: str) -> None:
    filler = "".join("- filler fact %d about the old build\n" % i for i in range(196))
    root = store(tmp_path, "# Memory Index\n\n## user\n- [S1](s1.md) \u2014 one\n" + filler + "- [S2](s2.md) \u2014 two\n")
    done = cli(entry, "archive", "s1", "--root", root)  # s2's entry moves from line 201 to 200: loaded
    assert done.returncode == 0, done.stderr
    done = cli(entry, "undo", root, "--json")
    assert done.returncode == 0, done.stderr
    warnings = json.loads(done.stdout)["warnings"]
    assert len(warnings) == 1 and "s2.md" in warnings[0] and "line 201" in warnings[0], warnings
    assert "engramory compact" in warnings[0]


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_undo_that_brings_a_note_back_without_an_entry_warns(tmp_path: Path, entry: str) -> None:
    # s2 has no entry (an orphan, say a hand-made note): archive it, then undo the archive;
    # the note is back, and the host reaches it through no line: the undo says so
    root = store(tmp_path, "# Memory Index\n\n## user\n- [S1](s1.md) \u2014 one\n")
    done = cli(entry, "archive", "s2", "--root", root)
    assert done.returncode == 0, done.stderr
    done = cli(entry, "undo", root, "--json")
    assert done.returncode == 0, done.stderr
    assert (root / "s2.md").is_file()
    answer = json.loads(done.stdout)
    warnings = answer["warnings"]
    assert len(warnings) == 1 and "s2.md (it is back without an entry in the index)" in warnings[0], warnings
    done = cli(entry, "undo", answer["entry"]["id"], root)  # redo the archive: nothing comes back, no warning
    assert done.returncode == 0 and "warning:" not in done.stdout, done.stdout
