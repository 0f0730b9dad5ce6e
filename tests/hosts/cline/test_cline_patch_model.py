"""Differential check of engramory's port of Cline's apply_patch (engramory.hosts.cline.model:
@cline/core's parser and its fuzzy find_context, in the one V4A model of engramory.patches)
against the real Cline CLI: for every patch, the bytes Cline writes equal the prediction, and a
patch predicted to be refused leaves its file as it was. The hand-picked patches cover what
the matcher does specially (trailing and surrounding whitespace, typography, a Levenshtein
match of a line that is not there, anchors found or not, insertions where the search stands,
End of File, CRLF, mixed endings, BOM, no final newline, lines without a prefix, blank lines
that refuse the patch); the generated ones mix them. Then the guard: a patch that Cline applies
to the wrong line by similarity is judged, and denied over the cap."""

from __future__ import annotations

import random
from pathlib import Path

from cline_driver import Cline

from engramory.hosts.cline import model as host

IDX = "".join("- [note %d](note-%d.md) - hook %d\n" % (i, i, i) for i in range(6))

FIXED = [
    ("exact", IDX.encode(), "@@\n-- [note 2](note-2.md) - hook 2\n+- [two](two.md) - new\n"),
    ("trim-end", IDX.replace("hook 2\n", "hook 2   \n").encode(), "@@\n-- [note 2](note-2.md) - hook 2\n+- [two](two.md)\n"),
    ("trim", IDX.replace("- [note 2]", "   - [note 2]").encode(), "@@\n-- [note 2](note-2.md) - hook 2\n+- [two](two.md)\n"),
    ("typography", "- it\u2019s \u201cq\u201d \u2014 x\n- b\n".encode(), "@@\n-- it's \"q\" - x\n+- c\n"),
    ("similar-other-line", IDX.encode(), "@@\n-- [note 9](note-9.md) - hook 9\n+- [nine](nine.md)\n"),
    ("nothing-similar", IDX.encode(), "@@\n-completely different text that matches nothing here\n+x\n"),
    ("insert-top", IDX.encode(), "@@\n+- [top](top.md) first\n"),
    ("insert-bare", IDX.encode(), "+- [bare](bare.md) bare\n"),
    ("anchor", IDX.encode(), "@@ - [note 3](note-3.md) - hook 3\n+- [after3](a3.md)\n"),
    ("anchor-missing", IDX.encode(), "@@ no such anchor\n+- [x](x.md)\n"),
    ("anchor-then-delete", IDX.encode(), "@@ - [note 1](note-1.md) - hook 1\n-- [note 4](note-4.md) - hook 4\n"),
    ("end-of-file", b"x\ny\nx\n", "@@\n-x\n+z\n*** End of File\n"),
    ("crlf", IDX.replace("\n", "\r\n").encode(), "@@\n - [note 1](note-1.md) - hook 1\n+- [n](n.md)\n"),
    ("mixed", b"a\r\nb\nc\n", "@@\n-b\n+B\n"),
    ("bom", b"\xef\xbb\xbfa\nb\n", "@@\n-a\n+A\n"),
    ("bom-context", b"\xef\xbb\xbfa\nb\n", "@@\n-\ufeffa\n+A\n"),
    ("no-final-newline", b"a\nb", "@@\n-b\n+B\n"),
    ("no-final-newline-append", b"a\nb", "@@\n b\n+c\n"),
    ("blank-line", IDX.encode(), "@@\n - [note 1](note-1.md) - hook 1\n\n+x\n"),
    ("no-prefix", IDX.encode(), "@@\n[note 1](note-1.md) - hook 1\n+x\n"),
    ("two-sections", IDX.encode(), "@@\n-- [note 0](note-0.md) - hook 0\n+zero\n@@\n-- [note 5](note-5.md) - hook 5\n+five\n"),
    ("empty-last-line", b"a\nb\n", "@@\n b\n \n+c\n"),
    ("lone-cr", b"a\rb\nc\n", "@@\n-c\n+C\n"),
    ("longer-than-the-rest", b"alpha\nbeta\n", "@@\n-beta\n-gamma\n-delta\n+x\n"),
    ("empty-file", b"", "@@\n+x\n"),
    ("escaped-quotes", b"say \"hi\"\n", "@@\n-say \\\"hi\\\"\n+bye\n"),
    ("section-then-bare", IDX.encode(), "@@\n-- [note 0](note-0.md) - hook 0\n+zero\n***\n+x\n"),
    ("at-at-x", IDX.encode(), "@@\n-- [note 0](note-0.md) - hook 0\n@@x\n+x\n"),
]


def _generated(n: int, seed: int) -> list[tuple[str, bytes, str]]:
    rng = random.Random(seed)
    pool = ["- [n%d](n%d.md) - %s" % (i, i, w) for i, w in enumerate(
        ["build steps", "style — tabs", "it’s “quoted”", "pages 1–10", "naïve café", "🚀 launch", "tests  ", "  nested"])]
    out = []
    for i in range(n):
        lines = [rng.choice(pool) for _ in range(rng.randrange(2, 7))]
        eol = rng.choice(["\n", "\r\n"])
        text = eol.join(lines) + (eol if rng.random() < 0.7 else "")
        before = (("\ufeff" if rng.random() < 0.2 else "") + text).encode()
        j = rng.randrange(len(lines))
        spelled = rng.choice([lines[j], lines[j].strip(), lines[j].replace("—", "-").replace("’", "'"),
                              lines[j].replace("n", "m", 1), "  " + lines[j] + " "])
        kind = i % 6
        if kind == 0:
            body = "@@\n-%s\n+- [new%d](new.md)\n" % (spelled, i)
        elif kind == 1:
            body = "@@\n %s\n+- [new%d](new.md)\n" % (spelled, i)
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


def _read(path: Path) -> bytes | None:
    return path.read_bytes() if path.exists() else None


def test_apply_patch_bytes_match_the_port(cline: Cline) -> None:
    cases = FIXED + _generated(36, seed=65)
    calls, expected = [], []
    for name, before, body in cases:
        path = cline.project / "p" / name / "MEMORY.md"
        path.parent.mkdir(parents=True)
        path.write_bytes(before)
        text = "*** Begin Patch\n*** Update File: %s\n%s*** End Patch" % (path, body)
        calls.append(("apply_patch", {"input": text}))
        predicted = host.predict_patch(text, str(cline.project), lambda p: _read(Path(p)))
        expected.append((name, path, before, body, before if predicted is None else predicted[str(path)]))
    result, model = cline.run([calls, "done"], model="gpt-5-mock", timeout=300)
    assert cline.finish_reason(result) == "completed", result.stdout[-2000:]
    problems = ["%s: patch %r on %r: predicted %r, Cline wrote %r" % (name, body, before, want, _read(path))
                for name, path, before, body, want in expected if _read(path) != want]
    assert not problems, "\n".join(problems)
    refused = sum(1 for _, path, before, _, want in expected if want == before)
    failed = sum(1 for m in model.tool_messages() if "apply_patch failed" in str(m))
    assert failed == refused >= 5, (failed, refused)
    assert len(expected) - refused >= 40


def test_a_patch_cline_applies_to_a_similar_line_is_judged(cline: Cline) -> None:
    # "- [n1x](n1x.md)" is not in the index, but its first line is similar enough: Cline
    # replaces "- [n0](n0.md)" with three lines, 201 in all. The guard sees that and denies it
    # (the LF model it replaced predicted a refusal and let it through).
    cline.install()
    index = cline.project / "memory" / "MEMORY.md"
    index.parent.mkdir(parents=True)
    index.write_text("".join("- [n%d](n%d.md)\n" % (i, i) for i in range(199)), encoding="utf-8")
    patch = "*** Begin Patch\n*** Update File: memory/MEMORY.md\n@@\n-- [n1x](n1x.md)\n+- a\n+- b\n+- c\n*** End Patch"
    predicted = host.predict_patch(patch, str(cline.project), lambda p: _read(Path(p)))
    assert predicted is not None and predicted[str(index)].count(b"\n") == 201
    before = index.read_bytes()
    result, model = cline.run([[("apply_patch", {"input": patch})], "done"], model="gpt-5-mock")
    assert cline.finish_reason(result) == "completed", result.stdout[-2000:]
    assert index.read_bytes() == before
    assert "engramory blocked this apply_patch" in str(model.tool_messages()[0])
