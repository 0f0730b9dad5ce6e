"""Differential check on the real Gemini CLI: for every generated write_file and replace, the
bytes Gemini wrote equal the bytes engramory predicted, or the prediction was a stated upper
bound (a possible fuzzy match) that the written bytes do not exceed, or both refuse.

All cases run in ONE Gemini session: each case has its own folder and MEMORY.md (so the
installed guard treats it as an index), the scripted model asks for every call in a single
turn, and the guard runs with ENGRAMORY_TRACE_FILE set, so each prediction it made is on
record. The next request, sent after every tool and hook finished, carries Gemini's answer
per call (success or error); the files on disk carry what it wrote.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional

import common
import pytest
from driver import Call, Text, Turn, run_gemini
from test_gemini_real import install

from engramory.size import count_lines

pytestmark = pytest.mark.e2e

BOM = b"\xef\xbb\xbf"
LQ, RQ, LS, RS = "\u201c", "\u201d", "\u2018", "\u2019"
EM, EN = "\u2014", "\u2013"


@dataclass
class Case:
    id: str
    before: Optional[bytes]
    tool: str
    args: Dict[str, Any]


def _lines(rng: random.Random, n: int, flavour: str) -> List[str]:
    out = []
    for i in range(n):
        word = rng.choice(["alpha", "beta", "gamma", "delta", "kappa", "omega"])
        if flavour == "curly":
            text = "- [%s %d](n%d.md) it%ss %shot%s %s cold" % (word, i, i, RS, LQ, RQ, EM)
        elif flavour == "indent":
            text = rng.choice(["", "  ", "    ", "\t"]) + "- %s %d: value = f(%d)" % (word, i, i)
        elif flavour == "trailing":
            text = "- %s %d%s" % (word, i, rng.choice(["", " ", "  ", "\t"]))
        elif flavour == "dup":
            text = "- %s" % rng.choice(["same", "same", "other"])
        else:
            text = "- [%s %d](%s-%d.md) one fact %s" % (word, i, word, i, rng.choice(["", "ok", EN + " dash"]))
        out.append(text)
    return out


def _join(lines: List[str], eol: str, final: bool, bom: bool) -> bytes:
    text = eol.join(lines) + (eol if final else "")
    return (BOM if bom else b"") + text.encode("utf-8")


def _mixed(lines: List[str], final: bool) -> bytes:
    return "".join(line + ("\r\n" if i % 3 == 0 else "\n") for i, line in enumerate(lines)).encode() if final else \
        ("\r\n".join(lines[:2]) + "\n" + "\n".join(lines[2:])).encode()


def _typo(text: str, rng: random.Random) -> str:
    i = rng.randrange(len(text))
    return text[:i] + ("x" if text[i] != "x" else "y") + text[i + 1 :]


def generate() -> List[Case]:
    rng = random.Random(14)
    cases: List[Case] = []

    def add(cid: str, before: Optional[bytes], tool: str, **args: Any) -> None:
        cases.append(Case("%03d-%s" % (len(cases), cid), before, tool, args))

    for k in range(30):  # write_file over every kind of old file
        flavour = rng.choice(["plain", "curly", "indent"])
        old = _lines(rng, rng.randint(1, 6), flavour)
        kind = k % 6
        before = [None, _join(old, "\n", True, False), _join(old, "\r\n", True, False), _mixed(old, True),
                  _join(old, "\n", True, True), _join(old, "\r\n", False, True)][kind]
        new = _lines(rng, rng.randint(0, 5), flavour)
        eol = rng.choice(["\n", "\r\n", "\n"])
        content = eol.join(new) + rng.choice([eol, ""])
        if k % 7 == 3:
            content = "\ufeff" + content
        add("write-%d" % kind, before, "write_file", content=content)

    for k in range(90):  # replace
        flavour = ["plain", "curly", "indent", "trailing", "dup"][k % 5]
        lines = _lines(rng, rng.randint(3, 8), flavour)
        eol = "\r\n" if k % 4 == 1 else "\n"
        final = k % 6 != 2
        bom = k % 11 == 5
        before = _mixed(lines, final) if k % 13 == 7 else _join(lines, eol, final, bom)
        i = rng.randrange(len(lines))
        target = lines[i]
        strategy = k % 9
        new = rng.choice(["- replaced", "- replaced\n- and one more", "", "  - indented new\n  - two", "- r\r\n- s"])
        extra: Dict[str, Any] = {}
        if strategy == 0:  # exact, one line
            old = target
        elif strategy == 1:  # exact, two lines, with the line break
            j = min(i + 1, len(lines) - 1)
            old = "\n".join(lines[i : j + 1]) + ("\n" if j < len(lines) - 1 or final else "")
        elif strategy == 2:  # whitespace differs: flexible
            old = "   " + target.strip() + "  "
        elif strategy == 3:  # a block, re-indented: flexible
            j = min(i + 1, len(lines) - 1)
            old = "\n".join("  " + line.strip() for line in lines[i : j + 1])
        elif strategy == 4:  # tokens spaced differently: regex
            old = target.replace("(", " ( ").replace(")", " ) ").replace(":", " : ").replace("[", "[ ").strip()
            if old == target:
                old = target.replace(" ", "  ", 1)
        elif strategy == 5:  # straight quotes and hyphens for curly ones and dashes
            old = target.replace(RS, "'").replace(LQ, '"').replace(RQ, '"').replace(EM, "-").replace(EN, "-")
        elif strategy == 6:  # one typo in a long old_string: fuzzy
            old = _typo(target, rng) if len(target) >= 12 else target + " x"
        elif strategy == 7:  # non-unique, with or without allow_multiple
            old = "- " if flavour != "indent" else "value"
            extra["allow_multiple"] = bool(k % 2)
        else:  # CRLF spelled in old_string / new_string
            j = min(i + 1, len(lines) - 1)
            old = "\r\n".join(lines[i : j + 1])
            new = new.replace("\n", "\r\n")
        if flavour == "dup" and strategy in (0, 7):
            extra["allow_multiple"] = bool(k % 2)
        add("replace-%d-%s" % (strategy, flavour), before, "replace", old_string=old, new_string=new,
            instruction="edit", **extra)

    # The edges of replace
    base = _join(["- a", "- b"], "\n", True, False)
    add("same-old-new", base, "replace", old_string="- a", new_string="- a", instruction="edit")
    add("empty-old-existing", base, "replace", old_string="", new_string="- c", instruction="edit")
    add("empty-old-missing", None, "replace", old_string="", new_string="- new\r\n- file", instruction="edit")
    add("missing-file", None, "replace", old_string="- a", new_string="- b", instruction="edit")
    add("not-found", base, "replace", old_string="- zz", new_string="- y", instruction="edit")
    add("drop-final-newline", base, "replace", old_string="- b\n", new_string="- B", instruction="edit")
    add("add-final-newline", b"- a\n- b", "replace", old_string="- b", new_string="- b\n- c\n", instruction="edit")
    add("bom-first-line", BOM + base, "replace", old_string="- a", new_string="- A", instruction="edit")
    add("lone-cr", b"- a\r- b\n- c\n", "replace", old_string="  - c", new_string="- C", instruction="edit")
    add("dollar", base, "replace", old_string="- a", new_string="- $& $1 $$", instruction="edit")
    # Loose matches that hit many lines at once
    similar = "".join("- [note %d](note-%d.md) one fact, kept short\n" % (i, i) for i in range(12)).encode()
    add("fuzzy-many", similar, "replace", old_string="- [note 5](note-5.md) one fact, kept shrt",
        new_string="- merged\n- two", instruction="edit", allow_multiple=True)
    add("fuzzy-many-refused", similar, "replace", old_string="- [note 5](note-5.md) one fact, kept shrt",
        new_string="- merged", instruction="edit")
    add("flexible-many", b"  - x\n- y\n    - x\n", "replace", old_string="- x\t", new_string="- x\n- x2",
        instruction="edit", allow_multiple=True)
    add("flexible-many-refused", b"  - x\n- y\n    - x  \n", "replace", old_string="- x\t", new_string="- z",
        instruction="edit")
    add("regex-many", b"f(a)=1\nf(a) = 2\n", "replace", old_string="f ( a )=", new_string="g =", instruction="edit",
        allow_multiple=True)
    add("write-backslashes", base, "write_file", content="- a\\n- b\\t\\\"q\\\"\n")
    return cases


def test_gemini_writes_what_engramory_predicted(gemini_cli: Path, home: Path, work: Path) -> None:
    cases = generate()
    assert len(cases) >= 100
    install(home, work)
    paths: Dict[str, Path] = {}
    for case in cases:
        folder = work / "cases" / case.id
        folder.mkdir(parents=True)
        path = folder / "MEMORY.md"
        if case.before is not None:
            path.write_bytes(case.before)
        paths[case.id] = path
    calls = [Call(c.tool, dict({"file_path": str(paths[c.id])}, **c.args)) for c in cases]
    trace = work.parent / "trace.jsonl"
    r = run_gemini([Turn(calls), Turn([Text("done")])], home, work, extra_env={"ENGRAMORY_TRACE_FILE": str(trace)},
                   timeout=600)
    answers = r.responses_after(0)
    assert len(answers) == len(cases), r.stderr[-2000:]
    records: Dict[str, List[Dict[str, Any]]] = {}
    for rec in common.read_trace(trace):
        records.setdefault(str(rec["path"]), []).append(rec)

    seen: Dict[str, int] = {}
    failures: List[str] = []
    for case, answer in zip(cases, answers):
        path = paths[case.id]
        recs = records.get(str(path.resolve()), [])
        if len(recs) != 1:
            failures.append("%s: %d predictions on record" % (case.id, len(recs)))
            continue
        rec = recs[0]
        written = path.read_bytes() if path.exists() else None
        ok = "error" not in answer["response"]
        strategy = rec["strategy"]
        seen[strategy] = seen.get(strategy, 0) + 1
        if rec["refused"]:
            if ok or written != case.before:
                failures.append("%s: predicted a refusal; Gemini %s and left %r" % (
                    case.id, "succeeded" if ok else "refused", written))
        elif rec.get("bound"):
            bound = rec["bound"]
            got = written or b""
            if count_lines(got) > bound["lines"] or len(got) > bound["bytes"]:
                failures.append("%s: wrote %d lines / %d bytes, past the bound %r" % (
                    case.id, count_lines(got), len(got), bound))
            if ok and written != case.before:
                seen["bound-applied"] = seen.get("bound-applied", 0) + 1
        else:
            want = bytes.fromhex(rec["after"])
            if not ok or written != want:
                failures.append("%s (%s): predicted %r, Gemini %s and wrote %r (answer %r)" % (
                    case.id, strategy, want, "succeeded" if ok else "refused", written,
                    str(answer["response"])[:200]))
    assert not failures, "\n".join(failures)
    # The table must exercise what it claims, not agree on refusals alone.
    assert seen.get("write", 0) >= 25 and seen.get("exact", 0) >= 25, seen
    assert seen.get("flexible", 0) >= 8 and seen.get("regex", 0) >= 2, seen
    assert seen.get("bound", 0) >= 8 and seen.get("bound-applied", 0) >= 3, seen
