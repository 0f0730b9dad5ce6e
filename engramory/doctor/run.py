"""Every check of the doctor over one store, read once: `audit` (every finding, sorted),
`audit_capped` (the first findings of each code and the counts, for the text output) and
`quick_errors` (the SessionStart hook's error count within a time budget).

The store is read once (`engramory.store.reader`), streaming: each note's own checks run as it
is read and its text is then dropped. Each check is a function from the store to findings,
and a finding is data: code, severity, path, line, message (engramory.doctor.codes); the
renderers are in engramory.doctor.report. The doctor never writes to the store.

Which schema a note is held to is decided per note by its form (`store.form_of`): a note
with a top-level `type`, `created` or `updated` follows this protocol and must carry name,
description, type, created and updated; any other note is read as Claude Code's own auto
memory writes it (name, description, `metadata.type`, no dates). Claude Code names its
files `user_role.md` while `name:` is a kebab slug, so the name/file check and the
Why/How labels (an error for protocol notes) are not errors for that form.
"""

from __future__ import annotations

import gc
import operator
import os

from engramory import automemory
from engramory.doctor.codes import (
    ERROR,
    OUTPUT_CAP,
    SEVERITIES,
    Context,
    Finding,
)
from engramory.doctor.index import (
    check_config,
    check_config_window,
    check_git,
    check_graph,
    check_index,
    check_pointers,
    check_slugs,
    check_walk,
)
from engramory.doctor.notes import (
    check_duplicates_and_descriptions,
    check_files,
    check_frontmatter,
    check_labels_and_dates,
    check_recall,
    frontmatter_findings,
    labels_and_dates,
)
from engramory.doctor.scan import check_content, scan_texts
from engramory.store import reader as store_mod
from engramory.store.reader import Note, Store
from engramory.sync.checks import check_sync

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Callable

# The checks live in doctor.index (the store, its index and pointers, the graph), doctor.notes
# (one note at a time, near duplicates, recall), doctor.scan (secrets, injection, hidden text)
# and sync.checks (a store shared through git); the table of codes and the Finding type in
# doctor.codes.
CHECKS: tuple[Callable[[Store, Context], Iterable[Finding]], ...] = (
    check_config, check_config_window, check_git, check_walk, check_index, check_pointers, check_graph, check_slugs,
    check_files, check_frontmatter, check_labels_and_dates, check_content, check_duplicates_and_descriptions,
    check_recall, check_sync,
)


# checks that never find an error: the quick (SessionStart) audit, which counts errors, skips them
WARNINGS_ONLY = (check_duplicates_and_descriptions, check_recall)


class _ContentBatch:
    """Notes whose content is scanned together once their text adds up to BATCH_CHARS: the
    patterns stay few C-speed passes over joined text, and memory stays one batch. It keeps
    each note's path and text, nothing else (the note itself drops its text after the visit)."""

    BATCH_CHARS = 1 << 18
    BATCH_NOTES = 4096  # and at most this many notes: 200,000 tiny notes are not one batch

    def __init__(self, out: list[Finding] | Capped, skip: Iterable[str] = ()) -> None:
        self.out = out
        self.skip = frozenset(skip)
        self.rels: list[str] = []
        self.texts: list[str] = []
        self.chars = 0

    def add(self, n: Note) -> None:
        text = n.text
        if not text:
            return  # nothing to scan in an empty note
        self.rels.append(n.rel)
        self.texts.append(text)
        self.chars += len(text)
        if self.chars >= self.BATCH_CHARS or len(self.texts) >= self.BATCH_NOTES:
            self.flush()

    def flush(self) -> None:
        if self.texts:
            self.out.extend(f for f in scan_texts(self.rels, self.texts) if f.code not in self.skip)
        self.rels = []
        self.texts = []
        self.chars = 0


def run_checks(st: Store, ctx: Context | None = None, skip: Iterable[str] = (), sort: bool = True) -> list[Finding]:
    """Every finding for the store, sorted; codes in `skip` are left out."""
    ctx = ctx or Context()
    skipped = set(skip)
    if "store-in-git" in skipped:
        ctx = Context(ctx.today, git=False, quick=ctx.quick)
    checks = [c for c in CHECKS if not ctx.quick or c not in WARNINGS_ONLY]
    out = [f for check in checks for f in check(st, ctx) if f.code not in skipped]
    if sort:
        out.sort(key=Finding.sort_key)
    return out


class Capped:
    """What the text output needs, without holding every finding: per code the first `cap`
    findings in sort order, and how many there were of each code and severity. A store of
    200,000 broken notes then costs a page of findings, not a million objects. Each finding is
    kept with its sort key, made once: trimming a code's list every 8 x cap findings re-sorts
    the ones kept, and on a store of 10,000 orphans remaking their keys cost more than the
    findings themselves."""

    __slots__ = ("cap", "kept", "per_code", "counts", "error_codes")

    def __init__(self, cap: int = OUTPUT_CAP) -> None:
        self.cap = cap
        self.kept: dict[str, list[tuple[tuple[str, int, int, str, str], Finding]]] = {}
        self.per_code: dict[str, int] = {}
        self.counts = {s: 0 for s in SEVERITIES}
        self.error_codes: set[str] = set()

    @classmethod
    def of(cls, findings: Iterable[Finding], cap: int = OUTPUT_CAP) -> Capped:
        out = cls(cap)
        out.extend(findings)
        return out

    def append(self, f: Finding) -> None:
        severity, code = f.severity, f.code
        self.counts[severity] += 1
        per_code = self.per_code
        per_code[code] = per_code.get(code, 0) + 1
        if severity == ERROR:
            self.error_codes.add(code)
        kept = self.kept.get(code)
        if kept is None:
            kept = self.kept[code] = []
        kept.append((f.sort_key(), f))
        if len(kept) >= 8 * self.cap + 8:
            kept.sort(key=_first)  # stable, as sorting the findings by their keys was
            del kept[self.cap:]

    def extend(self, findings: Iterable[Finding]) -> None:
        for f in findings:
            self.append(f)

    def shown(self) -> list[Finding]:
        """The findings the text output prints, in sort order."""
        out = [pair for kept in self.kept.values() for pair in sorted(kept, key=_first)[:self.cap]]
        out.sort(key=_first)
        return [f for _, f in out]

_first = operator.itemgetter(0)  # a pair's sort key


def _audit(root: str, ctx: Context | None, skip: Iterable[str], env: Mapping[str, str] | None,
           deadline: float | None, found: list[Finding] | Capped) -> Store:
    ctx = ctx or Context()
    enabled = gc.isenabled()
    gc.disable()
    try:
        skipped = set(skip)
        batch = _ContentBatch(found, skipped)
        today = ctx.today

        def visit(n: Note) -> None:
            if n.fm is not None:
                some = frontmatter_findings(n, today)
                if not n.archived:
                    some += labels_and_dates(n)
                if some:  # most notes have nothing to say: no generator made for them
                    found.extend(f for f in some if f.code not in skipped)
            batch.add(n)

        st = store_mod.load(root, env, visit, deadline)
        batch.flush()
        if "store-in-git" in skipped:
            ctx = Context(ctx.today, git=False, quick=ctx.quick)
        for check in CHECKS:
            if not ctx.quick or check not in WARNINGS_ONLY:
                found.extend(f for f in check(st, ctx) if f.code not in skipped)
        return st
    finally:
        if enabled:
            gc.enable()


def audit(root: str, ctx: Context | None = None, skip: Iterable[str] = (),
          env: Mapping[str, str] | None = None, deadline: float | None = None) -> tuple[Store, list[Finding]]:
    """Read the store at `root`, streaming: each note's own checks run as it is read and its
    text is then dropped, so memory holds findings and a few fields per note, never bodies.
    The cyclic garbage collector is paused meanwhile (the doctor builds many small objects
    that live until it exits). Every finding, sorted. Raises OSError when `root` cannot be
    listed."""
    found: list[Finding] = []
    st = _audit(root, ctx, skip, env, deadline, found)
    found.sort(key=Finding.sort_key)
    return st, found


def audit_capped(root: str, ctx: Context | None = None, skip: Iterable[str] = (),
                 env: Mapping[str, str] | None = None, cap: int = OUTPUT_CAP) -> tuple[Store, Capped]:
    """`audit` for the text output: the findings come out as `Capped` (the first `cap` of each
    code, and the counts), so memory does not grow with the number of findings."""
    found = Capped(cap)
    return _audit(root, ctx, skip, env, None, found), found


def quick_errors(root: str, env: Mapping[str, str] | None = None, budget: float = 0.25,
                 skip: Iterable[str] = ()) -> tuple[int, bool]:
    """(doctor errors, complete) within `budget` seconds: for the SessionStart hook, which
    must answer fast at any store size. `complete` is False when reading stopped at the
    budget (the count then covers the notes read so far)."""
    import time

    st, found = audit(root, Context(git=False, quick=True), skip, env, time.monotonic() + budget)
    return sum(1 for f in found if f.severity == ERROR), not st.stopped


# -- where the store is ------------------------------------------------------------------------

def claude_memory_dir(cwd: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """The current project's Claude Code auto-memory folder (engramory.automemory's rule)."""
    found = automemory.memory_dir(cwd or os.getcwd(), env)
    if found is None:
        raise ValueError("CLAUDE_CODE_PROJECT_DIR_NAME is not a plain folder name")
    return found


