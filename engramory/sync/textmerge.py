"""Three-way merge of the prose of one section (its non-entry lines), line by line.

Each side's changes against the base come from difflib (deterministic: no hash order is ever
iterated). A change made on one side only applies; the same change on both sides applies once;
lines inserted at the same place on both sides are all kept, ours first; lines deleted on
either side go (deletions that overlap included); two changes that
replace or delete an overlapping run of base lines in different ways are a conflict, reported
with both sides' versions and applied from neither.

The result names every line by where it came from, so the index merge can place it among the
entries: ("o", i) base line i, ("a", j) ours' line j, ("b", j) theirs' line j.
"""

from __future__ import annotations

import difflib

Origin = tuple[str, int]


class Change:
    """One side's change: base lines [i1, i2) become that side's lines [j1, j2)."""

    __slots__ = ("side", "i1", "i2", "j1", "j2")

    def __init__(self, side: str, i1: int, i2: int, j1: int, j2: int) -> None:
        self.side = side
        self.i1 = i1
        self.i2 = i2
        self.j1 = j1
        self.j2 = j2


class TextConflict:
    """Base lines [start, end) changed differently on both sides: each side's version."""

    __slots__ = ("start", "end", "ours", "theirs")

    def __init__(self, start: int, end: int, ours: list[str], theirs: list[str]) -> None:
        self.start = start
        self.end = end
        self.ours = ours
        self.theirs = theirs


class Merged:
    """`lines`: the merged lines' origins in order; `ours`/`theirs`: each side's line index ->
    the origin it has in the result (absent: the line is not in it); `conflicts`."""

    __slots__ = ("lines", "ours", "theirs", "conflicts")

    def __init__(self) -> None:
        self.lines: list[Origin] = []
        self.ours: dict[int, Origin] = {}
        self.theirs: dict[int, Origin] = {}
        self.conflicts: list[TextConflict] = []


def _changes(side: str, base: list[str], other: list[str], aligned: dict[int, Origin]) -> list[Change]:
    out = []
    matcher = difflib.SequenceMatcher(None, base, other, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for k in range(i2 - i1):
                aligned[j1 + k] = ("o", i1 + k)
        else:
            out.append(Change(side, i1, i2, j1, j2))
    return out


def _overlap(x: Change, y: Change) -> bool:
    return x.i1 < y.i2 and y.i1 < x.i2


def merge3(base: list[str], ours: list[str], theirs: list[str]) -> Merged:
    result = Merged()
    a_aligned: dict[int, Origin] = {}
    b_aligned: dict[int, Origin] = {}
    changes = _changes("a", base, ours, a_aligned) + _changes("b", base, theirs, b_aligned)
    changes.sort(key=lambda c: (c.i1, c.i1 != c.i2, c.side))  # inserts first at a point, ours first
    text = {"o": base, "a": ours, "b": theirs}
    kept_base = [True] * len(base)
    emitted_at: dict[int, list[Origin]] = {}  # base position -> origins emitted before it
    for group in _groups(changes):
        start = min(c.i1 for c in group)
        end = max(c.i2 for c in group)
        for i in range(start, end):
            kept_base[i] = False
        _take(group, text, result, emitted_at.setdefault(start, []), start, end)
    for i in range(len(base) + 1):
        result.lines.extend(emitted_at.get(i, ()))
        if i < len(base) and kept_base[i]:
            result.lines.append(("o", i))
    for aligned, kept in ((a_aligned, result.ours), (b_aligned, result.theirs)):
        for j, origin in aligned.items():
            if kept_base[origin[1]]:
                kept[j] = origin
    return result


def _emit(result: Merged, emitted: list[Origin], side: str, j: int) -> None:
    origin = (side, j)
    emitted.append(origin)
    (result.ours if side == "a" else result.theirs)[j] = origin


def _take(group: list[Change], text: dict[str, list[str]], result: Merged, emitted: list[Origin],
          start: int, end: int) -> None:
    """What one group of changes puts in place of base lines [start, end)."""
    if _same(group, text):  # the same change on both sides: ours' lines, theirs' map onto them
        mine, other = group
        for j in range(mine.j1, mine.j2):
            _emit(result, emitted, "a", j)
        for k in range(other.j2 - other.j1):
            result.theirs[other.j1 + k] = ("a", mine.j1 + k)
    elif len({c.side for c in group}) == 1:  # one side alone changed these lines
        for c in group:
            for j in range(c.j1, c.j2):
                _emit(result, emitted, c.side, j)
    elif all(c.j1 == c.j2 for c in group):
        pass  # deletions only: a line either side deleted goes
    elif all(c.i1 == c.i2 for c in group):
        _insertions(group, text, result, emitted)
    else:
        result.conflicts.append(TextConflict(start, end, _version(group, "a", text["o"], text["a"], start, end),
                                             _version(group, "b", text["o"], text["b"], start, end)))


def _insertions(group: list[Change], text: dict[str, list[str]], result: Merged, emitted: list[Origin]) -> None:
    """Lines inserted at one place on both sides: all of them, ours first; a line theirs
    inserted that ours inserted too is ours' line."""
    seen: dict[str, Origin] = {}
    for c in group:
        for j in range(c.j1, c.j2):
            line = text[c.side][j]
            twin = seen.get(line) if c.side == "b" else None
            if twin is not None:
                result.theirs[j] = twin
                continue
            if c.side == "a":
                seen.setdefault(line, ("a", j))
            _emit(result, emitted, c.side, j)


def _groups(changes: list[Change]) -> list[list[Change]]:
    """Changes in base order, those of the two sides that overlap (or insert at one point)
    chained into one group; a change of one side alone is a group of its own."""
    groups: list[list[Change]] = []
    for c in changes:
        if groups:
            last = groups[-1]
            if any(x.side != c.side and (_overlap(x, c) or _same_point(x, c)) for x in last):
                last.append(c)
                continue
        groups.append([c])
    return groups


def _same_point(x: Change, y: Change) -> bool:
    """Two insertions at one base position, or the same base range changed on both sides."""
    return x.i1 == y.i1 and ((x.i1 == x.i2 and y.i1 == y.i2) or x.i2 == y.i2)


def _same(group: list[Change], text: dict[str, list[str]]) -> bool:
    """Both sides made exactly the same change (same base range, same new lines)."""
    if len(group) != 2 or group[0].side == group[1].side:
        return False
    x, y = group
    return (x.i1, x.i2) == (y.i1, y.i2) and text[x.side][x.j1:x.j2] == text[y.side][y.j1:y.j2]


def _version(group: list[Change], side: str, base: list[str], lines: list[str], start: int, end: int) -> list[str]:
    """What `side` made of base lines [start, end): its changes there applied to the base."""
    out = []
    pos = start
    for c in group:
        if c.side != side:
            continue
        out.extend(base[pos:c.i1])
        out.extend(lines[c.j1:c.j2])
        pos = c.i2
    out.extend(base[pos:end])
    return out
