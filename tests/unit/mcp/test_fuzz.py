"""10,000 random tool calls, in process, on a store near its caps: creates (good and bad),
str_replace and insert on notes and on the index, renames, deletes, views and searches. After
every call the index is inside Claude Code's window; after each round of ROUND calls the doctor
finds no error (the store started with none), and undoing the round's journal entries, newest
first, gives back the round's starting bytes, file for file."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any, Callable, Dict, List

import pytest

from engramory.curate import index as curate_index
from engramory.doctor import run as doctor
from engramory.doctor.codes import Context
from engramory.store import journal
from tests.unit.mcp.mcpkit import Client, make_store, note_text

CALLS = int(os.environ.get("ENGRAMORY_MCP_FUZZ_CALLS", "10000"))  # read at import: the fixtures clear ENGRAMORY_*
ROUND = 1000
WORDS = ["billing", "deploy", "cache", "schema", "queue", "lint", "\u65e5\u672c\u8a9e", "caf\u00e9", "merge", "token"]
TYPES = ["user", "feedback", "project", "reference"]


def snapshot(root: Path) -> Dict[str, bytes]:
    out = {}
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".engramory"]
        for f in files:
            p = Path(dirpath) / f
            out[str(p.relative_to(root))] = p.read_bytes()
    return out


def errors(root: Path) -> List[str]:
    _, found = doctor.audit(str(root), Context(git=False))
    return ["%s %s: %s" % (f.code, f.path, f.message) for f in found if f.severity == "error"]


class Fuzzer:
    def __init__(self, root: Path, rng: random.Random) -> None:
        self.root, self.rng, self.c = root, rng, Client(root)
        self.entries: List[int] = []
        self.counter = 0

    def live(self) -> List[str]:
        return sorted(p.stem for p in self.root.glob("*.md") if p.name != "MEMORY.md")

    def archived(self) -> List[str]:
        return sorted(p.stem for p in (self.root / "archive").glob("*.md")) if (self.root / "archive").is_dir() else []

    def pick(self) -> str:
        names = self.live()
        return self.rng.choice(names) if names else "none"

    def words(self, n: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(n))

    def new_note(self) -> Dict[str, Any]:
        self.counter += 1
        name = "fz-%d-%s" % (self.counter, self.rng.choice(["a", "b", "c"]))
        t = self.rng.choice(TYPES)
        text = note_text(name, "Fact %d on %s" % (self.counter, self.words(3)), t, "About %s." % self.words(6))
        spoil = self.rng.randrange(8)
        if spoil == 0:
            text = text.replace("**Why:**", "Why")
        elif spoil == 1:
            text = text.replace("name: " + name, "name: wrong")
        elif spoil == 2:
            text = text.replace("About", "The key is AKIA" + "Q" * 16 + ". About")
        return {"command": "create", "path": "/memories/%s.md" % name, "file_text": text}

    def note_edit(self) -> Dict[str, Any]:
        name = self.pick()
        path = "/memories/%s.md" % name
        kind = self.rng.randrange(6)
        if kind == 0:
            return {"command": "str_replace", "path": path, "old_str": "description: ", "new_str": "description: New "}
        if kind == 1:
            return {"command": "str_replace", "path": path, "old_str": "type: reference", "new_str": "type: user"}
        if kind == 2:
            return {"command": "str_replace", "path": path, "old_str": "**How to apply:**", "new_str": "Then"}
        if kind == 3:
            return {"command": "insert", "path": path, "insert_line": self.rng.randrange(0, 12),
                    "insert_text": "Seen with %s on 2026-11-%02d." % (self.words(2), self.rng.randrange(1, 29))}
        if kind == 4:
            return {"command": "str_replace", "path": path, "old_str": "Where", "new_str": "Where exactly"}
        return {"command": "str_replace", "path": path, "old_str": "---\n", "new_str": "--\n"}

    def index_edit(self) -> Dict[str, Any]:
        name = self.pick()
        kind = self.rng.randrange(5)
        if kind == 0:
            return {"command": "str_replace", "path": "/memories/MEMORY.md", "old_str": "(%s.md)" % name,
                    "new_str": "(%s.md) \u2014 %s" % (name, "x" * self.rng.randrange(1, 400))}
        if kind == 1:
            return {"command": "insert", "path": "/memories/MEMORY.md", "insert_line": self.rng.randrange(0, 210),
                    "insert_text": self.rng.choice(["", "## user", "- [Ghost](ghost.md)", "prose " + self.words(5),
                                                    "<!-- note -->", "---"])}
        if kind == 2:
            return {"command": "str_replace", "path": "/memories/MEMORY.md", "old_str": "- [Reference %s" % name[-3:],
                    "new_str": "- [R%s" % name[-3:]}
        if kind == 3:
            return {"command": "str_replace", "path": "/memories/MEMORY.md", "old_str": "(%s.md)\n" % name, "new_str": ""}
        return {"command": "str_replace", "path": "/memories/MEMORY.md", "old_str": " \u2014 " + "w" * 100,
                "new_str": " \u2014 " + "w" * 20}

    def move(self) -> Dict[str, Any]:
        kind = self.rng.randrange(3)
        if kind == 0:
            return {"command": "delete", "path": "/memories/%s.md" % self.pick()}
        if kind == 1 and self.archived():
            name = self.rng.choice(self.archived())
            return {"command": "rename", "old_path": "/memories/archive/%s.md" % name, "new_path": "/memories/%s.md" % name}
        self.counter += 1
        return {"command": "rename", "old_path": "/memories/%s.md" % self.pick(),
                "new_path": "/memories/rn-%d.md" % self.counter}

    def step(self) -> None:
        roll = self.rng.random()
        if roll < 0.15:
            path = self.rng.choice(["/memories", "/memories/MEMORY.md", "/memories/archive", "/memories/%s.md" % self.pick(),
                                    "/memories/../etc", "/memories/.engramory.json"])
            self.c.call("memory_view", path=path)
            return
        if roll < 0.25:
            self.c.call("memory_search", query=self.words(2))
            return
        makers: List[Callable[[], Dict[str, Any]]] = [self.new_note, self.note_edit, self.index_edit, self.move]
        args = self.rng.choice(makers)()
        r = self.c.call("memory_edit", **args)
        entry = (r.get("structuredContent") or {}).get("entry")
        if not r["isError"] and entry:
            self.entries.append(int(entry))


def inside_window(root: Path) -> None:
    data = (root / "MEMORY.md").read_bytes()
    lines, units = curate_index.window().measure(data)
    assert lines <= 200 and units <= 25_000, (lines, units)


def test_random_calls_keep_the_caps_the_doctor_clean_and_undo_byte_exact(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # durability is test_crash's subject; here fsync only costs the run its time (a 9x slower CI)
    monkeypatch.setattr(os, "fsync", lambda fd: None)
    root = make_store(tmp_path / "store", notes=185, pad=100)  # 188 lines, about 24,400 units
    start_lines, start_units = curate_index.window().measure((root / "MEMORY.md").read_bytes())
    assert start_lines == 188 and 23_000 < start_units < 25_000
    assert errors(root) == []
    rng = random.Random(2025)
    done = 0
    writes = 0
    while done < CALLS:
        start = snapshot(root)
        fz = Fuzzer(root, rng)
        for _ in range(min(ROUND, CALLS - done)):
            fz.step()
            inside_window(root)
        done += min(ROUND, CALLS - done)
        assert errors(root) == [], "after %d calls" % done
        writes += len(fz.entries)
        for entry in sorted(fz.entries, reverse=True):
            journal.undo(str(root), entry)
        assert snapshot(root) == start, "undo of round ending at call %d" % done
    assert writes > CALLS // 10  # the writes were real, not all refused
