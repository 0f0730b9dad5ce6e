"""`engramory merge-index %O %A %B %L %P` as a command: the result written into ours, exit 1
with the numbers when it is over the caps of the store that holds it (its .engramory.json,
else Claude Code's window), nothing dropped."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-I", "-S", str(ROOT / "tools" / "engramory.py"), "merge-index", *args],
                          cwd=str(cwd), capture_output=True, text=True, timeout=60)


def files(tmp: Path, base: str, ours: str, theirs: str) -> None:
    for name, text in (("O", base), ("A", ours), ("B", theirs)):
        (tmp / name).write_text(text, encoding="utf-8")


def lines(prefix: str, n: int) -> str:
    return "".join("- [%s %d](%s-%d.md)\n" % (prefix, i, prefix, i) for i in range(n))


def test_the_store_config_caps_hold_the_merge(tmp_path: Path) -> None:
    (tmp_path / "mem").mkdir()
    (tmp_path / "mem" / ".engramory.json").write_text('{"version": 1, "hardLines": 50, "warnLines": 40}',
                                                       encoding="utf-8")
    base = "# Memory Index\n" + lines("n", 30)
    files(tmp_path, base, base + lines("a", 12), base + lines("b", 12))
    done = run(tmp_path, "O", "A", "B", "7", "mem/MEMORY.md")
    assert done.returncode == 1
    assert "the merged index is 55 lines" in done.stderr and "hard cap of 50 lines" in done.stderr
    assert "by 5 lines" in done.stderr and "engramory compact %s" % (tmp_path / "mem") in done.stderr
    assert (tmp_path / "A").read_text(encoding="utf-8") == base + lines("a", 12) + lines("b", 12)


def test_json_and_a_clean_merge(tmp_path: Path) -> None:
    base = "# Memory Index\n" + lines("n", 3)
    files(tmp_path, base, base + lines("a", 1), base + lines("b", 1))
    done = run(tmp_path, "--json", "O", "A", "B", "7", "MEMORY.md")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report == {"ok": True, "path": "MEMORY.md", "entries": 5, "conflicts": [], "over_cap": None}


def test_a_conflict_exits_1_and_says_what_to_do(tmp_path: Path) -> None:
    files(tmp_path, "- [A](a.md)\n", "- [A](a.md) one\n", "- [A](a.md) two\n")
    done = run(tmp_path, "O", "A", "B", "11", "MEMORY.md")
    assert done.returncode == 1
    assert "1 conflict (a.md), all in one block after the title line" in done.stderr
    assert "`git add MEMORY.md`" in done.stderr
    text = (tmp_path / "A").read_text(encoding="utf-8")
    assert text.startswith("<" * 11 + " ours") and "=" * 11 in text and ">" * 11 + " theirs" in text
