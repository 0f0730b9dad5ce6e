"""The compaction planner: from a store read once, an ordered list of typed operations that
bring the index inside a target, the files they would write, and the invariants checked on
the result. It writes nothing; `engramory.compact.apply` renders, saves and applies plans.

The operations, in this order, each planned only while the index is still over the target:

1. ``pointerify``: an index pointer line longer than POINTER_MAX characters is cut to
   ``- [Title](note.md) — hook``; the cut text that the note does not already hold is
   appended to the note under ``## From the index`` (lossless).
2. ``drop-duplicate-pointer``: a second line pointing to a note already pointed to (its text
   is kept in the note the same way); ``drop-dead-pointer``: a line pointing to no file.
3. ``merge-identical``: notes whose normalized bodies are identical and both indexed: the
   older (by ``updated``, then ``created``, then path) moves to ``archive/``, its pointer line
   is dropped and every ``[[link]]`` to it is repointed to the note that stays.
4. ``archive-cold``: notes ranked by COLD SCORE (below) move to ``archive/`` and their index
   lines are dropped, one at a time, until the target is met. Pinned notes never move, nor
   a note whose move would leave another note unreachable.
5. ``group``: pointer lines gathered under one heading per type (headings left empty are
   dropped); planned only while still over the target and only when it makes the index
   smaller. No pointer line changes.

Near-duplicates that are not identical are listed as ``propose-merge`` and never applied.

COLD SCORE = days between the note's ``updated`` (else ``created``) date and the newest such
date in the store, plus a type bonus (project 180, reference 90, feedback 30, user 0): project
facts go stale first, who the user is goes stale last. A note without dates scores its bonus
only. Highest score first; ties go to the note pointed to earlier in the index (older
entries sit higher). The score depends on the store's bytes only, never on today's date, so
a plan is the same on every machine and every day.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import re

from engramory.compact.invariants import check_invariants, slug_map
from engramory.compact.invariants import (
    reachable as reachable,  # re-exported: part of this module's interface
)
from engramory.compact.lines import HOOK_MAX as HOOK_MAX  # re-exported: part of this module's interface
from engramory.compact.lines import SEP_CHARS as SEP_CHARS  # re-exported: part of this module's interface
from engramory.compact.lines import clip, grouped, hook_of, leftover, sections_of
from engramory.compact.work import FROM_INDEX as FROM_INDEX  # re-exported: part of this module's interface
from engramory.compact.work import (
    LIST_MARKER_RE,
    WORD_RE,
    Change,
    Item,
    Line,
    Operation,
    Work,
    is_pinned,
    link_key,
    normalized_body,
    note_date,
    sha256,
)
from engramory.compact.work import Measure as Measure
from engramory.compact.work import Plan as Plan
from engramory.compact.work import Target as Target
from engramory.compact.work import text_tokens as text_tokens
from engramory.size import Caps, Window
from engramory.size import n as _n
from engramory.store.reader import ARCHIVE, READ_MAX, TYPES, WIKI_RE, Note, Store, read_bounded
from engramory.store.secrets import redact

POINTER_MAX = 150  # characters: the host's own advice is one index line of ~150 per entry
TITLE_MAX = 80
TYPE_BONUS = {"project": 180, "reference": 90, "feedback": 30, "user": 0}

POINTERIFY = "pointerify"
DROP_DUPLICATE = "drop-duplicate-pointer"
DROP_DEAD = "drop-dead-pointer"
MERGE_IDENTICAL = "merge-identical"
ARCHIVE_COLD = "archive-cold"
GROUP = "group"
PROPOSE_MERGE = "propose-merge"
OPERATIONS = (POINTERIFY, DROP_DUPLICATE, DROP_DEAD, MERGE_IDENTICAL, ARCHIVE_COLD, GROUP)



# -- the planner --------------------------------------------------------------------------


def store_files(store: Store) -> dict[str, bytes]:
    """Every file the plan depends on, rel -> bytes: the index, the config and each note. Only
    what the store reader already holds, or a bounded re-read of a note it kept no text of
    (not UTF-8); `compact` refuses a store with anything it could not read whole."""
    files: dict[str, bytes] = {}
    if store.index_raw is not None:
        files[store.index_name] = store.index_raw
    cfg = store.config
    if cfg.raw is not None:
        files[os.path.basename(cfg.path)] = cfg.raw
    elif cfg.exists:
        files[os.path.basename(cfg.path)] = ("unread: %s" % "; ".join(cfg.errors[:1])).encode()
    for n in store.notes:
        if n.text is not None:
            files[n.rel] = n.text.encode("utf-8")
            continue
        try:
            data, _ = read_bounded(n.path, READ_MAX)
        except OSError as exc:
            data = ("unreadable: %s" % (exc.strerror or exc)).encode()
        files[n.rel] = data if len(data) <= READ_MAX else b"past the read limit"
    return files


def digest_of(store: Store, target: Target, caps: Caps, window: Window) -> str:
    h = hashlib.sha256()
    h.update(repr(sorted(caps.as_dict().items())).encode())
    h.update(repr(window).encode())
    h.update(("target %d %d\n" % (target.lines, target.bytes)).encode())
    for rel, data in sorted(store_files(store).items()):
        h.update(rel.encode("utf-8", "surrogateescape") + b"\0" + sha256(data).encode() + b"\n")
    return "sha256:" + h.hexdigest()


class _Recount(Exception):
    pass


class Planner:
    def __init__(self, store: Store, target: Target, window: Window, caps: Caps, running: bool = True) -> None:
        assert store.index_raw is not None
        self.store = store
        self.window = window
        self.plan = Plan(store, target, window, caps)
        self.work = Work(store, store.index_raw)
        if running:
            self.work.start_count(window)
        self.slugs = slug_map(store)
        self.current = Measure(store.index_raw, window)
        self.plan.before = self.current
        self.taken = set(store.by_rel)  # rels in use: an archive name must be free
        self.touchable = {n.rel for n in store.notes if n.text is not None and n.real == n.path and not n.archived}
        # the [[link]] graph among live notes, by rel
        self.out_links: dict[str, set[str]] = {}
        self.in_links: dict[str, set[str]] = {}
        for n in store.live:
            targets: set[str] = set()
            for name, _ in n.link_list():
                for hit in self.slugs.get(link_key(name), ()):
                    if hit is not n:
                        targets.add(hit.rel)
            self.out_links[n.rel] = targets
            for t in targets:
                self.in_links.setdefault(t, set()).add(n.rel)

    # each step measures the index after it and stops the plan once the target is met
    def done(self) -> bool:
        return self.plan.target.met(self.current)

    def record(self, op: Operation) -> None:
        m = self.work.measure(self.window)
        op.effect = {"lines": m.lines - self.current.lines, "bytes": m.bytes - self.current.bytes,
                     "units": m.units - self.current.units}
        self.current = m
        self.plan.operations.append(op)

    def run(self) -> Plan:
        for step in (self.pointerify, self.drop_duplicates, self.drop_dead, self.merge_identical,
                     self.archive_cold, self.group):
            if self.done():
                break
            step()
        exact = Measure(self.work.index_bytes(), self.window)
        if exact != self.current:
            raise _Recount()  # the running count went wrong: make_plan plans again, counting whole
        self.plan.after = exact
        self.propose()
        if not self.done():
            self.decide()
        self.plan.changes = self.changes()
        check_invariants(self.plan, self.work)
        return self.plan

    # 1
    def pointerify(self) -> None:
        w = self.work
        for i, ln in w.live_lines():
            if self.done():
                return
            if ln.kind != "pointer" or len(ln.text) <= POINTER_MAX:
                continue
            p = ln.pointers[0]
            if not (p.exists and p.is_file and not p.escapes and p.rel in self.touchable):
                continue
            m = ln.matches[0]
            label, target_src = m.group(1), ln.text[m.start(2):m.end(2)]
            rest = ln.text[m.end():]
            marker = LIST_MARKER_RE.match(ln.text)
            assert marker is not None
            cut_label = label if len(label) <= TITLE_MAX else clip(label, TITLE_MAX)
            body = rest.strip().lstrip(SEP_CHARS).strip()
            hook = hook_of(body)
            new = "%s%s [%s](%s)" % (marker.group(1), marker.group(2), cut_label, target_src)
            if hook:
                new += " \u2014 " + hook
            if len(new) >= len(ln.text):
                continue
            kept = (label + ". " if cut_label != label else "") + body
            appended = w.keep_text(p.rel, kept)
            old_len = len(ln.text)
            w.set_text(i, new)
            op = Operation(POINTERIFY, [self.store.index_name, p.rel], i + 1,
                           "the line is %s characters (over %d): cut to its title and hook; %s"
                           % (_n(old_len), POINTER_MAX,
                              "%s characters of its text appended to %s under %r" % (_n(appended), p.rel, FROM_INDEX)
                              if appended else "%s already holds its text" % p.rel))
            self.record(op)

    # 2
    def drop_duplicates(self) -> None:
        w = self.work
        first_seen: dict[str, int] = {}
        for i, ln in w.live_lines():
            if self.done():
                return
            if ln.kind != "pointer":
                for p in ln.pointers:
                    first_seen.setdefault(p.rel, i)
                continue
            p = ln.pointers[0]
            if not (p.exists and not p.escapes and p.rel):
                continue
            if p.rel not in first_seen:
                first_seen[p.rel] = i
                continue
            kept_line = w.lines[first_seen[p.rel]]
            extra = leftover(ln, [kept_line.text if kept_line is not None else "", w.texts.get(p.rel, "")])
            if extra and p.rel not in self.touchable:
                continue  # its words would be lost and the note cannot take them
            appended = w.keep_text(p.rel, extra) if extra else 0
            w.drop(i)
            self.record(Operation(DROP_DUPLICATE, [self.store.index_name, p.rel], i + 1,
                                  "%s is already pointed to on line %d%s"
                                  % (p.rel, first_seen[p.rel] + 1,
                                     "; %s characters of this line's text appended to the note" % _n(appended)
                                     if appended else "")))

    def drop_dead(self) -> None:
        w = self.work
        for i, ln in w.live_lines():
            if self.done():
                return
            if ln.kind != "pointer":
                continue
            p = ln.pointers[0]
            if p.exists or p.escapes or not _missing(p.path):
                continue
            w.drop(i)
            self.record(Operation(DROP_DEAD, [self.store.index_name], i + 1,
                                  "%s does not exist; the dropped line was %r (the journal keeps the index "
                                  "as it was, `engramory undo` brings it back)" % (p.target, redact(ln.text.strip())[:200])))

    # 3
    def merge_identical(self) -> None:
        for group in self._identical_groups():
            keep = group[-1]
            for old in group[:-1]:
                if self.done():
                    return
                lines = self._mergeable(old, keep)
                if lines is not None:
                    self._merge(old, keep, *lines)

    def _identical_groups(self) -> list[list[Note]]:
        """Touchable live notes sharing one normalized body, two or more to a group, each group
        oldest first (the newest stays), groups in the order of their first path."""
        groups: dict[str, list[Note]] = {}
        for n in self.store.live:
            if n.rel not in self.touchable or n.fm is None:
                continue
            key = normalized_body(n.body)
            if len(WORD_RE.findall(key)) < 1:
                continue
            groups.setdefault(key, []).append(n)
        out = []
        for key in sorted(groups, key=lambda k: min(n.rel for n in groups[k])):
            group = groups[key]
            if len(group) < 2:
                continue
            group.sort(key=lambda n: (note_date(n) or "", n.rel))
            out.append(group)
        return out

    def _mergeable(self, old: Note, keep: Note) -> tuple[list[int], list[int]] | None:
        """(the index lines of `old` to drop, those of `keep`) when `old` can merge into `keep`."""
        w = self.work
        if old.rel in w.moves or keep.rel in w.moves:
            return None
        drop, other = w.pointer_lines_of(old.rel)
        keep_lines, _ = w.pointer_lines_of(keep.rel)
        if other or not drop or not keep_lines:
            return None
        if len(self.slugs.get(keep.slug.lower(), ())) != 1:
            return None  # the slug links would name is ambiguous
        if is_pinned(old) and not is_pinned(keep):
            return None  # a pinned note never moves for an unpinned copy
        return drop, keep_lines

    def _merge(self, old: Note, keep: Note, drop: list[int], keep_lines: list[int]) -> None:
        w = self.work
        for i in drop:
            ln = w.lines[i]
            assert ln is not None
            kept_lines = [w.lines[k].text for k in keep_lines if w.lines[k] is not None]  # type: ignore[union-attr]
            extra = leftover(ln, kept_lines + [w.texts.get(keep.rel, "")])
            if extra:
                w.keep_text(keep.rel, extra)
            w.drop(i)
        relinked = self.repoint(old, keep)
        w.moves[old.rel] = self.archive_path(old.rel)
        self.after_move(old.rel)
        self.record(Operation(MERGE_IDENTICAL, [old.rel, keep.rel, w.moves[old.rel]], drop[0] + 1,
                              "%s has the same body as %s and is older (%s vs %s): it moves to %s, its "
                              "index line is dropped%s"
                              % (old.rel, keep.rel, note_date(old) or "no date", note_date(keep) or "no date",
                                 w.moves[old.rel],
                                 ", %d [[link]]%s repointed" % (relinked, "" if relinked == 1 else "s")
                                 if relinked else "")))

    def repoint(self, old: Note, keep: Note) -> int:
        keys = {old.slug.lower()}
        if old.name:
            keys.add(old.name.strip().lower())
        count = 0
        for rel in sorted(self.in_links.get(old.rel, ())):
            if rel not in self.touchable or rel in self.work.moves:
                continue
            text = self.work.texts[rel]

            def swap(m: re.Match[str]) -> str:
                nonlocal count
                if link_key(m.group(1)) in keys and self.slugs.get(link_key(m.group(1)), [None])[0] is old:
                    count += 1
                    whole = m.group(0)
                    return whole.replace(m.group(1), keep.slug, 1)
                return m.group(0)

            self.work.texts[rel] = WIKI_RE.sub(swap, text)
            self.out_links[rel].discard(old.rel)
            self.out_links[rel].add(keep.rel)
            self.in_links.setdefault(keep.rel, set()).add(rel)
        self.work.repointed[old.rel] = keep.rel
        self.in_links[old.rel] = set()
        return count

    def archive_path(self, rel: str) -> str:
        """archive/<rel>, or archive/<stem>-2.md, -3, ... when that name is taken."""
        taken = self.taken
        base = ARCHIVE + "/" + rel
        cand, k = base, 1
        while cand in taken or os.path.lexists(os.path.join(self.store.root, cand)):
            k += 1
            cand = "%s-%d.md" % (base[:-3], k)
        taken.add(cand)
        return cand

    def after_move(self, rel: str) -> None:
        for t in self.out_links.get(rel, ()):
            self.in_links.get(t, set()).discard(rel)

    # 4
    def orphans_if_moved(self, rel: str) -> list[str]:
        """Notes that only `rel` makes reachable (linked by it alone, and not indexed)."""
        out = []
        for t in sorted(self.out_links.get(rel, ())):
            if t in self.work.moves:
                continue
            if self.work.pointer_lines_of(t)[0] or self.work.pointer_lines_of(t)[1]:
                continue
            if self.in_links.get(t, set()) - {rel}:
                continue
            out.append(t)
        return out

    def cold_ranking(self) -> list[tuple[int, int, str]]:
        dates = [d for d in (note_date(n) for n in self.store.live) if d]
        newest = datetime.date.fromisoformat(max(dates)) if dates else None
        first_line: dict[str, int] = {}
        for i, ln in self.work.live_lines():
            for p in ln.pointers:
                first_line.setdefault(p.rel, i)
        ranked = []
        for n in self.store.live:
            if n.rel not in first_line:
                continue
            d = note_date(n)
            age = (newest - datetime.date.fromisoformat(d)).days if d and newest else 0
            score = age + TYPE_BONUS.get(n.type or "", 0)
            ranked.append((-score, first_line[n.rel], n.rel))
        ranked.sort()
        return ranked

    def archive_cold(self) -> None:
        w = self.work
        self.skipped: list[Item] = []
        for neg, _, rel in self.cold_ranking():
            if self.done():
                return
            note = self.store.by_rel[rel]
            if rel in w.moves:
                continue
            if is_pinned(note):
                self.skipped.append(Item("pinned", [rel], "%s is pinned: never archived automatically" % rel))
                continue
            if rel not in self.touchable:
                continue
            drop, other = w.pointer_lines_of(rel)
            if other or not drop:
                continue
            orphans = self.orphans_if_moved(rel)
            if orphans:
                self.skipped.append(Item("keeps-others-reachable", [rel] + orphans,
                                         "archiving %s would leave %s reachable from nowhere" % (rel, ", ".join(orphans))))
                continue
            for i in drop:
                w.drop(i)
            w.moves[rel] = self.archive_path(rel)
            self.after_move(rel)
            self.record(Operation(ARCHIVE_COLD, [rel, w.moves[rel]], drop[0] + 1,
                                  "cold score %d (%s note, updated %s): moves to %s and its index line%s dropped"
                                  % (-neg, note.type or "untyped", note_date(note) or "never dated", w.moves[rel],
                                     " is" if len(drop) == 1 else "s are")))

    # 5
    def group(self) -> None:
        w = self.work
        lines = w.live_lines()
        sections = sections_of([ln for _, ln in lines], self.store)
        if sections is None:
            return  # prose or another heading among the pointers: grouping could move meaning
        out = grouped(*sections)
        eol = w.eol
        text = "".join(s + eol for s in out)
        data = (("\ufeff" if w.bom else "") + text).encode("utf-8")
        m = Measure(data, self.window)
        c = self.current
        if m.lines > c.lines or m.bytes > c.bytes or (m.lines == c.lines and m.bytes == c.bytes):
            return  # grouping is planned only when it makes the index smaller
        pointer_pool = {ln.text: ln for _, ln in lines if ln.kind == "pointer"}
        new_lines: list[Line | None] = []
        for s in out:
            src = pointer_pool.get(s)
            ln = Line(s, eol)
            if src is not None:
                ln.kind, ln.pointers, ln.refs, ln.matches = "pointer", src.pointers, src.refs, src.matches
            new_lines.append(ln)
        w.replace_all(new_lines)
        self.record(Operation(GROUP, [self.store.index_name], 1,
                              "pointer lines gathered under one heading per type; empty or repeated headings "
                              "dropped; no pointer line changed"))

    # proposals and decisions
    def propose(self) -> None:
        # lazy: the stopword list lives in doctor.notes, a higher module that loads the whole doctor
        from engramory.doctor.notes import STOPWORDS

        by_desc: dict[str, list[Note]] = {}
        by_body: dict[str, list[Note]] = {}
        for n in self.store.live:
            if n.type not in TYPES or n.text is None or n.rel in self.work.moves:
                continue
            if n.description:
                words = {w for w in WORD_RE.findall(n.description.lower()) if w not in STOPWORDS}
                if len(words) >= 3:
                    by_desc.setdefault(n.type + ":" + " ".join(sorted(words)), []).append(n)
            bw = n.body.lower().split()
            if len(bw) >= 8:
                by_body.setdefault(n.type + ":" + " ".join(bw), []).append(n)
        seen: set[tuple[str, str]] = set()
        for why, buckets in (("the same description words", by_desc), ("the same body text up to case and spacing", by_body)):
            for key in sorted(buckets):
                group = buckets[key]
                for other in group[1:]:
                    pair = (group[0].rel, other.rel)
                    if pair in seen:
                        continue
                    seen.add(pair)
                    self.plan.proposals.append(Item(PROPOSE_MERGE, list(pair),
                                                    "%s notes with %s: if they hold one fact, merge them by hand "
                                                    "(never merged automatically)" % (other.type, why)))

    def decide(self) -> None:
        p = self.plan
        c = self.current
        p.decisions.append(Item("over-target", [self.store.index_name],
                                "after every safe operation the index is %s lines / %s %s, over the target "
                                "of %s lines / %s %s: ask the user which memories to retire"
                                % (_n(c.lines), _n(c.units), p.unit, _n(p.target.lines), _n(p.target.bytes), p.unit)))
        p.decisions.extend(getattr(self, "skipped", []))
        for i, ln in self.work.live_lines():
            if ln.kind == "other" and len(ln.text) > POINTER_MAX:
                p.decisions.append(Item("prose-in-index", [self.store.index_name],
                                        "line %d is %s characters of text that is not one pointer: move it into "
                                        "a note by hand" % (i + 1, _n(len(ln.text)))))
        for item in p.proposals:
            p.decisions.append(item)

    def changes(self) -> list[Change]:
        w = self.work
        out: list[Change] = []
        store = self.store
        assert store.index_raw is not None
        new_index = w.index_bytes()
        if new_index != store.index_raw:
            out.append(Change(store.index_name, "write", store.index_raw, new_index))
        for n in store.notes:
            if n.text is None:
                continue
            before = n.text.encode("utf-8")
            after = w.texts[n.rel].encode("utf-8")
            if n.rel in w.moves:
                out.append(Change(n.rel, "move", before, after, w.moves[n.rel]))
            elif after != before:
                out.append(Change(n.rel, "write", before, after))
        return out


def _missing(path: str) -> bool:
    """Whether nothing is at `path`: a target that cannot be looked at (a folder without
    permission, a symlink loop) may hold a note, so its pointer is not dead."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return True
    except (OSError, ValueError):
        return False
    return False


def make_plan(store: Store, target: Target, window: Window, caps: Caps) -> Plan:
    """The plan for `store` under the host's `window` and the caps in force (both as the
    guard has them: `guard.caps_for(index, env, window)`)."""
    try:
        plan = Planner(store, target, window, caps, running=True).run()
    except _Recount:
        plan = Planner(store, target, window, caps, running=False).run()
        plan.recounted = True
    plan.digest = digest_of(store, target, caps, window)
    return plan
