"""Generated memory stores for the compaction tests: over-cap indexes with long lines,
duplicate and dead pointers, identical and near-identical notes, cold and pinned notes, mixed
types and frontmatter forms, CRLF line ends, a BOM and non-ASCII text (astral included)."""

from __future__ import annotations

import datetime
import hashlib
import json
from pathlib import Path
from typing import Any, Dict, List

from hypothesis import strategies as st

TYPES = ("user", "feedback", "project", "reference")
WORDS = ("cache", "deploy", "token", "review", "schema", "queue", "billing", "merge", "lint", "suite",
         "caf\u00e9", "na\u00efve", "\u65e5\u672c\u8a9e", "\u00fcber", "\U0001f600", "r\u00e9sum\u00e9")


def note_spec() -> st.SearchStrategy[Dict[str, Any]]:
    return st.fixed_dictionaries({
        "type": st.sampled_from(TYPES),
        "form": st.sampled_from(("protocol", "protocol", "claude")),
        "age": st.integers(0, 900),
        "pinned": st.booleans(),
        "words": st.lists(st.sampled_from(WORDS), min_size=1, max_size=14),
        "copy_of": st.one_of(st.none(), st.integers(0, 40)),
        "link_to": st.one_of(st.none(), st.integers(0, 40)),
        "crlf": st.booleans(),
        "indexed": st.sampled_from(("yes", "yes", "yes", "twice", "no")),
        "long_hook": st.integers(0, 4),  # 0..1: short; 2..4: long (over 150 characters)
    })


def store_spec() -> st.SearchStrategy[Dict[str, Any]]:
    return st.fixed_dictionaries({
        "notes": st.lists(note_spec(), min_size=1, max_size=30),
        "dead": st.integers(0, 4),
        "headings": st.booleans(),
        "crlf": st.booleans(),
        "bom": st.booleans(),
        "trailing_newline": st.booleans(),
        "warn_ratio": st.floats(0.2, 0.95),
        "hard_ratio": st.floats(0.6, 1.2),
    })


def build(root: Path, spec: Dict[str, Any]) -> None:
    """Write the store `spec` describes into `root` (an empty folder)."""
    root.mkdir(parents=True, exist_ok=True)
    base = datetime.date(2026, 6, 1)
    notes: List[Dict[str, Any]] = spec["notes"]
    slugs = ["%s-n%d" % (n["type"], i) for i, n in enumerate(notes)]
    bodies = []
    for i, n in enumerate(notes):
        src = n["copy_of"]
        if src is not None and src < i:
            bodies.append(bodies[src])
            continue
        text = " ".join(n["words"]) + "."
        if n["type"] in ("feedback", "project"):
            text += "\n\n**Why:** it matters.\n\n**How to apply:** check first."
        link = n["link_to"]
        if link is not None and link < len(notes) and link != i:
            text += "\n\nSee [[%s]]." % slugs[link]
        bodies.append(text)
    for i, n in enumerate(notes):
        date = (base - datetime.timedelta(days=n["age"])).isoformat()
        desc = "About " + " ".join(n["words"][:4])
        if n["form"] == "protocol":
            fm = ["name: %s" % slugs[i], "description: %s" % desc, "type: %s" % n["type"],
                  "created: %s" % date, "updated: %s" % date]
            if n["pinned"]:
                fm.append("pinned: 'true'")
        else:
            fm = ["name: %s" % slugs[i], "description: %s" % desc, "metadata:", "  type: %s" % n["type"]]
            if n["pinned"]:
                fm.append("  pinned: 'true'")
        text = "---\n" + "\n".join(fm) + "\n---\n\n" + bodies[i] + "\n"
        if n["crlf"]:
            text = text.replace("\n", "\r\n")
        (root / (slugs[i] + ".md")).write_bytes(text.encode("utf-8"))
    lines: List[str] = []
    by_type: Dict[str, List[str]] = {t: [] for t in TYPES}
    for i, n in enumerate(notes):
        if n["indexed"] == "no":
            continue
        hook = " ".join(n["words"][:3])
        if n["long_hook"] >= 2:
            hook = (" ".join(n["words"]) + " ") * 12
            hook = hook.strip()
        line = "- [%s](%s.md) \u2014 %s" % (slugs[i].replace("-", " "), slugs[i], hook)
        target = by_type[n["type"]] if spec["headings"] else lines
        target.append(line)
        if n["indexed"] == "twice":
            target.append("- [again](%s.md) \u2014 %s" % (slugs[i], hook[:40]))
    for k in range(spec["dead"]):
        (by_type["user"] if spec["headings"] else lines).append("- [gone %d](gone-%d.md) \u2014 was here" % (k, k))
    if spec["headings"]:
        out = ["# Memory Index"]
        for t in TYPES:
            if by_type[t]:
                out += ["", "## " + t] + by_type[t]
        lines = out
    eol = "\r\n" if spec["crlf"] else "\n"
    text = eol.join(lines) + (eol if spec["trailing_newline"] else "")
    data = (("\ufeff" if spec["bom"] else "") + text).encode("utf-8")
    (root / "MEMORY.md").write_bytes(data)
    n_lines = max(1, data.count(b"\n") + (0 if data.endswith(b"\n") else 1))
    warn_l = max(1, int(n_lines * spec["warn_ratio"]))
    warn_b = max(1, int(len(data) * spec["warn_ratio"]))
    hard_l = max(warn_l, int(n_lines * spec["hard_ratio"]))
    hard_b = max(warn_b, int(len(data) * spec["hard_ratio"]))
    cfg = {"version": 1, "warnLines": warn_l, "warnBytes": warn_b, "hardLines": hard_l, "hardBytes": hard_b}
    (root / ".engramory.json").write_text(json.dumps(cfg), encoding="utf-8")


def snapshot(root: Path) -> Dict[str, str]:
    """rel -> sha256 of every file under root, the journal folder aside."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and not rel.startswith(".engramory/"):
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out
