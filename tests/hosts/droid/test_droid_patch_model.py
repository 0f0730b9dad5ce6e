"""Differential check of engramory's port of Factory droid's ApplyPatch (engramory.hosts.
droid_patch: droid 0.225.2's splitter, its section parser with five context matchers, its
applier that deletes and inserts by position, and its file codec) against the real droid with
the guard installed: for every patch the guard's recorded prediction, and the port called
directly, equal the bytes droid leaves, and a predicted refusal leaves the file as it was.

The hand-picked patches cover what droid does its own way: context matched after NFC with
dashes, quotes and two spaces made plain, then without trailing or surrounding whitespace, then
as an ordered subsequence of 75 % of its lines (so a context with a line missing or one extra
still applies, and deletes by position), the first of several matches taken (no ambiguity
refusal), `@@ line` that moves the search only forward, insertions at the top of the file when
nothing places them, End of File, CRLF, lone CR and mixed endings written back as the majority,
BOM, no final newline; and patches of several operations applied one by one (Add over an
existing file, Delete then Add, two Updates, a failed operation beside one that lands, a move).
Generated ones mix them."""

from __future__ import annotations

import random
from pathlib import Path
from typing import List, Optional, Tuple

import common
import differential
from test_droid_stale import PatchDroid

from engramory.hosts.droid import model as droid_patch

IDX = "".join("- [note %d](note-%d.md) - hook %d\n" % (i, i, i) for i in range(6))
N2 = "- [note 2](note-2.md) - hook 2"
U = "*** Update File: {p}\n"

# (name, the file before or None, the patch between Begin and End, {p} for the file's path)
FIXED: List[Tuple[str, Optional[bytes], str]] = [
    ("exact", IDX.encode(), U + "@@\n-%s\n+- [two](two.md) - new\n" % N2),
    ("no-marker-first", IDX.encode(), U + "-%s\n+- [two](two.md)\n" % N2),
    ("trim-end", IDX.replace("hook 2\n", "hook 2   \n").encode(), U + "@@\n-%s\n+- [two](two.md)\n" % N2),
    ("leading", IDX.replace("- [note 2]", "   - [note 2]").encode(), U + "@@\n-%s\n+- [two](two.md)\n" % N2),
    ("typography-file", "- it\u2019s \u201cq\u201d \u2014 x\n- b\n".encode(), U + "@@\n-- it's \"q\" - x\n+- c\n"),
    ("typography-patch", b"- it's \"q\" - x\n- b\n", U + "@@\n-- it\u2019s \u201cq\u201d \u2013 x\n+- c\n"),
    ("nbsp", "- a\u00a0b\n- c\n".encode(), U + "@@\n-- a b\n+- d\n"),
    ("dash-not-folded", "- a \u2015 b\n- c\n".encode(), U + "@@\n-- a - b\n+- d\n"),
    ("first-of-two", b"x\ny\nx\n", U + "@@\n-x\n+z\n"),
    ("anchor", b"h\na\nk\na\n", U + "@@ k\n-a\n+A\n"),
    ("anchor-behind", b"a\nk\nb\nk\nc\n", U + "@@ k\n-b\n+B\n@@ k\n-c\n+C\n"),
    ("anchor-missing", IDX.encode(), U + "@@ no such line\n+- [x](x.md)\n"),
    ("insert-no-context", IDX.encode(), U + "@@\n+- [top](top.md)\n"),
    ("insert-bare", IDX.encode(), U + "+- [bare](bare.md)\n"),
    ("insert-after-anchor", IDX.encode(), U + "@@ - [note 3](note-3.md) - hook 3\n+- [after3](a3.md)\n"),
    ("insert-eof", IDX.encode(), U + "@@\n+- [z](z.md)\n*** End of File\n"),
    ("end-of-file", b"x\ny\nx\n", U + "@@\n-x\n+z\n*** End of File\n"),
    ("end-of-file-no-newline", b"x\ny\nx", U + "@@\n-x\n+z\n*** End of File\n"),
    ("subsequence-wrong-line", b"a\nb\nc\nd\ne\nf\n", U + "@@\n a\n b\n WRONG\n d\n-e\n+E\n"),
    ("subsequence-extra-line", b"a\nb\nX\nc\nd\ne\n", U + "@@\n a\n b\n c\n d\n-e\n+E\n"),
    ("subsequence-trimmed", b"a\n  b\nc \nd\ne\n", U + "@@\n a\n b\n c\n-d\n+D\n"),
    ("subsequence-too-few", b"a\nb\nc\nd\n", U + "@@\n a\n W1\n W2\n-d\n+D\n"),
    ("context-missing", IDX.encode(), U + "@@\n no such line\n+- [x](x.md)\n"),
    ("crlf", IDX.replace("\n", "\r\n").encode(), U + "@@\n %s\n+- [n](n.md)\n" % N2),
    ("crlf-grow", IDX.replace("\n", "\r\n").encode(), U + "@@\n-%s\n+a\n+b\n+c\n" % N2),
    ("mixed-majority-crlf", b"a\r\nb\nc\r\nd\r\n", U + "@@\n-b\n+B1\n+B2\n"),
    ("mixed-majority-lf", b"a\r\nb\nc\nd\n", U + "@@\n-a\n+A\n"),
    ("mixed-tie", b"a\r\nb\nc\r\nd\n", U + "@@\n-a\n+A\n"),
    ("lone-cr", b"a\rb\rc\r", U + "@@\n b\n+x\n"),
    ("bom", b"\xef\xbb\xbfa\nb\n", U + "@@\n-a\n+A\n"),
    ("no-final-newline", b"a\nb", U + "@@\n-b\n+B\n+C\n"),
    ("crlf-no-final-newline", b"a\r\nb", U + "@@\n-a\n+A\n+AA\n"),
    ("two-sections", IDX.encode(), U + "@@\n-- [note 0](note-0.md) - hook 0\n+zero\n@@\n-- [note 5](note-5.md) - hook 5\n+five\n"),
    ("sections-out-of-order", IDX.encode(), U + "@@\n-- [note 4](note-4.md) - hook 4\n+four\n@@\n-- [note 1](note-1.md) - hook 1\n+one\n"),
    ("unprefixed-context", b"a\nb\nc\n", U + "@@\na\n-b\n+B\n"),
    ("delete-only", IDX.encode(), U + "@@\n-%s\n" % N2),
    ("no-op-mixed", b"a\r\nb\nc\r\n", U + "@@\n-b\n+b\n"),
    ("header-only-mixed", b"a\r\nb\nc\r\n", U),
    ("longer-than-file", b"alpha\nbeta\n", U + "@@\n-beta\n-gamma\n-delta\n+x\n"),
    ("missing-file", None, U + "@@\n+x\n"),
    # several operations, applied one by one
    ("add-new", None, "*** Add File: {p}\n+- [a](a.md)\n+- [b](b.md)\n"),
    ("add-empty", None, "*** Add File: {p}\n"),
    ("add-over-lf", IDX.encode(), "*** Add File: {p}\n+- [a](a.md)\n+- [b](b.md)\n"),
    ("add-over-crlf-bom", b"\xef\xbb\xbfa\r\nb\r\n", "*** Add File: {p}\n+- [a](a.md)\n+- [b](b.md)\n"),
    ("delete-then-add", IDX.encode(), "*** Delete File: {p}\n*** Add File: {p}\n+- [a](a.md)\n+- [b](b.md)\n"),
    ("delete-then-add-crlf", b"a\r\nb\r\n", "*** Delete File: {p}\n*** Add File: {p}\n+- [a](a.md)\n"),
    ("update-twice", IDX.encode(), U + "@@\n %s\n+- [a](a.md)\n" % N2 + U + "@@\n %s\n+- [b](b.md)\n" % N2),
    ("failed-then-landed", IDX.encode(), U + "@@\n-no such line\n+x\n" + U + "@@\n-%s\n+- [two](two.md)\n" % N2),
    ("add-bad-line", None, "*** Add File: {p}\n+a\nb\n"),
]


def _generated(n: int, seed: int) -> List[Tuple[str, Optional[bytes], str]]:
    rng = random.Random(seed)
    pool = ["- [n%d](n%d.md) - %s" % (i, i, w) for i, w in enumerate(
        ["build steps", "style \u2014 tabs", "it\u2019s \u201cquoted\u201d", "pages 1\u201310", "na\u00efve caf\u00e9",
         "\U0001f680 launch", "tests  ", "  nested", "a\u00a0b", "plain one", "plain two"])]
    out: List[Tuple[str, Optional[bytes], str]] = []
    for i in range(n):
        lines = rng.sample(pool, rng.randrange(3, 8))
        eol = rng.choice(["\n", "\r\n", "mixed"])
        text = "".join(line + (rng.choice(["\n", "\r\n"]) if eol == "mixed" else eol) for line in lines)
        if rng.random() < 0.3:
            text = text.rstrip("\r\n")
        before = (("\ufeff" if rng.random() < 0.2 else "") + text).encode()
        j = rng.randrange(len(lines))
        spelled = rng.choice([lines[j], lines[j].strip(), lines[j].replace("\u2014", "-").replace("\u2019", "'"),
                              "  " + lines[j] + " ", lines[j].rstrip()])
        ctx = [" " + x for x in lines[max(0, j - 3): j]]
        if ctx and rng.random() < 0.5:  # one context line spelled wrong: the subsequence match
            ctx[rng.randrange(len(ctx))] = " wrong line %d" % i
        kind = i % 6
        if kind == 0:
            body = "@@\n-%s\n+- [new%d](new.md)\n" % (spelled, i)
        elif kind == 1:
            body = "@@\n%s\n-%s\n+- [new%d](new.md)\n+- [more](m.md)\n" % ("\n".join(ctx), spelled, i) if ctx else \
                "@@\n %s\n+- [new%d](new.md)\n" % (spelled, i)
        elif kind == 2:
            body = "@@ %s\n+- [new%d](new.md)\n" % (spelled, i)
        elif kind == 3:
            body = "@@\n %s\n+- [new%d](new.md)\n*** End of File\n" % (spelled, i)
        elif kind == 4:
            body = "@@\n-%s\n" % spelled
        else:
            body = "@@\n-%s\n+a\n+b\n@@\n+- [tail%d](t.md)\n" % (spelled, i)
        out.append(("g%02d" % i, before, U + body))
    return out


def _text(path: Path, body: str) -> str:
    return "*** Begin Patch\n%s*** End Patch" % body.format(p=path)


def _predict(path: Path, before: Optional[bytes], text: str) -> Optional[bytes]:
    """What the port says droid leaves at `path` (the file as it was when it writes nothing)."""
    after, why = droid_patch.predict(droid_patch.split(text), str, str(path), before, lambda p: None)
    assert not why, why
    return before if after is None else after


def test_apply_patch_bytes_match_the_port(tmp_path: Path, droid_cli: Path) -> None:
    droid = PatchDroid(tmp_path)
    droid.install()
    root = droid.project / "p"
    edits, direct = [], []
    for name, before, body in FIXED + _generated(36, seed=2026):
        path = root / name / "MEMORY.md"
        text = _text(path, body)
        edits.append(differential.Edit(path, before, droid.patch_call(text)))
        direct.append((name, path, _predict(path, before, text)))
    outcome = differential.run(droid, edits, timeout=400)
    problems = ["%s: the port predicts %r, droid left %r" % (name, want, path.read_bytes() if path.exists() else None)
                for name, path, want in direct if (path.read_bytes() if path.exists() else None) != want]
    assert not problems, "\n".join(problems)
    assert outcome.exact >= 60 and outcome.changed >= 55, outcome


def test_a_move_onto_an_index_is_judged_on_the_moved_bytes(tmp_path: Path, droid_cli: Path) -> None:
    """An Update with `*** Move to:` writes its result to the new path (the source is gone)."""
    droid = PatchDroid(tmp_path)
    droid.install()
    source = droid.project / "notes.txt"
    source.write_bytes(b"a\r\nb\r\n")
    index = droid.project / "memory" / "MEMORY.md"
    index.parent.mkdir()
    text = "*** Begin Patch\n*** Update File: %s\n*** Move to: %s\n@@\n-a\n+A\n*** End Patch" % (source, index)
    trace = droid.trace_file()
    result, _ = droid.run([[droid.patch_call(text)], "done"], ENGRAMORY_TRACE_FILE=str(trace))
    droid.assert_completed(result)
    assert not source.exists()
    assert index.read_bytes() == b"A\r\nb\r\n"
    (record,) = [r for r in common.read_trace(trace) if r["path"] == str(index)]
    assert bytes.fromhex(str(record["after"])) == index.read_bytes()
