"""The three-way merge of an index, keyed by the note each entry points at, not by line.

Per entry key (engramory.sync.indexparse): added on one side -> kept; added on both with the
same text in the same section -> once; added on both otherwise -> a conflict; deleted on one
side and unchanged on the other -> deleted; deleted on one side and changed on the other -> a
conflict; changed on both, where the section (a move) and the text are merged separately ->
both apply when each part changed on one side only, else a conflict. The prose of each section
merges as three-way text (engramory.sync.textmerge). Sections themselves are ordered and kept
the same way as entries; a section one side deleted stays while it still holds a merged line.

Order is deterministic: the base order (or the order of the one side that reordered it), each
addition after its nearest surviving predecessor on its own side, ours before theirs. Only
lists and insertion-ordered dicts are iterated, never a set, so the bytes do not depend on
PYTHONHASHSEED. Every conflict goes into ONE marked block after the title line, before the
first entry; nothing is ever dropped or cut. The output keeps ours' BOM, line ends and final
newline; when only one side changed, the result is that side byte for byte.
"""

from __future__ import annotations

from engramory.sync import indexparse, textmerge
from engramory.sync.indexparse import ENTRY, PREAMBLE, Index, Key, key_name

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Hashable, Sequence
    from typing import TypeVar

    T = TypeVar("T", bound=Hashable)

Value = tuple[Key, str]  # (section key, line text) of one entry
# A line of a section as the order sees it: ("e", entry key) or ("t", where the prose line
# came from: ("o" | "a" | "b", its index), or ("x1" | "x2", index) for a line not kept).
ItemId = tuple[str, tuple[str, int]]
_CONFLICT = ("conflict",)  # a three-way value that cannot be decided
NAMES_SHOWN = 5  # conflicting notes named on the block's first line; the block lists them all


class EntryConflict:
    """One note both sides changed in ways that do not combine: each side's (section, line)."""

    __slots__ = ("key", "ours", "theirs")

    def __init__(self, key: Key, ours: Value | None, theirs: Value | None) -> None:
        self.key = key
        self.ours = ours
        self.theirs = theirs


class ProseConflict:
    """Prose of one section changed on both sides: each side's version of the lines."""

    __slots__ = ("section", "ours", "theirs")

    def __init__(self, section: Key, ours: list[str], theirs: list[str]) -> None:
        self.section = section
        self.ours = ours
        self.theirs = theirs


class Result:
    """The merged bytes, the conflicts (in the block of `data`), and how many entries it has."""

    __slots__ = ("data", "entry_conflicts", "prose_conflicts", "entries")

    def __init__(self, data: bytes, entries: int = 0) -> None:
        self.data = data
        self.entry_conflicts: list[EntryConflict] = []
        self.prose_conflicts: list[ProseConflict] = []
        self.entries = entries

    @property
    def clean(self) -> bool:
        return not self.entry_conflicts and not self.prose_conflicts

    def names(self) -> list[str]:
        """One name per conflict: the note's target, or `prose under <heading>`."""
        out = [key_name(c.key) for c in self.entry_conflicts]
        out.extend("prose under %s" % _heading_name(c.section) for c in self.prose_conflicts)
        return out


def merge(base: bytes, ours: bytes, theirs: bytes, marker: int = 7) -> Result:
    """The merge of two versions of an index that both come from `base` (see the module)."""
    if ours == theirs or base == theirs:
        return Result(ours, len(indexparse.parse(ours).entries()))
    if base == ours:
        return Result(theirs, len(indexparse.parse(theirs).entries()))
    cache = indexparse.shared_cache()
    versions = [indexparse.parse(v, cache) for v in (base, ours, theirs)]
    return _Merge(*versions).run(marker)


def three_way(o: object, a: object, b: object) -> object:
    """The value of one thing merged: a side's change over an unchanged other, else _CONFLICT."""
    if a == b or b == o:
        return a
    if a == o:
        return b
    return _CONFLICT


def merge_value(o: Value | None, a: Value | None, b: Value | None) -> Value | None | tuple[str]:
    """One entry merged: whole when one side changed it; by parts (section, text) when both did."""
    whole = three_way(o, a, b)
    if whole is not _CONFLICT:
        return whole  # type: ignore[return-value]
    if o is None or a is None or b is None:
        return _CONFLICT  # added on both sides differently, or deleted on one and changed on the other
    section = three_way(o[0], a[0], b[0])
    text = three_way(o[1], a[1], b[1])
    if section is _CONFLICT or text is _CONFLICT:
        return _CONFLICT
    return (section, text)  # type: ignore[return-value]


def order(base: Sequence[T], sides: Sequence[Sequence[T]], keep: Callable[[T], bool]) -> list[T]:
    """The merged order of the items `keep` accepts: the base's (or, when one side reordered
    them, that side's, ours first), then each side's additions after their nearest surviving
    predecessor on that side, ours before theirs."""
    survivors = [x for x in base if keep(x)]
    placed = set(survivors)
    spine = _spine(base, sides, survivors, placed)
    children: dict[T | None, list[T]] = {}  # None: the start
    for seq in sides:
        prev: T | None = None
        for x in seq:
            if x in placed:
                prev = x
            elif keep(x):
                children.setdefault(prev, []).append(x)
                placed.add(x)
                prev = x
    out: list[T] = []
    anchors: list[T | None] = [None]
    anchors.extend(spine)
    for anchor in anchors:
        if anchor is not None:
            out.append(anchor)
        stack = list(reversed(children.get(anchor, [])))
        while stack:
            x = stack.pop()
            out.append(x)
            stack.extend(reversed(children.get(x, [])))
    return out


def _spine(base: Sequence[T], sides: Sequence[Sequence[T]], survivors: list[T], placed: set[T]) -> list[T]:
    """The order of the base's surviving items: the base's, or that of the first side that
    reordered them."""
    for seq in sides:
        if seq == base:
            continue  # this side did not touch the order
        mine = [x for x in seq if x in placed]
        if len(mine) == len(survivors) and mine != survivors:
            return mine
    return survivors


class _Merge:
    def __init__(self, o: Index, a: Index, b: Index) -> None:
        self.o, self.a, self.b = o, a, b
        self.eo, self.ea, self.eb = o.entries(), a.entries(), b.entries()
        self.values: dict[Key, Value] = {}
        self.result = Result(b"")
        self.text: dict[Key, textmerge.Merged] = {}
        self.secs = [{s.key: s for s in v.sections} for v in (o, a, b)]
        self.same: dict[Key, tuple[str | None, list[tuple[bool, str]]] | None] = {}
        self.texts: dict[Key, list[list[str]]] = {}  # per section: the prose lines of o, a, b

    def run(self, marker: int) -> Result:
        self._entries()
        self._prose()
        where: set[Key] = {v[0] for v in self.values.values()}
        so, sa, sb = self.secs
        kept = [k for k in dict.fromkeys(list(so) + list(sa) + list(sb))
                if k == PREAMBLE or (k in sa and k in sb) or (k not in so) or k in where or self.text[k].lines]
        keep = set(kept)
        lines: list[str] = []
        first_heading = first_entry = -1
        for k in order(list(so), [list(sa), list(sb)], lambda k: k in keep):
            heading, items = self._section(k)
            if heading is not None:
                if lines and lines[-1].strip() and self._spaced(k):
                    lines.append("")  # the blank line its own version keeps before this heading
                if first_heading < 0:
                    first_heading = len(lines)
                lines.append(heading)
            for is_entry, text in items:
                if is_entry and first_entry < 0:
                    first_entry = len(lines)
                lines.append(text)
        if not self.result.clean:
            at = _block_position(first_heading, first_entry, len(lines))
            lines[at:at] = render_block(self.result, marker)
        style = self.a if self.a.sections[0].items or len(self.a.sections) > 1 else self.b
        self.result.data = indexparse.encode(lines, style.bom, style.nl, style.final_nl)
        self.result.entries = len(self.values)
        return self.result

    def _spaced(self, k: Key) -> bool:
        """Whether the version this section's heading is taken from (ours, theirs, base) has a
        blank line right before it: a heading the merge puts after another line keeps it."""
        for version in (self.a, self.b, self.o):
            for i, s in enumerate(version.sections):
                if s.key == k:
                    if i == 0:
                        return False
                    prev = version.sections[i - 1]
                    last = prev.items[-1].text if prev.items else prev.heading
                    return last is not None and not last.strip()
        return False

    def _entries(self) -> None:
        eo, ea, eb = self.eo, self.ea, self.eb
        for key in dict.fromkeys(list(eo) + list(ea) + list(eb)):
            o, a, b = eo.get(key), ea.get(key), eb.get(key)
            value = a if a == b or b == o else merge_value(o, a, b)
            if value is _CONFLICT:
                self.result.entry_conflicts.append(EntryConflict(key, a, b))
            elif value is not None:
                self.values[key] = value  # type: ignore[assignment]

    def _prose(self) -> None:
        so, sa, sb = self.secs
        for k in dict.fromkeys(list(so) + list(sa) + list(sb)):
            if self._untouched(k) is not None:
                continue  # no prose to merge: the three versions hold the same lines there
            texts = [[it.text for it in s[k].items if it.kind != ENTRY] if k in s else [] for s in self.secs]
            self.texts[k] = texts
            merged = textmerge.merge3(*texts)
            self.text[k] = merged
            for c in merged.conflicts:
                self.result.prose_conflicts.append(ProseConflict(k, c.ours, c.theirs))

    def _sequence(self, side: int, k: Key) -> list[ItemId]:
        """One version's lines of section `k` as merge items: ("e", key) or ("t", origin)."""
        sec = self.secs[side].get(k)
        if sec is None:
            return []
        origins = None if side == 0 else (self.text[k].ours if side == 1 else self.text[k].theirs)
        out: list[ItemId] = []
        j = 0
        dropped = "x%d" % side
        for it in sec.items:
            if it.kind == ENTRY and it.key is not None:
                out.append(("e", it.key))
                continue
            if origins is None:
                out.append(("t", ("o", j)))
            else:
                out.append(("t", origins.get(j, (dropped, j))))
            j += 1
        return out

    def _section(self, k: Key) -> tuple[str | None, list[tuple[bool, str]]]:
        same = self._untouched(k)
        if same is not None:
            return same
        merged = self.text[k]
        live = set(merged.lines)
        values = self.values

        def keep(item: ItemId) -> bool:
            kind, what = item
            if kind == "e":
                value = values.get(what)
                return value is not None and value[0] == k
            return what in live

        seqs = [self._sequence(i, k) for i in range(3)]
        texts = self.texts[k]
        items: list[tuple[bool, str]] = []
        for kind, what in order(seqs[0], seqs[1:], keep):
            if kind == "e":
                items.append((True, values[what][1]))
            else:
                items.append((False, texts["oab".index(what[0])][what[1]]))
        heading = None
        for s in (self.secs[1], self.secs[2], self.secs[0]):
            if k in s:
                heading = s[k].heading
                break
        return heading, items


    def _untouched(self, k: Key) -> tuple[str | None, list[tuple[bool, str]]] | None:
        """The section as it is when all three versions hold exactly the same lines in it (most
        sections of most merges): nothing in it can have moved, changed or conflicted."""
        if k in self.same:
            return self.same[k]
        self.same[k] = None
        found = [s.get(k) for s in self.secs]
        o = found[0]
        if o is None or found[1] is None or found[2] is None:
            return None
        lines = [it.text for it in o.items]
        if [it.text for it in found[1].items] != lines or [it.text for it in found[2].items] != lines:
            return None
        self.same[k] = found[1].heading, [(it.kind == ENTRY, it.text) for it in o.items]
        return self.same[k]


def _block_position(first_heading: int, first_entry: int, end: int) -> int:
    """After the title line when a heading comes before the first entry, else just before the
    first entry (a flat index), else at the end."""
    if first_heading >= 0 and (first_entry < 0 or first_heading < first_entry):
        return first_heading + 1
    return first_entry if first_entry >= 0 else end


def _heading_name(section: Key) -> str:
    if section == PREAMBLE:
        return "the top of the index"
    return '"%s"' % section[0] if section[1] == 1 else '"%s" (occurrence %d)' % section


def _comment(text: str) -> str:
    return "<!-- %s -->" % text.replace("--", "- -")


def _side_lines(c: EntryConflict | ProseConflict, ours: bool) -> list[str]:
    if isinstance(c, ProseConflict):
        lines = c.ours if ours else c.theirs
        head = _comment("prose under %s%s" % (_heading_name(c.section), "" if lines else ": removed on this side"))
        return [head] + lines
    value = c.ours if ours else c.theirs
    if value is None:
        return [_comment("%s: deleted on this side" % key_name(c.key))]
    return [_comment("%s, under %s" % (key_name(c.key), _heading_name(value[0]))), value[1]]


def render_block(result: Result, marker: int) -> list[str]:
    """The one conflict block: every conflicting note (and prose) with ours' version, then
    theirs', between markers of length `marker`."""
    conflicts: list[EntryConflict | ProseConflict] = list(result.entry_conflicts) + list(result.prose_conflicts)
    names = result.names()
    shown = ", ".join(names[:NAMES_SHOWN]) + (" and %d more" % (len(names) - NAMES_SHOWN) if len(names) > NAMES_SHOWN
                                             else "")
    head = "%s ours: engramory merge-index: %d conflict%s (%s); keep one version of each, then delete the " \
        "markers and the comment lines" % ("<" * marker, len(names), "" if len(names) == 1 else "s", shown)
    out = [head]
    for c in conflicts:
        out.extend(_side_lines(c, True))
    out.append("=" * marker)
    for c in conflicts:
        out.extend(_side_lines(c, False))
    out.append(">" * marker + " theirs")
    return out
