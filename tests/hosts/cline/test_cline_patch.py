"""The port of Cline's apply_patch (engramory.hosts.cline.model) on its own: the similarity test
against a plain Levenshtein, the parser's refusals, paths, and the bound when a fuzzy match
would cost too much. tests/hosts/cline/test_cline_patch_model.py checks the bytes on the real CLI."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from engramory.hosts import cline
from engramory.hosts.cline import model as cline_model


def _levenshtein(a: str, b: str) -> int:
    x = list(a.encode("utf-16-le"))
    y = list(b.encode("utf-16-le"))
    x = [x[i] | x[i + 1] << 8 for i in range(0, len(x), 2)]
    y = [y[i] | y[i + 1] << 8 for i in range(0, len(y), 2)]
    prev = list(range(len(y) + 1))
    for i, c in enumerate(x, 1):
        cur = [i]
        for j, d in enumerate(y, 1):
            cur.append(min(prev[j - 1] + (c != d), prev[j] + 1, cur[j - 1] + 1))
        prev = cur
    return prev[-1]


def _reference(a: str, b: str) -> bool:
    size = max(len(a.encode("utf-16-le")), len(b.encode("utf-16-le"))) // 2
    return size == 0 or (size - _levenshtein(a, b)) / size >= cline_model.SIMILAR


def test_similarity_matches_a_plain_levenshtein() -> None:
    rng = random.Random(3)
    alphabet = "ab- [](n0.md)é🚀"
    for _ in range(3000):
        a = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 14)))
        b = list(a) if rng.random() < 0.7 else [rng.choice(alphabet) for _ in range(rng.randrange(0, 14))]
        for _ in range(rng.randrange(0, 6)):
            if b and rng.random() < 0.5:
                del b[rng.randrange(len(b))]
            else:
                b.insert(rng.randrange(len(b) + 1), rng.choice(alphabet))
        assert cline_model._similar(a, "".join(b), [10**9]) == _reference(a, "".join(b)), (a, "".join(b))


@pytest.mark.parametrize("body", [
    "@@\n a\n\n+x\n",  # a blank line: Cline reports an invalid line (or never stops)
    "@@\n-a\n+b\n***\n+x\n",  # `***` ends the section; what follows has no @@
    "@@\n-a\n@@x\n+x\n",
    "@@\n-a\n*** Frob\n",
    "\n@@\n+x\n",
])
def test_parser_refusals(body: str, tmp_path: Path) -> None:
    (tmp_path / "f.md").write_bytes(b"a\nb\n")
    text = "*** Begin Patch\n*** Update File: f.md\n%s*** End Patch" % body
    assert cline_model.predict_patch(text, str(tmp_path), lambda p: Path(p).read_bytes() if Path(p).exists() else None) is None


def test_whole_patch_refusals(tmp_path: Path) -> None:
    (tmp_path / "f.md").write_bytes(b"a\n")

    def predict(text: str) -> object:
        return cline_model.predict_patch(text, str(tmp_path), lambda p: Path(p).read_bytes() if Path(p).exists() else None)

    assert predict("*** Begin Patch\n*** Add File: f.md\n+x\n*** End Patch") is None  # exists
    assert predict("*** Begin Patch\n*** Update File: g.md\n@@\n+x\n*** End Patch") is None  # missing
    assert predict("*** Begin Patch\n*** Update File: ../f.md\n@@\n+x\n*** End Patch") is None  # outside
    assert predict("*** Begin Patch\n*** Update File: f.md\n@@\n+x\n*** Update File: f.md\n@@\n+y\n*** End Patch") is None
    assert predict("*** Begin Patch\n*** Add File: n.md\n+x\n+y\n") is None  # no end sentinel
    # no sentinels at all: the lines are the patch body, wrapper lines stripped
    assert predict("```\n*** Add File: n.md\n+x\n+y\n```") == {str(tmp_path / "n.md"): b"x\ny"}
    # one hunk that matches nothing fails the file that did match too
    both = "*** Begin Patch\n*** Add File: n.md\n+x\n*** Update File: f.md\n@@\n-zzzzzzzzzzzz\n+q\n*** End Patch"
    assert predict(both) is None


def test_a_move_onto_itself_removes_the_file(tmp_path: Path) -> None:
    (tmp_path / "f.md").write_bytes(b"a\n")
    text = "*** Begin Patch\n*** Update File: f.md\n*** Move to: f.md\n@@\n-a\n+b\n*** End Patch"
    assert cline_model.predict_patch(text, str(tmp_path), lambda p: Path(p).read_bytes()) == {str(tmp_path / "f.md"): None}


def test_a_costly_fuzzy_match_is_judged_by_its_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    index = tmp_path / "MEMORY.md"
    index.write_text("".join("- [n%d](n%d.md) %s\n" % (i, i, "x" * 40) for i in range(9)), encoding="utf-8")
    # the same characters as the index's lines, in another order: only the Levenshtein pass
    # can tell that nothing is similar enough
    patch = "*** Begin Patch\n*** Update File: MEMORY.md\n@@\n-%s (n1.md)[n1] -\n+- a\n+- b\n*** End Patch" % ("x" * 40)
    payload = {"event": "before", "tool": "apply_patch", "input": {"input": patch}, "cwd": str(tmp_path)}
    env = {"ENGRAMORY_HARD": "10", "ENGRAMORY_WARN": "9"}
    # with time enough: nothing is similar, Cline refuses the patch, nothing to say
    assert cline.respond(json.dumps(payload).encode(), env)[0] == "{}"
    monkeypatch.setattr(cline_model, "FUZZ_CELLS", 10)
    out = json.loads(cline.respond(json.dumps(payload).encode(), env)[0])
    assert "could not be worked out in time" in out["deny"] and "up to 11 lines" in out["deny"]
