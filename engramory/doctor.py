"""`engramory doctor [ROOT]`: audit a whole memory store and report every problem.

The store is read once (`engramory.store`), each check is a function from the store to
findings, and a finding is data: code, severity, path, line, message. Renderers turn the
sorted findings into text (`path:line: severity code: message`, `path: ...` for a finding on a
whole file, then a summary) or JSON
(`schemas/doctor-report.schema.json`). The doctor never writes to the store.

Exit status: 0 no errors, 1 errors (with --strict: errors or warnings), 2 usage error or a
root that cannot be read.

Which schema a note is held to is decided per note by its form (`store.form_of`): a note
with a top-level `type`, `created` or `updated` follows this protocol and must carry name,
description, type, created and updated; any other note is read as Claude Code's own auto
memory writes it (name, description, `metadata.type`, no dates). Claude Code names its
files `user_role.md` while `name:` is a kebab slug, so the name/file check and the
Why/How labels (an error for protocol notes) are not errors for that form.
"""

from __future__ import annotations

import gc
import os
import sys

from engramory import automemory
from engramory import store as store_mod
from engramory.automemory import sanitize_project_path
from engramory.cliutil import Parser
from engramory.doctor_codes import (
    CODES,
    ERROR,
    FUTURE_SLACK_DAYS,
    INDEX_LINE_MAX,
    INFO,
    MAX_PER_NOTE,
    NO_SCHEMA_CODES,
    OUTPUT_CAP,
    REPORT_VERSION,
    SCHEMA_CODES,
    SEVERITIES,
    WARNING,
    Context,
    Finding,
    _n,
    shown,
)
from engramory.doctor_index import (
    check_config,
    check_config_window,
    check_git,
    check_graph,
    check_index,
    check_pointers,
    check_slugs,
    check_walk,
    git_exposure,
    host_window,
)
from engramory.doctor_notes import (
    STOPWORDS,
    check_descriptions,
    check_duplicates,
    check_files,
    check_frontmatter,
    check_labels_and_dates,
    check_recall,
    frontmatter_findings,
    has_label,
    labels_and_dates,
    relative_dates,
)
from engramory.doctor_scan import check_content, entropy, looks_random, mask, scan_note, scan_notes
from engramory.excerpt import emit, emit_json
from engramory.store import Note, Store
from engramory.sync.checks import check_sync

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any, Callable

# The checks live in doctor_index (the store, its index and pointers, the graph), doctor_notes
# (one note at a time, near duplicates, recall) and doctor_scan (secrets, injection, hidden
# text); the table of codes and the Finding type in doctor_codes. All of it is importable here.
__all__ = [
    "CHECKS", "CODES", "Capped", "audit_capped", "ERROR", "FUTURE_SLACK_DAYS", "INDEX_LINE_MAX", "INFO", "MAX_PER_NOTE", "NO_SCHEMA_CODES",
    "OUTPUT_CAP", "REPORT_VERSION", "SCHEMA_CODES", "SEVERITIES", "STOPWORDS", "WARNING", "WARNINGS_ONLY",
    "Context", "Finding", "Note", "Store", "audit", "check_config", "check_config_window", "check_content", "check_descriptions",
    "check_duplicates", "check_files", "check_frontmatter", "check_git", "check_graph", "check_index",
    "check_labels_and_dates", "check_pointers", "check_recall", "check_slugs", "check_walk",
    "claude_memory_dir", "counts_of", "display_path", "entropy", "exit_code", "frontmatter_findings",
    "git_exposure", "has_label", "host_window", "labels_and_dates", "list_checks", "looks_random", "main",
    "mask", "quick_errors", "relative_dates", "render_text", "report", "run_checks", "sanitize_project_path",
    "scan_note", "scan_notes", "shown",
]

CHECKS: tuple[Callable[[Store, Context], Iterable[Finding]], ...] = (
    check_config, check_config_window, check_git, check_walk, check_index, check_pointers, check_graph, check_slugs,
    check_files, check_frontmatter, check_labels_and_dates, check_content, check_duplicates,
    check_descriptions, check_recall, check_sync,
)


# checks that never find an error: the quick (SessionStart) audit, which counts errors, skips them
WARNINGS_ONLY = (check_duplicates, check_descriptions, check_recall)


class _ContentBatch:
    """Notes whose content is scanned together once their text adds up to BATCH_CHARS: the
    patterns stay few C-speed passes over joined text, and memory stays one batch."""

    BATCH_CHARS = 1 << 18

    def __init__(self, out: list[Finding] | Capped, skip: Iterable[str] = ()) -> None:
        self.out = out
        self.skip = frozenset(skip)
        self.notes: list[Note] = []
        self.chars = 0

    BATCH_NOTES = 4096  # and at most this many notes: 200,000 tiny notes are not one batch

    def add(self, n: Note) -> None:
        if not n.text:
            return  # nothing to scan in an empty note
        copy = Note(n.path, n.rel, n.archived)
        copy.text = n.text
        self.notes.append(copy)
        self.chars += len(n.text)
        if self.chars >= self.BATCH_CHARS or len(self.notes) >= self.BATCH_NOTES:
            self.flush()

    def flush(self) -> None:
        if self.notes:
            self.out.extend(f for f in scan_notes(self.notes) if f.code not in self.skip)
        self.notes = []
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
    200,000 broken notes then costs a page of findings, not a million objects."""

    __slots__ = ("cap", "kept", "per_code", "counts", "error_codes")

    def __init__(self, cap: int = OUTPUT_CAP) -> None:
        self.cap = cap
        self.kept: dict[str, list[Finding]] = {}
        self.per_code: dict[str, int] = {}
        self.counts = {s: 0 for s in SEVERITIES}
        self.error_codes: set[str] = set()

    @classmethod
    def of(cls, findings: Iterable[Finding], cap: int = OUTPUT_CAP) -> Capped:
        out = cls(cap)
        out.extend(findings)
        return out

    def append(self, f: Finding) -> None:
        self.counts[f.severity] += 1
        self.per_code[f.code] = self.per_code.get(f.code, 0) + 1
        if f.severity == ERROR:
            self.error_codes.add(f.code)
        kept = self.kept.get(f.code)
        if kept is None:
            kept = self.kept[f.code] = []
        kept.append(f)
        if len(kept) >= 8 * self.cap + 8:
            kept.sort(key=Finding.sort_key)
            del kept[self.cap:]

    def extend(self, findings: Iterable[Finding]) -> None:
        for f in findings:
            self.append(f)

    def shown(self) -> list[Finding]:
        """The findings the text output prints, in sort order."""
        out = [f for kept in self.kept.values() for f in sorted(kept, key=Finding.sort_key)[:self.cap]]
        out.sort(key=Finding.sort_key)
        return out


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
                found.extend(f for f in frontmatter_findings(n, today) if f.code not in skipped)
                if not n.archived:
                    found.extend(f for f in labels_and_dates(n) if f.code not in skipped)
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


# -- output --------------------------------------------------------------------------------------

def counts_of(findings: Sequence[Finding] | Capped) -> dict[str, int]:
    if isinstance(findings, Capped):
        return dict(findings.counts)
    counts = {s: 0 for s in SEVERITIES}
    for f in findings:
        counts[f.severity] += 1
    return counts


def exit_code(findings: Sequence[Finding] | Capped, strict: bool = False) -> int:
    counts = counts_of(findings)
    return 1 if counts[ERROR] or (strict and counts[WARNING]) else 0


def display_path(root: str, rel: str) -> str:
    if rel == ".":
        return shown(root)
    if root in (".", "./", ""):
        return shown(rel)
    return shown(os.path.join(root, rel))


def render_text(findings: Sequence[Finding] | Capped, root: str, st: Store, cap: int = OUTPUT_CAP) -> str:
    """One line per finding, at most `cap` per code (then one "and N more" line, after the
    rest): a store of 200,000 broken notes still prints a page, not 68 MB."""
    kept = findings if isinstance(findings, Capped) else Capped.of(findings, cap)
    shown_now = kept.shown()
    # path:line: for a finding on a line; path: alone for one on the whole file (line 0).
    out = ["%s%s: %s %s: %s" % (display_path(root, f.path), ":%d" % f.line if f.line else "", f.severity, f.code, f.message)
           for f in shown_now]
    for code in dict.fromkeys(f.code for f in shown_now):
        n = kept.per_code[code]
        if n > kept.cap:
            out.append("... and %s more %s finding%s (%s in all; `--json` lists every one)"
                       % (_n(n - kept.cap), code, "" if n - kept.cap == 1 else "s", _n(n)))
    c = counts_of(findings)
    live = len(st.live)
    out.append("%d error%s, %d warning%s, %d info; checked %d live note%s, %d archived, %d index pointer%s in %s" % (
        c[ERROR], "" if c[ERROR] == 1 else "s", c[WARNING], "" if c[WARNING] == 1 else "s", c[INFO],
        live, "" if live == 1 else "s", len(st.notes) - live, len(st.pointers),
        "" if len(st.pointers) == 1 else "s", shown(root)))
    return "\n".join(out) + "\n"


def report(findings: Sequence[Finding], st: Store, chosen: str, strict: bool) -> dict[str, Any]:
    live = len(st.live)
    return {
        "version": REPORT_VERSION,
        "root": os.path.abspath(st.root),
        "index": st.index_name,
        "chosen_by": chosen,
        "strict": strict,
        "exit": exit_code(findings, strict),
        "counts": counts_of(findings),
        "notes": {"live": live, "archived": len(st.notes) - live, "pointers": len(st.pointers)},
        "findings": [f.as_dict() for f in findings],
    }


def list_checks() -> str:
    width = max(len(c) for c in CODES)
    rows = ["%s  %-7s  %s  %s" % ("code".ljust(width), "level", "archive", "what it finds")]
    for code, (sev, archive, what) in CODES.items():
        rows.append("%s  %-7s  %-7s  %s" % (code.ljust(width), sev, "yes" if archive else "no", what))
    return "\n".join(rows) + "\n"


def _add_verify(root: str, findings: list[Finding] | Capped, skip: Sequence[str]) -> None:
    """`--verify`: the findings of engramory.verify.doctor_check, in sort order."""
    from engramory.verify import doctor_check

    extra, said = doctor_check.findings(root, Context().today, skip=skip)
    if said:
        sys.stderr.write("engramory doctor: %s\n" % said)
    findings.extend(extra)
    if isinstance(findings, list):
        findings.sort(key=Finding.sort_key)


def main(argv: Sequence[str] | None = None) -> int:
    parser = Parser(
        prog="engramory doctor",
        usage_exit=2,
        description="Audit a whole memory store: the index (caps, pointers), every note's frontmatter and "
        "body, links, orphans, duplicates, secrets (masked) and prompt injection. Report only: the "
        "doctor never changes a file.",
        epilog="Output: one line per finding, `path:line: severity code: message` (`path: ...` when it "
        "concerns the whole file or folder; line 0 in --json), sorted, then a summary line. `--list-checks` shows every code. "
        "With no ROOT the doctor checks this project's Claude Code auto-memory folder "
        "($CLAUDE_CONFIG_DIR or ~/.claude, then projects/<project path>/memory) and says which. "
        "Exit status: 0 no errors, 1 errors (with --strict, warnings too), 2 usage error or a "
        "ROOT that cannot be read.",
    )
    parser.add_argument("root", nargs="?", metavar="ROOT", help="the folder holding MEMORY.md")
    parser.add_argument("--json", action="store_true", help="print one JSON report (schemas/doctor-report.schema.json)")
    parser.add_argument("--strict", action="store_true", help="exit 1 on warnings as well as errors")
    parser.add_argument("--skip", action="append", default=[], metavar="CODE",
                        help="leave out findings with this code (repeatable), e.g. --skip store-in-git")
    parser.add_argument("--no-schema", action="store_true",
                        help="structure only, for adopting an existing store: skip the frontmatter and label "
                        "checks (%s)" % ", ".join(sorted(NO_SCHEMA_CODES)))
    parser.add_argument("--all", action="store_true",
                        help="audit every store Claude Code knows on this machine (each project's auto "
                        "memory, the autoMemoryDirectory of local then user settings, subagent agent-memory "
                        "folders): one summary line each; a project whose memory lies in two folders (another "
                        "spelling of its path, a move, a rename) gets store-split")
    parser.add_argument("--verify", action="store_true",
                        help="also check what the notes name in the code against the repository the store "
                        "describes (runs git; ref-stale, ref-moved, verified-old): what `engramory verify` reports")
    parser.add_argument("--list-checks", action="store_true", help="print every check code and exit")
    args = parser.parse_args(argv)
    if args.list_checks:
        sys.stdout.write(list_checks())
        return 0
    unknown = [c for c in args.skip if c not in CODES]
    if unknown:
        parser.error("unknown check code %s for --skip (see --list-checks)" % ", ".join(repr(c[:40]) for c in unknown))
    if args.no_schema:
        args.skip = list(args.skip) + sorted(NO_SCHEMA_CODES)
    if args.all:
        if args.root is not None:
            parser.error("--all audits every known store: pass no ROOT with it")
        if args.verify:
            parser.error("--verify checks one store against its repository: pass no --all with it")
        from engramory import stores

        return int(stores.audit_all(args.skip, args.json, args.strict))
    chosen = "argument"
    root = args.root
    if root is None:
        try:
            root = claude_memory_dir()
        except ValueError as exc:
            emit("engramory doctor: cannot tell this project's memory folder: %s; pass ROOT\n" % exc, sys.stderr)
            return 2
        chosen = "claude-auto-memory"
        emit("engramory doctor: no ROOT given; checking this project's Claude Code auto memory: %s\n" % root, sys.stderr)
    try:
        st, findings = audit(root, Context(), args.skip) if args.json else audit_capped(root, Context(), args.skip)
    except OSError as exc:
        reason = exc.strerror or exc.__class__.__name__
        hint = "pass the folder that holds MEMORY.md" if chosen == "argument" else (
            "Claude Code has not written memory for this project yet; pass ROOT to check another folder")
        emit("engramory doctor: cannot read the store folder %s: %s; %s\n" % (root, reason, hint), sys.stderr)
        return 2
    if args.verify:
        _add_verify(root, findings, args.skip)
    for note in st.cap_notes:
        if note.startswith("the store config"):
            continue  # reported as config-invalid findings, with line numbers
        emit("engramory doctor: note: %s\n" % note, sys.stderr)
    if isinstance(findings, list):
        emit_json(report(findings, st, chosen, args.strict), indent=2)
    else:
        emit(render_text(findings, root, st))
    return exit_code(findings, args.strict)


if __name__ == "__main__":
    raise SystemExit(main())
