"""OpenClaw's edit tool on text Unicode NFKC normalisation changes (a ligature, a fullwidth
letter), on the real CLI: an exact oldText on such a file is applied like any other, and an
oldText that matches only once both sides are normalised is applied too (measured below), so
the guard predicts the first exactly and judges the second by its worst case. Both used to be
taken for refusals and passed in silence: 199 -> 205 lines past the cap."""

from __future__ import annotations

from pathlib import Path

import scenarios
from openclaw_driver import Openclaw

LIGATURE = "\ufb01"  # "fi" as one character; NFKC makes it "f" + "i"


def lines(n: int, start: int = 0) -> list[str]:
    return ["- [note %d](note-%d.md) - %sne point %d\n" % (i, i, LIGATURE, i) for i in range(start, start + n)]


def standard_index(openclaw: Openclaw, n: int) -> Path:
    index = openclaw.workspace / "memory" / "MEMORY.md"  # not OpenClaw's own: the standard window
    index.parent.mkdir()
    index.write_text("".join(lines(n)), encoding="utf-8")
    return index


def test_an_nfkc_only_match_is_applied_by_openclaw(openclaw: Openclaw) -> None:
    # The measurement the worst-case judgement rests on: under the cap the guard lets it
    # through, and OpenClaw really writes it (the oldText spells the ligature "fi").
    openclaw.install()
    index = standard_index(openclaw, 10)
    old = lines(1, start=4)[0].replace(LIGATURE, "fi")
    scenarios.allowed(openclaw, [[openclaw.edit_call(str(index), old, old + "- [new](new.md) - added\n")]])
    text = index.read_text(encoding="utf-8")
    assert "- [new](new.md) - added\n" in text and text.count("\n") == 11


def test_an_exact_edit_on_a_file_nfkc_would_change_is_denied_past_the_cap(openclaw: Openclaw) -> None:
    openclaw.install()
    index = standard_index(openclaw, 199)
    old = lines(1, start=5)[0]
    (denied,) = scenarios.refused(openclaw, index, [[openclaw.edit_call(str(index), old, old + "".join(lines(6, 1000)))]])
    assert "engramory blocked this edit" in denied and "grow from 199 to 205 lines (hard cap 200: 5 over)" in denied


def test_an_nfkc_only_match_past_the_cap_is_denied_by_its_worst_case(openclaw: Openclaw) -> None:
    openclaw.install()
    index = standard_index(openclaw, 199)
    old = lines(1, start=5)[0].replace(LIGATURE, "fi")
    (denied,) = scenarios.refused(openclaw, index, [[openclaw.edit_call(str(index), old, old + "".join(lines(6, 1000)))]])
    assert "engramory blocked this edit" in denied and "NFKC" in denied and "worst case" in denied
