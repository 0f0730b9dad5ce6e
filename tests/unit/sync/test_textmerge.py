"""Three-way merge of a section's prose: one side's change applies, the same change once,
insertions at one place all kept (ours first), deletions from either side, and an overlapping
change made differently on both sides a conflict with both versions."""

from __future__ import annotations

from engramory.sync import textmerge


def lines_of(base: list[str], ours: list[str], theirs: list[str]) -> list[str]:
    m = textmerge.merge3(base, ours, theirs)
    src = {"o": base, "a": ours, "b": theirs}
    return [src[side][i] for side, i in m.lines]


def test_one_side_changes() -> None:
    assert lines_of(["a", "b", "c"], ["a", "B", "c"], ["a", "b", "c"]) == ["a", "B", "c"]
    assert lines_of(["a", "b", "c"], ["a", "b", "c"], ["a", "c"]) == ["a", "c"]


def test_changes_in_different_places_both_apply() -> None:
    assert lines_of(["a", "b", "c", "d"], ["A", "b", "c", "d"], ["a", "b", "c", "D"]) == ["A", "b", "c", "D"]


def test_the_same_change_once() -> None:
    m = textmerge.merge3(["a", "b"], ["a", "x", "b"], ["a", "x", "b"])
    assert m.lines == [("o", 0), ("a", 1), ("o", 1)]
    assert m.theirs[1] == ("a", 1) and not m.conflicts


def test_insertions_at_one_place_all_kept_ours_first() -> None:
    assert lines_of(["a"], ["a", "x"], ["a", "y"]) == ["a", "x", "y"]
    assert lines_of([], ["", "x"], ["", "y"]) == ["", "x", "y"]


def test_deletions_overlapping_all_go() -> None:
    assert lines_of(["a", "b", "c", "d"], ["a", "d"], ["a", "c", "d"]) == ["a", "d"]


def test_overlapping_changes_conflict_with_both_versions() -> None:
    m = textmerge.merge3(["a", "b", "c"], ["a", "B1", "c"], ["a", "B2", "c"])
    assert [(c.start, c.end, c.ours, c.theirs) for c in m.conflicts] == [(1, 2, ["B1"], ["B2"])]
    assert m.lines == [("o", 0), ("o", 2)]
