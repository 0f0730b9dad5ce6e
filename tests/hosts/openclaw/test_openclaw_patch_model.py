"""Differential check of engramory's port of OpenClaw's apply_patch (patchmodel.parse_openclaw,
patchmodel.openclaw_update: OpenClaw 2026.9.6's parser, its seekSequence with four normalisers and
an "ambiguous" refusal, and its applier that keeps every line's own ending) against the real
OpenClaw CLI with the guard installed: for every patch the guard's recorded prediction (and
the port called directly) equals the bytes OpenClaw writes, and a predicted refusal leaves the
file as it was. Hand-picked patches cover ambiguous old lines and context, typographic dashes,
quotes and spaces on either side, trailing and leading whitespace, CRLF, mixed endings, a
lone CR, BOM, no final newline, End of File, insertions with and without @@ context, several
hunks; generated ones mix them. Patches OpenClaw refuses to parse are run too (the guard has
nothing to record for them): their files stay as they were."""

from __future__ import annotations

import random
from pathlib import Path
from typing import List, Optional, Tuple

import differential
import pytest
import scenarios
from openclaw_driver import Openclaw

from engramory import patches
from engramory.hosts.openclaw import patchmodel

IDX = "".join("- [note %d](note-%d.md) - hook %d\n" % (i, i, i) for i in range(6))
N2 = "- [note 2](note-2.md) - hook 2"

FIXED: List[Tuple[str, bytes, str]] = [
    ("exact", IDX.encode(), "@@\n-%s\n+- [two](two.md) - new\n" % N2),
    ("trim-end", IDX.replace("hook 2\n", "hook 2   \n").encode(), "@@\n-%s\n+- [two](two.md)\n" % N2),
    ("trim-end-context", IDX.replace("hook 2\n", "hook 2 \t\n").encode(), "@@\n %s\n+- [after2](a.md)\n" % N2),
    ("leading", IDX.replace("- [note 2]", "   - [note 2]").encode(), "@@\n-%s\n+- [two](two.md)\n" % N2),
    ("leading-context", IDX.replace("- [note 2]", "\t- [note 2]").encode(), "@@\n %s\n+x\n" % N2),
    ("typography-file", "- it\u2019s \u201cq\u201d \u2014 x\n- b\n".encode(), "@@\n-- it's \"q\" - x\n+- c\n"),
    ("typography-patch", b"- it's \"q\" - x\n- b\n", "@@\n-- it\u2019s \u201cq\u201d \u2013 x\n+- c\n"),
    ("nbsp", "- a\u00a0b\n- c\n".encode(), "@@\n-- a b\n+- d\n"),
    ("typography-context", "- x \u2014 y\n- z\n".encode(), "@@\n - x - y\n+- w\n"),
    ("ambiguous", b"x\ny\nx\n", "@@\n-x\n+z\n"),
    ("ambiguous-trimmed", b"x \ny\nx\t\n", "@@\n-x\n+z\n"),
    ("exact-beats-loose", b"x \ny\nx\n", "@@\n-x\n+z\n"),
    ("ambiguous-context", b"h\na\nh\nb\n", "@@ h\n-b\n+B\n"),
    ("context-then-unique", b"h\na\nk\na\n", "@@ k\n-a\n+A\n"),
    ("context-missing", IDX.encode(), "@@ no such line\n+x\n"),
    ("empty-context", b"a\nb\n", "@@ \n-b\n+B\n"),
    ("insert-with-context", IDX.encode(), "@@ - [note 3](note-3.md) - hook 3\n+- [after3](a3.md)\n"),
    ("insert-no-context", IDX.encode(), "@@\n+- [end](end.md)\n"),
    ("insert-bare", IDX.encode(), "+- [bare](bare.md)\n"),
    ("insert-context-eof", IDX.encode(), "@@ - [note 1](note-1.md) - hook 1\n+- [z](z.md)\n*** End of File\n"),
    ("insert-no-final-newline", b"a\nb", "@@\n+c\n"),
    ("insert-context-no-final-newline", b"a\nb", "@@ a\n+c\n"),
    ("insert-empty-file", b"", "@@\n+x\n"),
    ("end-of-file", b"x\ny\nx\n", "@@\n-x\n+z\n*** End of File\n"),
    ("end-of-file-not-at-end", b"x\ny\nz\n", "@@\n-x\n+w\n*** End of File\n"),
    ("crlf", IDX.replace("\n", "\r\n").encode(), "@@\n %s\n+- [n](n.md)\n" % N2),
    ("crlf-grow", IDX.replace("\n", "\r\n").encode(), "@@\n-%s\n+a\n+b\n+c\n" % N2),
    ("mixed", b"a\r\nb\nc\r\nd\n", "@@\n-b\n+B1\n+B2\n c\n+C\n"),
    ("mixed-shrink", b"a\r\nb\nc\r\nd\n", "@@\n-a\n-b\n-c\n+x\n"),
    ("lone-cr", b"a\rb\nc\n", "@@\n-c\n+C\n"),
    ("lone-cr-context", b"a\rb\rc\r", "@@\n b\n+x\n"),
    ("bom", b"\xef\xbb\xbfa\nb\n", "@@\n-a\n+A\n"),
    ("bom-context", b"\xef\xbb\xbfa\nb\n", "@@ \ufeffa\n+x\n"),
    ("no-final-newline", b"a\nb", "@@\n-b\n+B\n"),
    ("no-final-newline-grow", b"a\nb", "@@\n-b\n+B\n+C\n"),
    ("no-final-newline-context", b"a\nb", "@@\n b\n+c\n"),
    ("crlf-no-final-newline", b"a\r\nb", "@@\n-a\n+A\n+AA\n"),
    ("two-hunks", IDX.encode(), "@@\n-- [note 0](note-0.md) - hook 0\n+zero\n@@\n-- [note 5](note-5.md) - hook 5\n+five\n"),
    ("hunks-out-of-order", IDX.encode(), "@@\n-- [note 4](note-4.md) - hook 4\n+four\n@@\n-- [note 1](note-1.md) - hook 1\n+one\n"),
    ("insert-then-change", IDX.encode(), "@@ - [note 0](note-0.md) - hook 0\n+first\n@@\n-- [note 1](note-1.md) - hook 1\n+one\n"),
    ("retry-blank", b"a\nb\n", "@@\n b\n \n+c\n"),
    ("blank-line-in-hunk", b"a\n\nb\n", "@@\n a\n\n-b\n+B\n"),
    ("space-only-line", b"a\n \nb\n", "@@\n a\n  \n-b\n+B\n"),
    ("tab-line-ends-chunk", b"a\nb\n", "@@\n-a\n+A\n\t\n@@\n-b\n+B\n"),
    ("delete-only", IDX.encode(), "@@\n-%s\n" % N2),
    ("no-op", b"a\nb\n", "@@\n-a\n+a\n"),
    ("no-op-crlf", b"a\r\nb", "@@\n-b\n+b\n"),
    ("longer-than-file", b"alpha\nbeta\n", "@@\n-beta\n-gamma\n-delta\n+x\n"),
    ("not-utf8", b"a\xff\nb\n", "@@\n-b\n+B\n"),
]

# Patches OpenClaw refuses to parse: no operation reaches the guard, and the file stays.
UNPARSED: List[Tuple[str, bytes, str]] = [
    ("second-chunk-no-marker", b"a\nb\n", "@@\n-a\n+A\n@@x\n-b\n+B\n"),
    ("unexpected-first-line", b"a\nb\n", "@@\n?a\n"),
    ("eof-only", b"a\nb\n", "@@\n*** End of File\n"),
]


def _generated(n: int, seed: int) -> List[Tuple[str, bytes, str]]:
    rng = random.Random(seed)
    pool = ["- [n%d](n%d.md) - %s" % (i, i, w) for i, w in enumerate(
        ["build steps", "style \u2014 tabs", "it\u2019s \u201cquoted\u201d", "pages 1\u201310", "na\u00efve caf\u00e9",
         "\U0001f680 launch", "tests  ", "  nested", "a\u00a0b"])]
    out = []
    for i in range(n):
        lines = [rng.choice(pool) for _ in range(rng.randrange(2, 7))]
        eol = rng.choice(["\n", "\r\n", "mixed"])
        if eol == "mixed":
            text = "".join(line + rng.choice(["\n", "\r\n"]) for line in lines)
        else:
            text = "".join(line + eol for line in lines)
        if rng.random() < 0.3:
            text = text.rstrip("\r\n")
        before = (("\ufeff" if rng.random() < 0.2 else "") + text).encode()
        j = rng.randrange(len(lines))
        spelled = rng.choice([lines[j], lines[j].strip(), lines[j].replace("\u2014", "-").replace("\u2019", "'"),
                              "  " + lines[j] + " ", lines[j].rstrip()])
        kind = i % 6
        if kind == 0:
            body = "@@\n-%s\n+- [new%d](new.md)\n" % (spelled, i)
        elif kind == 1:
            body = "@@\n %s\n+- [new%d](new.md)\n+- [more](m.md)\n" % (spelled, i)
        elif kind == 2:
            body = "@@ %s\n+- [new%d](new.md)\n" % (spelled, i)
        elif kind == 3:
            body = "@@\n %s\n+- [new%d](new.md)\n*** End of File\n" % (spelled, i)
        elif kind == 4:
            body = "@@\n-%s\n" % spelled
        else:
            body = "@@\n-%s\n+a\n+b\n@@\n+- [tail%d](t.md)\n" % (spelled, i)
        out.append(("g%02d" % i, before, body))
    return out


def _text(path: Path, body: str) -> str:
    return "*** Begin Patch\n*** Update File: %s\n%s*** End Patch" % (path, body)


def _predict(before: bytes, text: str) -> Optional[bytes]:
    try:
        (op,) = patchmodel.parse_openclaw(text)
        return patchmodel.openclaw_update(before, op.hunks)
    except patches.PatchError:
        return None


def test_apply_patch_bytes_match_the_port(openclaw: Openclaw) -> None:
    openclaw.install()
    root = openclaw.workspace / "p"
    edits, direct = [], []
    for name, before, body in FIXED + _generated(36, seed=2026):
        path = root / name / "MEMORY.md"
        text = _text(path, body)
        edits.append(differential.Edit(path, before, openclaw.patch_call(text)))
        direct.append((name, path, before, _predict(before, text)))
    unparsed = []
    for name, before, body in UNPARSED:
        path = root / name / "MEMORY.md"
        path.parent.mkdir(parents=True)
        path.write_bytes(before)
        with pytest.raises(patches.PatchError):
            patchmodel.parse_openclaw(_text(path, body))
        unparsed.append((name, path, before, openclaw.patch_call(_text(path, body))))
    outcome = differential.run(openclaw, edits, before=[[c for _, _, _, c in unparsed]], timeout=400)
    problems = ["%s: the port predicts %r, OpenClaw wrote %r" % (name, want if want is not None else before,
                                                                 path.read_bytes())
                for name, path, before, want in direct if path.read_bytes() != (before if want is None else want)]
    problems += ["%s: not a patch OpenClaw parses, yet it wrote %r" % (name, path.read_bytes())
                 for name, path, before, _ in unparsed if path.read_bytes() != before]
    assert not problems, "\n".join(problems)
    refused = {name for name, _, _, want in direct if want is None}
    assert {"ambiguous", "ambiguous-trimmed", "ambiguous-context", "context-missing", "end-of-file-not-at-end",
            "longer-than-file", "not-utf8"} <= refused, refused
    assert outcome.exact >= 60 and outcome.changed >= 55, outcome


def test_the_port_on_what_it_does_specially() -> None:
    # the facts the real-CLI run above checks, stated (no OpenClaw needed)
    def apply(before: bytes, body: str) -> Optional[bytes]:
        return _predict(before, "*** Begin Patch\n*** Update File: m\n%s*** End Patch" % body)

    assert apply(b"x\ny\nx\n", "@@\n-x\n+z\n") is None  # ambiguous: refused
    assert apply(b"x\ny\nx\n", "@@\n-x\n+z\n*** End of File\n") == b"x\ny\nz\n"
    assert apply(b"a\r\nb\nc\r\n", "@@\n-b\n+B1\n+B2\n") == b"a\r\nB1\nB2\nc\r\n"  # the replaced line's ending
    assert apply(b"a\nb", "@@\n+c\n") == b"a\nb\nc"  # still no final newline
    assert apply(b"\xef\xbb\xbfa\nb\n", "@@\n-a\n+A\n") == b"\xef\xbb\xbfA\nb\n"
    assert apply("- it\u2019s\n".encode(), "@@\n-- it's\n+x\n") == b"x\n"
    assert apply(b"a \nb\n", "@@\n a\n+c\n") == b"a \nc\nb\n"  # context keeps the file's bytes
    assert apply(b"a\xff\n", "@@\n-a\xff\n+b\n") is None
    assert apply(b"a\r\nb", "@@\n-b\n+b\n") == b"a\r\nb"  # no change but endings: nothing written


def test_two_operations_on_one_index_are_judged_together(openclaw: Openclaw) -> None:
    # OpenClaw applies the second Update to the first one's result (measured here on a file the
    # guard does not watch: 196 + 3 + 3 = 202 lines); each alone would leave 199, so the guard
    # judges them together by their worst case and denies the patch on the index.
    openclaw.install()
    hunk = "@@\n - [n1](n1.md)\n+- a\n+- b\n+- c\n"
    seed = "".join("- [n%d](n%d.md)\n" % (i, i) for i in range(196)).encode()
    twice = "*** Begin Patch\n*** Update File: {0}\n{1}*** Update File: {0}\n{1}*** End Patch"
    free = openclaw.workspace / "notes.txt"
    free.write_bytes(seed)
    index = openclaw.workspace / "memory" / "MEMORY.md"
    index.parent.mkdir()
    index.write_bytes(seed)
    messages = scenarios.refused(openclaw, index, [[openclaw.patch_call(twice.format(free, hunk)),
                                                     openclaw.patch_call(twice.format(index, hunk))]])
    assert free.read_bytes().count(b"\n") == 202, messages
    assert any("engramory blocked this apply_patch" in m and "same patch" in m for m in messages), messages
