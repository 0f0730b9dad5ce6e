"""`engramory merge-index --resolve [INDEX]`: repair an index that did not go through the
driver (a clone without it, a merge on a web page, `merge=union`).

Conflict markers or duplicate pointers become the three-way result where git still knows the
two sides and their base: during a merge, the conflict stages of the index (else HEAD,
MERGE_HEAD and their merge base); after a merge commit whose result is still in the file, its
two parents and their base. Otherwise the deduplicated union: every line between the markers
kept (a diff3 base part dropped), each pointer once, and for one note with two texts both
kept and reported. The repair is one journal entry (`engramory undo` takes it back).
"""

from __future__ import annotations

import os
import re

from engramory import scope
from engramory.curate import notes
from engramory.store import journal
from engramory.sync import gitops, indexmerge, indexparse
from engramory.sync.indexparse import ENTRY, MARKER_RE, Index, Item, Section

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

# the comment lines of our own conflict block: `<!-- a.md, under "## user" -->`
UNDER_RE = re.compile(r'<!-- .*, under "(.*)"(?: \(occurrence \d+\))? -->\Z')
OURS_COMMENT_RE = re.compile(r"<!-- .*(?:, under \"|: deleted on this side|prose under ).* -->\Z")


def marker_lines(lines: Sequence[str]) -> list[int]:
    """0-based numbers of the lines that are conflict markers."""
    return [i for i, line in enumerate(lines) if MARKER_RE.match(line.rstrip("\r"))]


def duplicates(index: Index) -> list[str]:
    """Targets pointed at by more than one line."""
    return [key[0] for key in index.entries() if key[1] == 2]


class Repair:
    """What --resolve did: the new bytes, how, and what is left for the user."""

    __slots__ = ("data", "how", "removed", "kept_both", "conflicts")

    def __init__(self, data: bytes, how: str) -> None:
        self.data = data
        self.how = how
        self.removed = 0  # duplicate lines taken out
        self.kept_both: list[str] = []  # notes with two texts: both lines kept
        self.conflicts: list[str] = []  # the three-way result's conflicts (its block is in data)


# -- the deduplicated union ---------------------------------------------------------------------

def _unmark(lines: list[str]) -> list[tuple[str, str | None]]:
    """The lines with the markers out: (line, the heading our own block names for it, or None).
    A diff3 base part (between ||||||| and =======) is the old text both sides replaced: out."""
    out: list[tuple[str, str | None]] = []
    depth = 0
    in_base = False
    under: str | None = None
    for line in lines:
        if MARKER_RE.match(line):
            kind = line[0]
            depth = depth + 1 if kind == "<" else max(0, depth - 1) if kind == ">" else depth
            in_base = kind == "|"
            under = None
            continue
        if in_base:
            continue
        if depth and OURS_COMMENT_RE.match(line):
            found = UNDER_RE.match(line)
            under = found.group(1) if found else None
            continue
        out.append((line, under if depth else None))
        under = None
    return out


def union(data: bytes) -> Repair:
    bom, nl, final_nl, lines = indexparse.decode(data)
    kept = _unmark(lines)
    moves = {line: heading for line, heading in kept if heading is not None}
    parsed = indexparse.parse(indexparse.encode([line for line, _ in kept], bom, nl, final_nl))
    repair = Repair(b"", "the deduplicated union (no merge git still knows of)")
    sections = _fold_sections(parsed)
    by_heading = {s.heading.strip(): s for s in sections if s.heading is not None}
    seen: dict[str, list[str]] = {}
    relocate: list[tuple[Section, Item]] = []
    for section in sections:
        items = []
        for it in section.items:
            if it.kind == ENTRY and it.key is not None:
                texts = seen.setdefault(it.key[0], [])
                if it.text in texts:
                    repair.removed += 1
                    continue
                if texts and it.key[0] not in repair.kept_both:
                    repair.kept_both.append(it.key[0])
                texts.append(it.text)
                home = by_heading.get(moves[it.text]) if it.text in moves else None
                if home is not None and home is not section:
                    relocate.append((home, it))  # a line of our own block goes back under its heading
                    continue
            items.append(it)
        section.items[:] = items
    for home, it in relocate:
        _append(home, it)
    parsed.sections = sections
    repair.data = indexparse.encode(parsed.lines(), bom, nl, final_nl)
    return repair


def _append(section: Section, it: Item) -> None:
    """Put an entry at the end of a section's entries, before its trailing blank lines."""
    pos = len(section.items)
    while pos > 0 and not section.items[pos - 1].text.strip():
        pos -= 1
    section.items.insert(pos, it)


def _fold_sections(index: Index) -> list[Section]:
    """The sections with a repeated heading folded into its first occurrence (a union puts the
    same new section there twice)."""
    out: list[Section] = []
    first: dict[str, Section] = {}
    for s in index.sections:
        name = s.heading.strip() if s.heading is not None else None
        if name is not None and name in first:
            first[name].items.extend(s.items)
            continue
        if name is not None:
            first[name] = s
        out.append(s)
    return out


# -- the three-way result, where git knows the sides ------------------------------------------

def sides(path: str, data: bytes) -> tuple[bytes, bytes, bytes, str] | None:
    """(base, ours, theirs, how they were found) for the index at `path`, or None."""

    folder = os.path.dirname(os.path.abspath(path))
    try:
        top = gitops.toplevel(folder)
        if top is None:
            return None
        rel = os.path.relpath(os.path.realpath(os.path.abspath(path)), top).replace(os.sep, "/")
        if gitops.unmerged(top, [rel]):
            got = [gitops.show(top, ":%d:%s" % (n, rel)) or b"" for n in (1, 2, 3)]
            return got[0], got[1], got[2], "the merge in progress (git's base, ours and theirs of %s)" % rel
        head, other = gitops.rev(top, "HEAD"), gitops.rev(top, "MERGE_HEAD")
        how = "the merge in progress (HEAD, MERGE_HEAD and their merge base)"
        if head is not None and other is None:
            two = gitops.parents(top, head)
            if len(two) != 2 or gitops.show(top, "%s:%s" % (head, rel)) != data:
                return None
            other, head = two[1], two[0]
            how = "the merge commit's two parents and their merge base"
        if head is None or other is None:
            return None
        base = gitops.merge_base(top, head, other)
        got = [gitops.show(top, "%s:%s" % (c, rel)) or b"" if c else b"" for c in (base, head, other)]
        return got[0], got[1], got[2], how
    except gitops.GitError:
        return None


def repair(path: str, data: bytes) -> Repair:
    found = sides(path, data)
    if found is None:
        return union(data)
    base, ours, theirs, how = found
    result = indexmerge.merge(base, ours, theirs)
    out = Repair(result.data, "the three-way merge of " + how)
    out.conflicts = result.names()
    if not out.conflicts and duplicates(indexparse.parse(result.data)):
        cleaned = union(result.data)  # the sides themselves held a pointer twice
        out.data, out.removed, out.kept_both = cleaned.data, cleaned.removed, cleaned.kept_both
    return out


# -- the command ------------------------------------------------------------------------------

def _index_path(files: Sequence[str]) -> str:

    if len(files) > 1:
        raise notes.Refusal("--resolve takes one index (%d given)" % len(files), 64)
    if not files:
        root, _ = notes.resolve_root(None)
        return os.path.join(root, "MEMORY.md")
    given = os.path.expanduser(files[0])
    return os.path.join(given, "MEMORY.md") if os.path.isdir(given) else given


def main(files: Sequence[str], dry_run: bool, as_json: bool) -> int:

    try:
        path = _index_path(files)
        data, _ = scope.read_bounded(path, 16 << 20)
    except notes.Refusal as exc:
        return notes.fail(as_json, str(exc), exc.code)
    except OSError as exc:
        return notes.fail(as_json, "%s cannot be read (%s); pass the index to repair" % (
            files[0] if files else "MEMORY.md", exc.strerror or exc), 66)
    lines = indexparse.decode(data)[3]
    marks, dups = marker_lines(lines), duplicates(indexparse.parse(data))
    if not marks and not dups:
        notes.emit(as_json, {"ok": True, "path": path, "changed": False},
                   "%s has no conflict markers and no duplicate pointers: nothing to repair" % path)
        return 0
    fixed = repair(path, data)
    summary = {"ok": not fixed.conflicts, "path": path, "changed": fixed.data != data, "how": fixed.how,
               "markers": len(marks), "duplicates": dups, "removed": fixed.removed, "kept_both": fixed.kept_both,
               "conflicts": fixed.conflicts, "dry_run": dry_run}
    entry = None
    if not dry_run and fixed.data != data:
        root, name = os.path.split(os.path.abspath(path))
        try:
            with journal.transaction(root, "merge-index", ["--resolve", name]) as tx:
                if tx.read(name) != data:
                    raise journal.JournalConflict("%s changed while it was being repaired; run this again" % name)
                tx.write(name, fixed.data)
            entry = tx.entry
        except journal.JournalError as exc:
            return notes.fail(as_json, str(exc), 3 if isinstance(exc, journal.LockTimeout) else 1)
    summary["undo"] = entry.id if entry is not None else None
    notes.emit(as_json, summary, _text(path, fixed, marks, dups, dry_run, entry.id if entry else None))
    return 1 if fixed.conflicts else 0


def _text(path: str, fixed: Repair, marks: list[int], dups: list[str], dry_run: bool, undo: int | None) -> str:
    verb = "would repair" if dry_run else "repaired"
    out = ["%s %s (%d conflict marker line%s, %d note%s pointed at twice) by %s" % (
        verb, path, len(marks), "" if len(marks) == 1 else "s", len(dups), "" if len(dups) == 1 else "s", fixed.how)]
    if fixed.removed:
        out.append("  %d duplicate pointer line%s taken out" % (fixed.removed, "" if fixed.removed == 1 else "s"))
    for name in fixed.kept_both:
        out.append("  %s has two different lines: both kept; keep the right one by hand" % name)
    if fixed.conflicts:
        out.append("  %d conflict%s left in one block after the title line (%s): keep one version of each, "
                   "delete the markers and comment lines" % (len(fixed.conflicts), "" if len(fixed.conflicts) == 1
                                                              else "s", ", ".join(fixed.conflicts)))
    if undo is not None:
        out.append("journal entry %d: `engramory undo %d` takes it back; then `git add %s` and commit" % (
            undo, undo, os.path.basename(path)))
    return "\n".join(out)

