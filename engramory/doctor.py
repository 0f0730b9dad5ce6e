"""`engramory doctor [ROOT]`: audit a whole memory store and report every problem.

The store is read once (`engramory.store`), each check is a function from the store to
findings, and a finding is data: code, severity, path, line, message. Renderers turn the
sorted findings into text (`path:line: severity code: message`, then a summary) or JSON
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

import bisect
import datetime
import functools
import gc
import json
import math
import os
import re
import sys
import unicodedata

from engramory import automemory, config, frontmatter
from engramory import size as size_mod
from engramory import store as store_mod
from engramory.automemory import sanitize_project_path  # noqa: F401 - part of this module's interface
from engramory.cliutil import Parser
from engramory.excerpt import quote
from engramory.size import OVER, WARN, verdict
from engramory.store import ARCHIVE, PROTOCOL, TYPES, Note, Store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping, Sequence
    from typing import Any, Callable

ERROR = "error"
WARNING = "warning"
INFO = "info"
SEVERITIES = (ERROR, WARNING, INFO)
REPORT_VERSION = 1
INDEX_LINE_MAX = 200  # characters; the host's own advice is one index line under ~150-200
FUTURE_SLACK_DAYS = 1  # a date "tomorrow" is a time-zone difference, not a mistake
MAX_PER_NOTE = 10  # findings of one code in one note; past this the note is one big problem

# code -> (severity, applies to archive/ notes, what it means). The one table of checks:
# docs cite it, `--list-checks` prints it, and a test holds every emitted code to it.
CODES: dict[str, tuple[str, bool, str]] = {
    # the store as a whole
    "config-invalid": (ERROR, False, "the store config .engramory.json has unknown keys or invalid values"),
    "config-above-window": (ERROR, False, "a hard cap (.engramory.json or ENGRAMORY_HARD*) is above what the host loads"),
    "store-in-git": (ERROR, False, "the store is inside a git work tree that does not ignore it"),
    "store-split": (WARNING, False, "one project's memory lies in two folders (two spellings of its path); --all only"),
    "dir-unlistable": (ERROR, True, "a folder under ROOT cannot be listed"),
    "not-a-file": (WARNING, True, "a .md entry is not a regular file (FIFO, socket, device) and was not read"),
    "symlink-escape": (ERROR, True, "a note or the index is a symlink that leads outside ROOT; it was not read"),
    # the index
    "index-missing": (ERROR, False, "ROOT has no MEMORY.md index"),
    "index-over-cap": (ERROR, False, "the index is past its hard cap: the host does not load its tail"),
    "index-warn-zone": (WARNING, False, "the index is past its warn cap: compact it soon"),
    "index-long-line": (WARNING, False, "an index line over 200 characters: content leaked out of a note"),
    "index-parse-limit": (WARNING, False, "the index is so far past its caps that only its start was searched for pointers"),
    "index-heading-type": (WARNING, False, "an index line sits under a heading of another type than its note"),
    "pointer-broken": (ERROR, False, "an index pointer leads to no file"),
    "pointer-escapes-root": (ERROR, False, "an index pointer leads outside ROOT (by path or symlink)"),
    "pointer-into-archive": (WARNING, False, "an index pointer leads into archive/"),
    "pointer-duplicate": (WARNING, False, "the same note is pointed to twice"),
    # the graph of notes
    "note-orphan": (ERROR, False, "a note neither indexed nor [[linked]]: recall cannot find it"),
    "note-link-only": (INFO, False, "a note reachable only through [[links]], not from the index"),
    "link-dangling": (INFO, False, "a [[link]] to a note not written yet (allowed)"),
    "slug-duplicate": (ERROR, False, "two notes share a file name or name up to case"),
    # files
    "file-unreadable": (ERROR, True, "a file cannot be read"),
    "file-not-utf8": (ERROR, True, "a file is not valid UTF-8"),
    "note-too-large": (WARNING, False, "a note over the per-note size cap (noteMaxBytes)"),
    # frontmatter
    "fm-missing": (ERROR, True, "no frontmatter block at the top of the note"),
    "fm-unclosed": (ERROR, True, "the frontmatter block is never closed"),
    "fm-malformed": (ERROR, True, "a frontmatter line outside the restricted key: value subset"),
    "fm-duplicate-key": (ERROR, True, "a frontmatter key appears twice"),
    "fm-missing-field": (ERROR, True, "a required frontmatter field is missing"),
    "fm-empty-field": (ERROR, True, "a required frontmatter field is empty"),
    "fm-not-text": (ERROR, True, "a field that must be one line of text is a nested block"),
    "fm-unknown-type": (ERROR, True, "type is not user, feedback, project or reference"),
    "fm-type-conflict": (ERROR, True, "type and metadata.type disagree"),
    "fm-name-mismatch": (ERROR, True, "name differs from the file name (protocol notes)"),
    "fm-bad-date": (ERROR, True, "created/updated is not a real YYYY-MM-DD date"),
    "fm-date-order": (ERROR, True, "updated is before created"),
    "fm-future-date": (WARNING, True, "created/updated lies in the future"),
    "fm-second-block": (WARNING, True, "a second frontmatter block, or one wrapped in a code fence"),
    # the body
    "labels-missing": (ERROR, False, "a feedback/project note without Why: and How to apply: (warning for Claude Code notes)"),
    "relative-date": (WARNING, False, "a project note uses a relative date (yesterday, last week, ...)"),
    "secret": (ERROR, True, "a credential-shaped value (shown masked)"),
    "injection": (WARNING, True, "text that reads as an instruction to ignore rules or send data: read it"),
    "hidden-unicode": (WARNING, True, "invisible or bidirectional characters that can hide text"),
    "near-duplicate": (WARNING, False, "another note of the same type says nearly the same (report only)"),
    # recall: what Claude Code's memory selector reads (filename, type, description)
    "description-weak": (WARNING, False, "a description too empty, generic, short or long for the host's selector to judge relevance from"),
    "description-collision": (WARNING, False, "two notes whose descriptions the host's selector cannot tell apart"),
    "recall-fm-unread": (WARNING, False, "frontmatter that ends past the 30 lines / 65,536 bytes the host's recall scan reads"),
    "recall-unreachable": (WARNING, False, "a note outside the index window and outside the host's 200 newest recall candidates"),
}
# `--no-schema`: adopting an existing store, hold it to structure only (upstream's flag).
NO_SCHEMA_CODES = frozenset([c for c in CODES if c.startswith("fm-")] + ["labels-missing"])
OUTPUT_CAP = 20  # text lines per code; past it one "and N more" line (--json has them all)

# The frontmatter verdicts that schemas/frontmatter.schema.json expresses (tests cross-check).
SCHEMA_CODES = frozenset(["fm-missing-field", "fm-empty-field", "fm-not-text", "fm-unknown-type", "fm-bad-date"])


class Finding:
    __slots__ = ("code", "severity", "path", "line", "message")

    def __init__(self, code: str, path: str, line: int, message: str, severity: str | None = None) -> None:
        self.code = code
        self.severity = severity or CODES[code][0]
        self.path = path
        self.line = line
        self.message = message

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.path, self.line, SEVERITIES.index(self.severity), self.code, self.message)

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "severity": self.severity, "path": self.path, "line": self.line,
                "message": self.message}

    def __repr__(self) -> str:
        return "Finding(%r, %r, %d, %r)" % (self.code, self.path, self.line, self.message)


class Context:
    """What the checks may know besides the store: today's date and whether to run git."""

    __slots__ = ("today", "git", "quick")

    def __init__(self, today: datetime.date | None = None, git: bool = True, quick: bool = False) -> None:
        self.today = today or datetime.date.today()
        self.git = git
        self.quick = quick  # the SessionStart audit: errors only, on a time budget


def _n(value: int) -> str:
    return "{:,}".format(value)


# -- the store and the index -----------------------------------------------------------------

def check_config(st: Store, ctx: Context) -> Iterator[Finding]:
    cfg = st.config
    if not cfg.exists:
        return
    keys = sorted(cfg.line_of, key=len, reverse=True)
    for err in cfg.errors:
        line = 1
        for key in keys:
            if repr(key) in err or '"%s"' % key in err:
                line = cfg.line_of[key]
                break
        yield Finding("config-invalid", config.CONFIG_NAME, line,
                      "%s; the file is ignored until fixed (caps fall back to the defaults)" % err)


def git_exposure(root: str, paths: list[str]) -> tuple[str, list[str]] | None:
    """(work tree, paths git does not ignore) when `root` lies inside another git work tree;
    None when it is not in one, is the top of its own repository, or git is unavailable."""
    import subprocess  # only here: the hook's quick audit never starts git

    def run(args: list[str], data: str | None = None) -> subprocess.CompletedProcess[str] | None:
        try:
            return subprocess.run(["git", "-C", root] + args, input=data, capture_output=True,
                                  text=True, timeout=20)
        except (OSError, subprocess.SubprocessError):
            return None

    top = run(["rev-parse", "--show-toplevel"])
    if top is None or top.returncode != 0 or not top.stdout.strip():
        return None
    work_tree = os.path.realpath(top.stdout.strip())
    if work_tree == os.path.realpath(root):
        return None  # a store kept in its own repository: committing it is the point
    res = run(["check-ignore", "--stdin"], "".join(p + "\n" for p in ["."] + paths))
    if res is None or res.returncode not in (0, 1):
        return None
    ignored = set(res.stdout.splitlines())
    if "." in ignored:
        return None
    exposed = [p for p in paths if p not in ignored]
    return (work_tree, exposed) if exposed else None


def check_git(st: Store, ctx: Context) -> Iterator[Finding]:
    if not ctx.git:
        return
    paths = ([st.index_name] if st.index_read else []) + [n.rel for n in st.notes]
    found = git_exposure(st.root, paths)
    if found:
        work_tree, exposed = found
        yield Finding("store-in-git", ".", 0,
                      "the store is inside the git work tree %s and git does not ignore %d of its "
                      "files (e.g. %s); memories hold machine-local detail: add the store folder to "
                      "that repository's .gitignore" % (work_tree, len(exposed), shown(exposed[0])))


def check_walk(st: Store, ctx: Context) -> Iterator[Finding]:
    for rel, reason in st.unlistable:
        yield Finding("dir-unlistable", rel, 0,
                      "cannot list this folder (%s): notes in it were not checked; fix its permissions" % reason)
    for rel, reason in st.skipped:
        yield Finding("not-a-file", rel, 0, "%s; not read: a note must be a regular file" % reason)
    for rel, _real in st.escaping_links:
        yield Finding("symlink-escape", rel, 0,
                      "a symlink to a file outside the store; not read: copy the note into the store "
                      "or remove the link")


def check_index(st: Store, ctx: Context) -> Iterator[Finding]:
    name = st.index_name
    if st.index_error is not None:
        code, reason = st.index_error
        if code == "index-missing":
            yield Finding(code, name, 0,
                          "no index in this folder: create %s with one pointer line per note "
                          "(see templates/MEMORY.md)" % name)
        elif code == "symlink-escape":
            yield Finding(code, name, 0,
                          "the index is a symlink to a file outside the store; not read: keep the index "
                          "inside ROOT (replace the link with the file itself)")
        elif code == "not-a-file":
            yield Finding(code, name, 0, "%s; not read: the index must be a regular file" % reason,
                          severity=ERROR)
        else:
            yield Finding(code, name, 0, "the index cannot be read (%s); recall starts from it: fix it first" % reason)
        return
    raw = st.index_raw
    assert raw is not None and st.caps is not None and st.index_text is not None
    caps = st.caps
    for offset, line in st.index_bad_bytes[:MAX_PER_NOTE]:
        yield Finding("file-not-utf8", name, line,
                      "byte %s is not UTF-8; the host reads it as U+FFFD: save the index as UTF-8 "
                      "(pointers were still checked)" % _n(offset))
    # --- sized as the host counts it, through the registry's window (issue 9) ---
    window = host_window(caps)
    unit = window.unit
    whole = len(raw) >= st.index_size
    if whole:
        lines: int | None
        lines, units = window.measure(raw)
        size_text = "%s %s" % (_n(units), unit)
    else:
        # read only in part: a UTF-8 character is at most 4 bytes and 2 UTF-16 units, so the
        # file size alone proves a floor far over any cap (the 60 MB index: 0.1 s)
        lines, units = None, st.index_size // 3
        size_text = "%s bytes (at least %s %s)" % (_n(st.index_size), _n(units), unit)
    status = verdict(lines, units, caps)
    sizes = "%s, %s (warn %s lines / %s %s, hard %s / %s)" % (
        "%s lines" % _n(lines) if lines is not None else "lines not all counted (read its first %s bytes)" % _n(len(raw)),
        size_text, _n(caps.warn_lines), _n(caps.warn_bytes), unit, _n(caps.hard_lines), _n(caps.hard_bytes))
    if status == OVER:
        outside = []
        for number, text in window.outside(raw):
            outside.append("line %d %s" % (number, quote(text, 50)))
            if len(outside) == 3:
                break
    # --- end registry ---
        first = int(outside[0].split(" ", 2)[1]) if outside else 0
        yield Finding("index-over-cap", name, first,
                      "%s; the host does not load past the window, so these entries are never recalled: "
                      "%s; compact now (pointer-ify long lines, merge, archive)" % (sizes, "; ".join(outside) or "none"))
    elif status == WARN:
        yield Finding("index-warn-zone", name, 0, "%s; plan a compaction pass before it reaches the hard cap" % sizes)
    if st.index_cut:
        yield Finding("index-parse-limit", name, st.index_parsed_lines + 1,
                      "pointers were searched only in the first %s lines (%d times the caps); the rest lies "
                      "far outside what the host loads: notes pointed to only from there count as unindexed"
                      % (_n(st.index_parsed_lines), store_mod.PARSE_FACTOR))
    for number, text_line in enumerate(st.index_text.split("\n", st.index_parsed_lines)[:st.index_parsed_lines], 1):
        if len(text_line) > INDEX_LINE_MAX:
            yield Finding("index-long-line", name, number,
                          "%s characters (keep a pointer under %d): move the content into its note "
                          "and leave one hook + link: %s" % (_n(len(text_line)), INDEX_LINE_MAX, quote(text_line, 50)))


def check_pointers(st: Store, ctx: Context) -> Iterator[Finding]:
    name = st.index_name
    first_line: dict[str, int] = {}
    for p in st.pointers:
        if p.is_file and not p.escapes and p.rel not in first_line and not p.rel.startswith(ARCHIVE + "/"):
            note = st.by_rel.get(p.rel)
            t = note.type if note is not None else None
            if not p.heading or t not in TYPES or t == p.heading:
                first_line[p.rel] = p.line  # the usual, healthy pointer: nothing to say
                continue
        target = quote(p.target, 80)
        if p.escapes:
            yield Finding("pointer-escapes-root", name, p.line,
                          "%s leads outside the store: keep notes inside ROOT and point to them by "
                          "relative path" % target)
            continue
        if not p.exists:
            yield Finding("pointer-broken", name, p.line,
                          "%s does not exist: fix the path, restore the note, or remove the line" % target)
            continue
        if not p.is_file:
            yield Finding("pointer-broken", name, p.line, "%s is not a file: point to a note" % target)
            continue
        if p.rel.startswith(ARCHIVE + "/"):
            yield Finding("pointer-into-archive", name, p.line,
                          "%s is archived: drop this line from the index, or move the note back out "
                          "of archive/ if it is live again" % target)
        if p.rel in first_line:
            yield Finding("pointer-duplicate", name, p.line,
                          "%s is already pointed to on line %d: keep one line" % (target, first_line[p.rel]))
        else:
            first_line[p.rel] = p.line
        note = st.by_rel.get(p.rel)
        t = note.type if note is not None else None
        if p.heading and t in TYPES and t != p.heading:
            yield Finding("index-heading-type", name, p.line,
                          "%s is a %s note under the %s heading: move the line under ## %s"
                          % (target, t, p.heading, t))


# -- the graph ---------------------------------------------------------------------------------

def _link_key(target: str) -> str:
    t = target.strip().lower()
    return t[:-3] if t.endswith(".md") else t


class _Groups:
    """key -> notes, holding a lone note bare and a list only where keys collide: at 50,000
    notes a list per key was most of the doctor's peak memory. Keys are hashed (a 64-bit
    int instead of the text): a false collision is as unlikely as it is harmless here."""

    __slots__ = ("by",)

    def __init__(self) -> None:
        self.by: dict[int, Note | list[Note]] = {}

    def add(self, key: str, n: Note) -> None:
        h = hash(key)
        had = self.by.get(h)
        if had is None:
            self.by[h] = n
        elif isinstance(had, list):
            if had[-1] is not n:
                had.append(n)
        elif had is not n:
            self.by[h] = [had, n]

    def get(self, key: str) -> list[Note]:
        had = self.by.get(hash(key))
        return [] if had is None else had if isinstance(had, list) else [had]

    def groups(self) -> Iterator[list[Note]]:
        """Every key shared by two or more notes."""
        for had in self.by.values():
            if isinstance(had, list):
                yield had


def _slug_map(st: Store) -> _Groups:
    by = _Groups()
    for n in st.notes:
        slug = n.slug.lower()
        by.add(slug, n)
        nm = n.name
        if nm and nm.strip().lower() != slug:
            by.add(nm.strip().lower(), n)
    return by


def check_graph(st: Store, ctx: Context) -> Iterator[Finding]:
    slugs = _slug_map(st)
    indexed = {p.rel for p in st.pointers if p.exists and not p.escapes}
    linked: set[str] = set()
    for n in st.live:
        dangling = 0
        for target, line in n.link_list():
            hits = slugs.get(_link_key(target))
            if hits:
                for h in hits:
                    if h is not n:
                        linked.add(h.rel)
            else:
                dangling += 1
                if dangling <= MAX_PER_NOTE:
                    yield Finding("link-dangling", n.rel, line,
                                  "[[%s]] names no note yet (allowed: write it when it is worth keeping)"
                                  % quote(target, 60)[1:-1])
        if dangling > MAX_PER_NOTE:
            yield Finding("link-dangling", n.rel, 0, "and %s more [[links]] to notes not written yet in this note"
                          % _n(dangling - MAX_PER_NOTE))
    if not st.index_read:
        return  # with no index every note would be an orphan: index-missing says it once
    for n in st.live:
        if n.rel in indexed:
            continue
        if n.rel in linked:
            yield Finding("note-link-only", n.rel, 0,
                          "reachable only through [[links]]: add an index line if recall should find it directly")
        else:
            yield Finding("note-orphan", n.rel, 0,
                          "neither in the index nor [[linked]]: a session never loads it (at best the host's "
                          "selector may pick it from its description); add a pointer line to %s, or move it to "
                          "archive/ if it is retired" % st.index_name)


def check_slugs(st: Store, ctx: Context) -> Iterator[Finding]:
    """Names that collide on a case-insensitive, normalizing disk: `Deploy.md` and
    `deploy.md`, or `café.md` in NFC and in NFD (one file on macOS)."""
    by = _Groups()
    for n in st.live:
        slug = n.slug
        key = store_mod.fold(slug) if not slug.isascii() else slug.lower()
        by.add(key, n)
        nm = n.name
        if nm and nm is not slug and nm.strip():
            by.add(store_mod.fold(nm.strip()), n)
    for group in by.groups():
        def keys(n: Note) -> set[str]:
            return {store_mod.fold(n.slug)} | ({store_mod.fold(n.name.strip())} if n.name and n.name.strip() else set())

        common = keys(group[0]) & keys(group[1])
        key = min(common) if common else store_mod.fold(group[0].slug)
        for n in group:
            others = ", ".join(shown(o.rel) for o in group if o is not n)
            yield Finding("slug-duplicate", n.rel, 0,
                          "the slug %s is also used by %s ([[links]] and case-insensitive or normalizing disks "
                          "cannot tell them apart): rename one, or merge them" % (quote(key, 60), others))


# -- one note at a time ------------------------------------------------------------------------

def check_files(st: Store, ctx: Context) -> Iterator[Finding]:
    cap = st.config.note_max_bytes
    for n in st.notes:
        if n.error is not None:
            code, reason = n.error
            if code == "file-unreadable":
                yield Finding(code, n.rel, 0, "cannot read it (%s): fix its permissions or remove it" % reason)
            elif code == "file-not-utf8":
                yield Finding(code, n.rel, 0, "%s: save it as UTF-8" % reason)
            elif not n.archived:
                yield Finding(code, n.rel, 0, "%s bytes, over the %s-byte cap per note (%s); split it "
                              "into one fact per note" % (_n(n.size), _n(cap), reason))
            continue
        if n.size > cap and not n.archived:
            yield Finding("note-too-large", n.rel, 0,
                          "%s bytes, over the %s-byte cap per note (noteMaxBytes): one note holds one fact; "
                          "split it or trim it" % (_n(n.size), _n(cap)))


_ABSENT = object()
PROTOCOL_FIELDS = ("name", "description", "type", "created", "updated")
CLAUDE_FIELDS = ("name", "description")


@functools.lru_cache(maxsize=4)
def _future_limit(today: datetime.date) -> str:
    """The last date that is not yet in the future, as ISO text (compared as text)."""
    return (today + datetime.timedelta(days=FUTURE_SLACK_DAYS)).isoformat()


def frontmatter_findings(n: Note, today: datetime.date) -> list[Finding]:
    """Everything wrong with one note's frontmatter, judged by the note's form; at most
    MAX_PER_NOTE of one code per note, then one line with the count of the rest (a hostile
    note of 100,000 malformed lines is one problem, not 100,000 findings)."""
    found = _frontmatter_findings(n, today)
    if len(found) <= MAX_PER_NOTE:
        return found
    per: dict[str, int] = {}
    out = []
    for f in found:
        k = per[f.code] = per.get(f.code, 0) + 1
        if k <= MAX_PER_NOTE:
            out.append(f)
    for code, k in per.items():
        if k > MAX_PER_NOTE:
            out.append(Finding(code, n.rel, 0, "and %s more %s problems in this note's frontmatter"
                               % (_n(k - MAX_PER_NOTE), code)))
    return out


def _frontmatter_findings(n: Note, today: datetime.date) -> list[Finding]:
    fm = n.fm
    assert fm is not None
    out: list[Finding] = []
    rel = n.rel
    for p in fm.problems:
        message = p.message
        if p.code == "fm-missing":
            first = (n.text or "").lstrip("\ufeff").lstrip()
            if first.startswith("```") or first.startswith("~~~"):
                out.append(Finding("fm-second-block", rel, 1, "the frontmatter is wrapped in a code fence, so "
                                   "no reader sees it: remove the fence"))
                continue
            message = "no frontmatter: start the note with ---, name, description, type, created, updated, ---"
        out.append(Finding(p.code, rel, p.line, message))
    if not fm.present:
        return out
    f = fm.fields
    line_of = fm.line_of
    protocol = n.form == PROTOCOL
    required = PROTOCOL_FIELDS if protocol else CLAUDE_FIELDS
    dates: dict[str, str] = {}  # valid ISO dates compare correctly as text
    for key in required:
        if key not in f:
            if key not in line_of:  # when it is there but unreadable, that is already reported
                out.append(Finding("fm-missing-field", rel, 1, "missing %s%s: add it" % (key, (
                    " (this note has dates or a top-level type, so it follows the full protocol)"
                    if protocol else ""))))
            continue
        value = f[key]
        line = line_of.get(key, 1)
        if isinstance(value, dict):
            out.append(Finding("fm-not-text", rel, line, "%s must be one line of text, not a nested block" % key))
            continue
        if value is None or not value.strip():
            out.append(Finding("fm-empty-field", rel, line, "%s is empty: fill it in" % key))
            continue
        if key == "created" or key == "updated":
            if frontmatter.is_valid_date(value):
                dates[key] = value
            elif not any(p.code == "fm-bad-date" and p.line == line for p in fm.problems):
                out.append(Finding("fm-bad-date", rel, line, "%s %s is not a real YYYY-MM-DD date"
                                   % (key, quote(value, 30))))
    # the type, in whichever place the form keeps it
    if protocol:
        t = f.get("type")
        tline, label = line_of.get("type", 1), "type"
        meta_t = fm.nested("metadata", "type")
        if isinstance(t, str) and isinstance(meta_t, str) and meta_t.strip() and meta_t != t:
            out.append(Finding("fm-type-conflict", rel, line_of.get("metadata.type", 1),
                               "metadata.type %s disagrees with type %s: keep one" % (quote(meta_t, 20), quote(t, 20))))
    else:
        meta = f.get("metadata", _ABSENT)
        tline, label = line_of.get("metadata.type", line_of.get("metadata", 1)), "metadata.type"
        t = None
        if meta is _ABSENT:
            if "metadata" not in line_of:
                out.append(Finding("fm-missing-field", rel, 1,
                                   "missing the type: add `metadata:` with `  type: user|feedback|project|reference`, "
                                   "or the protocol's top-level type plus created/updated"))
        elif meta is None:
            out.append(Finding("fm-empty-field", rel, tline, "metadata is empty: add `  type: ...` under it"))
        elif not isinstance(meta, dict):
            out.append(Finding("fm-not-text", rel, tline, "metadata must be a nested block holding type"))
        elif "type" not in meta:
            if "metadata.type" not in line_of:
                out.append(Finding("fm-missing-field", rel, tline, "metadata has no type: add `  type: ...` under it"))
        else:
            t = meta["type"]
            if t is None or not t.strip():
                out.append(Finding("fm-empty-field", rel, tline, "metadata.type is empty: use user, feedback, "
                                   "project or reference"))
                t = None
    if isinstance(t, str) and t.strip() and t not in TYPES:
        out.append(Finding("fm-unknown-type", rel, tline,
                           "%s %s is not one of user, feedback, project, reference" % (label, quote(t, 30))))
    # names and dates
    name = f.get("name")
    if protocol and isinstance(name, str) and name.strip() and name != n.slug:
        out.append(Finding("fm-name-mismatch", rel, line_of.get("name", 1),
                           "name %s differs from the file name %s: [[links]] use the name, so rename one to "
                           "match" % (quote(name, 60), quote(n.slug, 60))))
    if dates:
        created, updated = dates.get("created"), dates.get("updated")
        if created and updated and updated < created:
            out.append(Finding("fm-date-order", rel, line_of.get("updated", 1),
                               "updated %s is before created %s: fix whichever is wrong" % (updated, created)))
        limit = _future_limit(today)
        for key, d in dates.items():
            if d > limit:
                out.append(Finding("fm-future-date", rel, line_of.get(key, 1),
                                   "%s %s is in the future (today is %s): use the date the fact was written"
                                   % (key, d, today.isoformat())))
    # a second block right after the first: readers that stop at the first miss its fields
    if fm.closed and "---" in n.body[:400]:
        rest = n.body.lstrip("\r\n \t")
        if rest.startswith("---"):
            nl = rest.find("\n")
            after = rest[nl + 1:nl + 200] if nl >= 0 else ""
            if frontmatter.KEY_RE.match(after) and ":" in after.split("\n", 1)[0]:
                line = fm.body_line + n.body[:len(n.body) - len(rest)].count("\n")
                out.append(Finding("fm-second-block", rel, line,
                                   "a second frontmatter block: merge its fields into the first and delete it"))
    return out


def check_frontmatter(st: Store, ctx: Context) -> Iterator[Finding]:
    for n in st.notes:
        if n.fm is not None:
            yield from frontmatter_findings(n, ctx.today)


# Every pattern below starts with a literal word, so the regex engine can jump straight to
# candidate positions instead of trying a long alternation at every character: that is what
# keeps the doctor linear and fast on 10,000 notes. Word boundaries at the start are checked
# by hand (`_starts_word`), because a leading \b would hide the literal prefix.

def _starts_word(text: str, pos: int) -> bool:
    return pos == 0 or not text[pos - 1].isalnum()


def _literal(pattern: str) -> str:
    """The literal text every match of `pattern` starts with (used to skip the regex)."""
    m = re.match(r"[A-Za-z_ -]+", pattern)
    return (m.group() if m else "").rstrip(" ")


def _compiled(patterns: Iterable[str]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((_literal(p), re.compile(p)) for p in patterns)


def _find_all(patterns: Sequence[tuple[str, re.Pattern[str]]], text: str) -> list[re.Match[str]]:
    """Every match of any pattern that starts a word, in text order. Short texts (one
    note's) are first checked for the pattern's literal start, which is cheaper than a
    search; a long text (a batch) holds most literals somewhere, so it is searched directly."""
    hits = []
    check = len(text) < 4096
    for literal, rx in patterns:
        if not check or literal in text:
            for m in rx.finditer(text):
                if _starts_word(text, m.start()):
                    hits.append(m)
    hits.sort(key=lambda m: m.start())
    return hits


# Why:/How to apply: as line-start labels: **Why:**, **Why**:, Why:, ## Why:, - Why:, > Why:,
# and a full-width colon. A short "How:" or a heading with no colon does not count.
_LABEL_BEFORE = re.compile(r"[ \t]*(?:>[ \t]*)?(?:#{1,6}[ \t]+)?(?:[-*+][ \t]+)?(?:\*\*|__|\*|_)?\Z")
_LABEL_AFTER = re.compile(r"(?:\*\*|__|\*|_)?[ \t]*[:\uff1a]")
_HOW_TO_APPLY = re.compile(r"how[ \t]+to[ \t]+apply")


def has_label(low: str, label: str) -> bool:
    """Whether the lowercased body has `label` ("why" or "how to apply") as a line-start label.
    Only the first hit on a line can be a label (a label has nothing but markup before it),
    so after a miss the search moves on to the next line: each line is looked at once."""
    finder = _HOW_TO_APPLY if label != "why" else None
    pos = 0
    while True:
        if finder is None:
            start = low.find("why", pos)
            end = start + 3
        else:
            m = finder.search(low, pos)
            start, end = (m.start(), m.end()) if m else (-1, -1)
        if start < 0:
            return False
        nl = low.rfind("\n", pos, start)  # pos is always a line start
        line_start = nl + 1 if nl >= 0 else pos
        if _LABEL_BEFORE.match(low, line_start, start) and _LABEL_AFTER.match(low, end):
            return True
        nl = low.find("\n", start)
        if nl < 0:
            return False
        pos = nl + 1


_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_PERIODS = "night|week|weekend|month|quarter|year|sprint|" + _WEEKDAYS
_NUM = r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|a\s+few|a\s+couple\s+of|couple\s+of|several|\d+)"
_UNITS = r"(?:days?|weeks?|months?|years?)"
RELATIVE_PATTERNS = _compiled((
    r"yesterday\b", r"today\b", r"tomorrow\b", r"tonight\b",
    r"this\s+(?:morning|afternoon|evening|coming\s+(?:%s)|past\s+(?:%s)|%s)\b" % (_PERIODS, _PERIODS, _PERIODS),
    r"last\s+(?:%s)\b" % _PERIODS,
    r"next\s+(?:%s)\b" % _PERIODS,
    r"in\s+%s\s+%s\b" % (_NUM, _UNITS),
    r"the\s+(?:other\s+day|day\s+(?:before|after))\b",
))
# "<n> <units> ago" / "from now" are found from their last word, then checked backwards
_AGO = re.compile(r"(?:ago|from\s+now)\b")
_AGO_BEFORE = re.compile(r"(?<![A-Za-z0-9])%s\s+%s\s+\Z" % (_NUM, _UNITS))


def relative_dates(low: str) -> list[tuple[int, int]]:
    """(start, end) of each relative date expression in lowercased text."""
    spans = [(m.start(), m.end()) for m in _find_all(RELATIVE_PATTERNS, low)]
    for m in (_AGO.finditer(low) if "ago" in low or "from now" in low else ()):
        if not _starts_word(low, m.start()):
            continue
        window = max(0, m.start() - 40)
        b = _AGO_BEFORE.search(low, window, m.start())
        if b:
            spans.append((b.start(), m.end()))
    spans.sort()
    return spans


def labels_and_dates(n: Note) -> Iterator[Finding]:
    """Why/How labels and relative dates of one live note whose text is at hand."""
    if n.fm is None:
        return
    t = n.type
    if t not in ("feedback", "project"):
        return
    low = n.body.lower()
    missing = [label for word, label in (("why", "Why:"), ("how to apply", "How to apply:"))
               if not has_label(low, word)]
    if missing:
        yield Finding("labels-missing", n.rel, n.fm.body_line,
                      "a %s note needs %s as line-start label%s (e.g. **Why:** ... / **How to apply:** ...): "
                      "say why the rule exists and what to do next time"
                      % (t, " and ".join(missing), "s" if len(missing) > 1 else ""),
                      severity=ERROR if n.form == PROTOCOL else WARNING)
    if t == "project" and len(low) == len(n.body):
        for start, end in relative_dates(low)[:MAX_PER_NOTE]:
            yield Finding("relative-date", n.rel, n.line_at(start),
                          "relative date %s will rot: write the absolute date (YYYY-MM-DD)"
                          % quote(n.body[start:end], 40))


def check_labels_and_dates(st: Store, ctx: Context) -> Iterator[Finding]:
    for n in st.live:
        yield from labels_and_dates(n)


# -- content: secrets, injection, hidden text ---------------------------------------------------

_HIDDEN_CLASS = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b\u200c\u200e\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\u3164\ufeff\uffa0\U000e0000-\U000e007f"
)
HIDDEN_RE = re.compile("[%s]" % _HIDDEN_CLASS)
ZWJ = "\u200d"

# Provider token formats: (kind, pattern), matched case-sensitively on the note text.
TOKEN_PATTERNS = tuple((kind, _literal(p) if p[0] != "-" else "-----BEGIN", re.compile(p)) for kind, p in (
    ("a private key block", r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"),
    ("an AWS access key", r"AKIA[0-9A-Z]{16}(?![0-9A-Za-z])"),
    ("an AWS access key", r"ASIA[0-9A-Z]{16}(?![0-9A-Za-z])"),
    ("a GitHub token", r"gh[pousr]_[A-Za-z0-9]{36,}"),
    ("a GitHub token", r"github_pat_[A-Za-z0-9_]{40,}"),
    ("a Slack token", r"xox[abposre]-[A-Za-z0-9-]{10,}"),
    ("a Stripe live key", r"sk_live_[A-Za-z0-9]{16,}"),
    ("a Stripe live key", r"rk_live_[A-Za-z0-9]{16,}"),
    ("an OpenAI/Anthropic-style API key", r"sk-(?:ant-[a-z0-9]+-|proj-)?[A-Za-z0-9_-]{32,}"),
    ("a Google API key", r"AIza[0-9A-Za-z_-]{35}"),
    ("a JSON Web Token", r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
))
# `password = value`-style assignments, matched on lowercased text; the value must look random.
_ASSIGN_TAIL = r"[\"']?[ \t]*[:=][ \t]*[\"']?([^\s\"'`,;]{12,})"
ASSIGN_PATTERNS = tuple((k[:3], re.compile(k + _ASSIGN_TAIL)) for k in (
    r"pass(?:word|wd|phrase)", r"pwd", r"token", r"secret", r"key",
))
_INJ_OBJECTS = (
    r"(?:instructions?|rules|guidelines|prompts?|directions|directives|messages|context|constraints)"
)
_INJ_QUALIFIED = (
    r"\s+(?:(?:(?:all|any|the|your|my|of|these)\s+)*"
    r"(?:previous|prior|above|earlier|preceding|system|original|safety|developer|existing)\s+%s"
    r"|(?:all|any|your)\s+(?:instructions|rules|guidelines))" % _INJ_OBJECTS
)
_REVEAL_TAIL = (
    r"\s+(?:(?:the|your|all|any|my)\s+)?(?:system\s+prompt|hidden\s+instructions|secrets|api\s+keys?"
    r"|credentials|passwords|private\s+keys?|env(?:ironment)?\s+variables|\.env\b)"
)
_SEND_TAIL = (
    r"\b[^\n]{0,80}?\b(?:secrets?|keys?|tokens?|credentials?|passwords?|env(?:ironment)?|ssh|cookies?"
    r"|conversation|history|memor(?:y|ies))\b[^\n]{0,80}?(?:https?://|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)"
)
# Instructions aimed at the agent reading the note, matched on lowercased text.
# (gate, patterns): a family runs only when one of its gate words occurs; a gate is a word
# every match of the family must contain ("send" needs an address). Over the whole batch a
# gate is one cheap pass that can save seven.
INJECTION_FAMILIES = (
    ((), _compiled([v + _INJ_QUALIFIED for v in ("ignore", "disregard", "forget", "override", "bypass")]
                   + [r"you\s+are\s+now\b", r"new\s+system\s+prompt\b",
                      r"do\s+not\s+(?:tell|inform|alert|notify)\s+the\s+user"])),
    ((),
     _compiled([v + _REVEAL_TAIL for v in ("reveal", "print", "show", "output", "leak", "dump", "disclose",
                                           "expose")])),
    (("http", "@"),
     _compiled([v + _SEND_TAIL for v in ("send", "upload", "forward", "exfiltrate", "transmit", "email", "mail")])),
)


def mask(value: str) -> str:
    """Enough to find the value, never the value: a 4-character prefix and the length."""
    return "%s\u2026 (%d chars, masked)" % (value[:4], len(value))


def entropy(value: str) -> float:
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def looks_random(value: str) -> bool:
    """Precision over recall: a value counts only if it mixes letters and digits with high
    entropy, and is not a placeholder or a pointer to where the secret lives."""
    if value[0] in "<$%{[(*" or value.lower().startswith(("env", "os.", "process.", "vault", "http")):
        return False
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    return has_digit and has_alpha and entropy(value) >= 3.3


_SEP = "\n\x00\n"  # between notes in a batch: no pattern can match across it


class _Batch:
    """Many notes joined into one string, so each pattern is searched once for the whole
    store rather than once per note: the scan then costs C-speed passes over the text
    instead of tens of Python calls per note. `starts` maps an offset back to its note."""

    __slots__ = ("text", "starts", "_last")

    def __init__(self, parts: list[str]) -> None:
        self.text = _SEP.join(parts)
        self._last = (-1, 0, 1)
        self.starts = []
        pos = 0
        for part in parts:
            self.starts.append(pos)
            pos += len(part) + len(_SEP)

    def locate(self, offset: int) -> tuple[int, int]:
        """(note index, 1-based line within that note) of an offset. Counting goes on from
        the last offset asked for when it is in the same note and not before it, so a scan
        that asks in text order costs one pass over the text, however many matches it has."""
        i = bisect.bisect_right(self.starts, offset) - 1
        last_i, last_off, last_line = self._last
        if last_i == i and last_off <= offset:
            line = last_line + self.text.count("\n", last_off, offset)
        else:
            line = self.text.count("\n", self.starts[i], offset) + 1
        self._last = (i, offset, line)
        return i, line


def scan_notes(notes: Sequence[Note]) -> list[Finding]:
    """Secrets (masked), instructions aimed at the agent, and hidden characters, for many
    notes at once. Non-ASCII notes are searched in their NFKC form with hidden characters
    removed, so look-alike and split-up words are caught too. ASCII notes are batched
    apart from the rest: one non-ASCII character would make Python store the whole joined
    text at two or four bytes per character, and every search over it slower."""
    plain = [i for i, n in enumerate(notes) if (n.text or "").isascii()]
    other = [i for i, n in enumerate(notes) if not (n.text or "").isascii()]
    per_note: list[list[tuple[str, int, str]]] = [[] for _ in notes]
    for group in (plain, other):
        if group:
            for i, items in zip(group, _scan_group([notes[i] for i in group])):
                per_note[i] = items
    out: list[Finding] = []
    for n, items in zip(notes, per_note):
        counts: dict[str, int] = {}
        for code, line, message in items:
            counts[code] = counts.get(code, 0) + 1
            if counts[code] <= MAX_PER_NOTE:
                out.append(Finding(code, n.rel, line, message))
    return out


def _scan_group(notes: Sequence[Note]) -> list[list[tuple[str, int, str]]]:
    """Per note, every content match as (code, line, message), before the per-note cap."""
    texts = [n.text or "" for n in notes]
    ascii_ = [t.isascii() for t in texts]
    lows = [t.lower() if a else _seen(t) for t, a in zip(texts, ascii_)]
    raw = _Batch(texts)
    low = _Batch(lows)
    big, big_low = raw.text, low.text
    found: list[list[tuple[str, int, str]]] = [[] for _ in notes]  # per note: (code, line, message)
    tokens: list[list[tuple[int, int]]] = [[] for _ in notes]  # reported spans, per note

    for kind, _literal, rx in TOKEN_PATTERNS:  # one pass each: a literal check first would be two
        for m in rx.finditer(big):
            if not _starts_word(big, m.start()):
                continue
            i, line = raw.locate(m.start())
            tokens[i].append((m.start() - raw.starts[i], m.end() - raw.starts[i]))
            value = m.group()
            if kind.startswith("an OpenAI") and not looks_random(value[3:]):
                continue
            shown = "the header %s" % quote(value, 50) if "private key" in kind else mask(value)
            found[i].append(("secret", line, "%s (%s): remove it from memory, rotate it, and record only "
                                              "where it lives" % (kind, shown)))
    for spans in tokens:
        spans.sort()
    for _literal, rx in ASSIGN_PATTERNS:
        for m in rx.finditer(big_low):
            i, line = low.locate(m.start())
            if ascii_[i]:
                # an ASCII note's lowercase copy lines up with it character for character
                start, end = m.start(1) - low.starts[i], m.end(1) - low.starts[i]
                value = texts[i][start:end]
                spans = tokens[i]
                k = bisect.bisect_right(spans, (start, 1 << 62)) - 1
                if k >= 0 and spans[k][0] <= start < spans[k][1]:
                    continue
            else:
                value = m.group(1)
            if not looks_random(value):
                continue
            key = big_low[m.start():m.start(1)].strip(" \t:='\"")
            found[i].append(("secret", line, "a %s assignment = %s: remove the value and record only where "
                                             "it lives (password manager, env var name)" % (quote(key, 30), mask(value))))
    hits: list[list[re.Match[str]]] = [[] for _ in notes]
    for gate, family in INJECTION_FAMILIES:
        if not gate or any(word in big_low for word in gate):
            for m in _find_all(family, big_low):
                hits[low.locate(m.start())[0]].append(m)
    for i, note_hits in enumerate(hits):
        note_hits.sort(key=lambda m: m.start())
        for m in note_hits:
            disguised = not ascii_[i] and m.group() not in texts[i].lower()
            found[i].append(("injection", low.locate(m.start())[1],
                             "reads as an instruction to the agent%s: %s; a human should read this note and "
                             "delete it if nobody meant it" % (
                                 " (disguised with hidden or look-alike characters)" if disguised else "",
                                 quote(m.group(), 60))))
    for i, text in enumerate(texts):
        if not ascii_[i]:
            found[i].extend(_hidden(text))
    return found


def _seen(text: str) -> str:
    """What a reader sees, lowercased: hidden characters dropped, look-alikes folded (NFKC)."""
    if HIDDEN_RE.search(text):
        text = HIDDEN_RE.sub("", text)
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    return text.lower()


def _hidden(text: str) -> list[tuple[str, int, str]]:
    """Hidden characters, at most MAX_PER_NOTE + 1 of each kind (the rest would be capped
    anyway), with line numbers counted on from the previous hit: one pass over the text."""
    out = []
    pos_line = [0, 1]

    def line_of(offset: int) -> int:
        if offset < pos_line[0]:
            pos_line[0], pos_line[1] = 0, 1
        pos_line[1] += text.count("\n", pos_line[0], offset)
        pos_line[0] = offset
        return pos_line[1]

    found = 0
    for m in HIDDEN_RE.finditer(text):
        if m.start() == 0 and m.group() == "\ufeff":
            continue
        out.append(("hidden-unicode", line_of(m.start()),
                    "invisible/bidirectional character U+%04X can hide or reorder text: read the raw "
                    "file and remove it" % ord(m.group())))
        found += 1
        if found > MAX_PER_NOTE:
            break
    pos_line[0], pos_line[1] = 0, 1
    pos = text.find(ZWJ)
    found = 0
    while pos >= 0 and found <= MAX_PER_NOTE:
        before = text[pos - 1] if pos else " "
        after = text[pos + 1] if pos + 1 < len(text) else " "
        if ord(before) < 0x2000 or ord(after) < 0x2000:  # between two emoji it joins them
            out.append(("hidden-unicode", line_of(pos),
                        "zero-width joiner U+200D outside an emoji sequence can hide text: remove it"))
            found += 1
        pos = text.find(ZWJ, pos + 1)
    return out


def scan_note(n: Note) -> list[Finding]:
    """The content findings for one note."""
    return scan_notes([n])


QUICK_INDEX_CHARS = 1 << 16  # the quick audit scans this much of an index for secrets


def check_content(st: Store, ctx: Context) -> Iterator[Finding]:
    notes = [n for n in st.notes if n.text is not None]
    if st.index_text is not None and not (ctx.quick and len(st.index_text) > QUICK_INDEX_CHARS):
        # the index is loaded into every session: the worst place for a secret or an injection
        index = Note(st.index_path, st.index_name, False)
        index.text = st.index_text
        notes.append(index)
    yield from scan_notes(notes)


# -- near duplicates ---------------------------------------------------------------------------

WORD_RE = re.compile(r"\w+")
STOPWORDS = frozenset(
    "a an and are as at be by for from has have in into is it its of on or that the this to was were "
    "will with we our you your i my me".split()
)


def check_duplicates(st: Store, ctx: Context) -> Iterator[Finding]:
    """Same type and either the same description words (any order, case and punctuation,
    stopwords aside) or the same body text once case and spacing are normalised. Each note
    gets two text keys and lands in a bucket: linear in the number of notes, never pairwise."""
    by_desc = _Groups()
    by_body = _Groups()
    stop = STOPWORDS
    for n in st.live:
        t = n.type
        if t not in TYPES or n.error is not None:
            continue
        desc = n.description
        if desc:
            words = {w for w in WORD_RE.findall(desc.lower()) if w not in stop}
            if len(words) >= 3:
                by_desc.add(t + ":" + " ".join(sorted(words)), n)
        if n.body_key is not None:
            by_body.add("%s:%d" % (t, n.body_key), n)
    reported: set[str] = set()
    pairs: tuple[tuple[str, Iterable[list[Note]]], ...] = (
        ("the same description words", by_desc.groups()), ("the same body text", by_body.groups()))
    for why, buckets in pairs:
        for group in buckets:
            if len(group) < 2:
                continue
            first = group[0]
            for n in group[1:]:
                if n.rel in reported:
                    continue
                reported.add(n.rel)
                yield Finding("near-duplicate", n.rel, 0,
                              "%s note with %s as %s: if they hold one fact, merge them by hand (the doctor "
                              "never merges)" % (n.type, why, shown(first.rel)))


# -- recall: what the host's memory selector reads --------------------------------------------
# Measured on Claude Code 2.1.332 (tests/e2e/test_recall_scan.py): besides the index, a side
# call offers its model the 200 newest notes (by modification time) as one line each,
# `- [type] path (mtime): description`, read from the first 30 lines / 65,536 bytes of each
# note; `name:` is not sent. So the description is all the selector judges relevance from.

GENERIC_DESCRIPTIONS = frozenset(
    "note notes memory memories todo misc miscellaneous info information stuff things tbd wip "
    "placeholder description summary details general update updates fix fixes untitled test".split())
DESCRIPTION_MIN_WORDS = 4
DESCRIPTION_MAX_CHARS = 300


def _desc_words(desc: str) -> list[str]:
    return WORD_RE.findall(desc.lower())


def check_descriptions(st: Store, ctx: Context) -> Iterator[Finding]:
    by_text = _Groups()
    for n in st.live:
        desc = n.description
        if n.error is not None or desc is None or not desc.strip():
            continue  # a missing or empty description is fm-missing-field / fm-empty-field
        words = _desc_words(desc)
        slug_words = WORD_RE.findall(n.slug.lower().replace("_", " "))
        why = ""
        if len(desc) > DESCRIPTION_MAX_CHARS:
            why = "%s characters: the selector reads it whole beside every other note; keep one line under %d" % (
                _n(len(desc)), DESCRIPTION_MAX_CHARS)
        elif all(w in GENERIC_DESCRIPTIONS or w.isdigit() for w in words) or words == slug_words:
            why = "%s says nothing the file name does not" % quote(desc, 60)
        elif len(words) < DESCRIPTION_MIN_WORDS:
            why = "%s is %d word%s" % (quote(desc, 60), len(words), "" if len(words) == 1 else "s")
        if why:
            yield Finding("description-weak", n.rel, n.fm.line_of.get("description", 1) if n.fm else 0,
                          "%s; the host's selector picks notes by description alone: say what the note is "
                          "about, specifically, in one line" % why)
        key = " ".join(words)
        if key:
            by_text.add(key, n)
    for group in by_text.groups():
        if len(group) < 2:
            continue
        first = group[0]
        same_type = len({n.type for n in group}) == 1
        if same_type and len({w for w in _desc_words(first.description or "") if w not in STOPWORDS}) >= 3:
            continue  # near-duplicate already reports these
        for n in group[1:]:
            yield Finding("description-collision", n.rel, 0,
                          "the same description as %s: the host's selector cannot tell the two apart; "
                          "describe what each one is about" % shown(first.rel))


def host_window(caps: size_mod.Caps) -> size_mod.Window:
    """Claude Code's load window (the registry's), held to the caps in force."""
    from engramory.hosts import claude

    return claude.window().limited(caps.hard_lines, caps.hard_bytes)


def _window_lines(st: Store) -> int:
    """How many lines of the index the host loads (pointers past them are never read)."""
    raw = st.index_raw or b""
    assert st.caps is not None
    end = host_window(st.caps).loaded_length(raw)
    return raw.count(b"\n", 0, end) + (1 if end and not raw[:end].endswith(b"\n") else 0)


def check_recall(st: Store, ctx: Context) -> Iterator[Finding]:
    for n in st.live:
        if n.error is None and not n.host_reads:
            yield Finding("recall-fm-unread", n.rel, 1,
                          "the frontmatter ends past line %d or byte %s, where the host's recall scan stops "
                          "reading: it sees no description or type for this note; move name, description "
                          "and type to the top and keep the block short"
                          % (store_mod.HOST_SCAN_LINES, _n(store_mod.HOST_SCAN_BYTES)))
    if not st.index_read or st.streamed and st.stopped:
        return
    window = _window_lines(st)
    in_window = {p.rel for p in st.pointers if p.exists and not p.escapes and p.line <= window}
    anywhere = {p.rel for p in st.pointers if p.exists and not p.escapes}
    newest = sorted(st.notes, key=lambda n: -n.mtime)[:store_mod.HOST_CANDIDATES]
    candidates = {n.rel for n in newest}
    for n in st.live:
        if n.rel in in_window or n.rel in candidates or n.rel not in anywhere:
            continue  # notes in no index line at all are note-orphan / note-link-only
        yield Finding("recall-unreachable", n.rel, 0,
                      "indexed only past the %s lines the host loads, and not among the %d newest notes its "
                      "selector is offered: no session can recall it; compact the index"
                      % (_n(window), store_mod.HOST_CANDIDATES))
# -- the config protects itself (install branch, issue 10; the rule is config.window_problems) --

def check_config_window(st: Store, ctx: Context) -> Iterator[Finding]:
    if st.caps is None:
        return
    for message in config.window_problems(st.caps, st.config):
        key = "hardLines" if " lines is above" in message else "hardBytes"
        yield Finding("config-above-window", config.CONFIG_NAME, st.config.line_of.get(key, 0), message)


CHECKS: tuple[Callable[[Store, Context], Iterable[Finding]], ...] = (
    check_config, check_config_window, check_git, check_walk, check_index, check_pointers, check_graph, check_slugs,
    check_files, check_frontmatter, check_labels_and_dates, check_content, check_duplicates,
    check_descriptions, check_recall,
)


# checks that never find an error: the quick (SessionStart) audit, which counts errors, skips them
WARNINGS_ONLY = (check_duplicates, check_descriptions, check_recall)


class _ContentBatch:
    """Notes whose content is scanned together once their text adds up to BATCH_CHARS: the
    patterns stay few C-speed passes over joined text, and memory stays one batch."""

    BATCH_CHARS = 1 << 18

    def __init__(self, out: list[Finding]) -> None:
        self.out = out
        self.notes: list[Note] = []
        self.chars = 0

    def add(self, n: Note) -> None:
        if n.text is None:
            return
        copy = Note(n.path, n.rel, n.archived)
        copy.text = n.text
        self.notes.append(copy)
        self.chars += len(n.text)
        if self.chars >= self.BATCH_CHARS:
            self.flush()

    def flush(self) -> None:
        if self.notes:
            self.out.extend(scan_notes(self.notes))
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


def audit(root: str, ctx: Context | None = None, skip: Iterable[str] = (),
          env: Mapping[str, str] | None = None, deadline: float | None = None) -> tuple[Store, list[Finding]]:
    """Read the store at `root`, streaming: each note's own checks run as it is read and its
    text is then dropped, so memory holds findings and a few fields per note, never bodies.
    The cyclic garbage collector is paused meanwhile (the doctor builds many small objects
    that live until it exits). Raises OSError when `root` cannot be listed."""
    ctx = ctx or Context()
    enabled = gc.isenabled()
    gc.disable()
    try:
        per_note: list[Finding] = []
        batch = _ContentBatch(per_note)
        today = ctx.today

        def visit(n: Note) -> None:
            if n.fm is not None:
                per_note.extend(frontmatter_findings(n, today))
                if not n.archived:
                    per_note.extend(labels_and_dates(n))
            batch.add(n)

        st = store_mod.load(root, env, visit, deadline)
        batch.flush()
        skipped = set(skip)
        found = run_checks(st, ctx, skipped, sort=False)
        found.extend(f for f in per_note if f.code not in skipped)
        per_note.clear()
        found.sort(key=Finding.sort_key)
        return st, found
    finally:
        if enabled:
            gc.enable()


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

def counts_of(findings: Sequence[Finding]) -> dict[str, int]:
    counts = {s: 0 for s in SEVERITIES}
    for f in findings:
        counts[f.severity] += 1
    return counts


def exit_code(findings: Sequence[Finding], strict: bool = False) -> int:
    counts = counts_of(findings)
    return 1 if counts[ERROR] or (strict and counts[WARNING]) else 0


def shown(path: str) -> str:
    """A path as printed: a file name is text from the disk too, so a newline, a control or
    a bidirectional character in it is escaped instead of breaking or reordering the line."""
    if path.isprintable():
        return path
    return "".join(c if c.isprintable() else "\\u%04x" % ord(c) if ord(c) < 0x10000 else "\\U%08x" % ord(c)
                   for c in path)


def display_path(root: str, rel: str) -> str:
    if rel == ".":
        return shown(root)
    if root in (".", "./", ""):
        return shown(rel)
    return shown(os.path.join(root, rel))


def render_text(findings: Sequence[Finding], root: str, st: Store, cap: int = OUTPUT_CAP) -> str:
    """One line per finding, at most `cap` per code (then one "and N more" line, after the
    rest): a store of 200,000 broken notes still prints a page, not 68 MB."""
    out = []
    seen: dict[str, int] = {}
    for f in findings:
        n = seen[f.code] = seen.get(f.code, 0) + 1
        if n <= cap:
            out.append("%s:%d: %s %s: %s" % (display_path(root, f.path), f.line, f.severity, f.code, f.message))
    for code, n in seen.items():
        if n > cap:
            out.append("... and %s more %s finding%s (%s in all; `--json` lists every one)"
                       % (_n(n - cap), code, "" if n - cap == 1 else "s", _n(n)))
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = Parser(
        prog="engramory doctor",
        usage_exit=2,
        description="Audit a whole memory store: the index (caps, pointers), every note's frontmatter and "
        "body, links, orphans, duplicates, secrets (masked) and prompt injection. Report only: the "
        "doctor never changes a file.",
        epilog="Output: one line per finding, `path:line: severity code: message` (line 0 = the whole "
        "file or folder), sorted, then a summary line. `--list-checks` shows every code. "
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
                        "memory, autoMemoryDirectory, agent-memory folders): one summary line each")
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
        from engramory import stores

        return int(stores.audit_all(args.skip, args.json, args.strict))
    chosen = "argument"
    root = args.root
    if root is None:
        try:
            root = claude_memory_dir()
        except ValueError as exc:
            sys.stderr.write("engramory doctor: cannot tell this project's memory folder: %s; pass ROOT\n" % exc)
            return 2
        chosen = "claude-auto-memory"
        sys.stderr.write("engramory doctor: no ROOT given; checking this project's Claude Code auto memory: %s\n" % root)
    try:
        st, findings = audit(root, Context(), args.skip)
    except OSError as exc:
        reason = exc.strerror or exc.__class__.__name__
        hint = "pass the folder that holds MEMORY.md" if chosen == "argument" else (
            "Claude Code has not written memory for this project yet; pass ROOT to check another folder")
        sys.stderr.write("engramory doctor: cannot read the store folder %s: %s; %s\n" % (root, reason, hint))
        return 2
    for note in st.cap_notes:
        if note.startswith("the store config"):
            continue  # reported as config-invalid findings, with line numbers
        sys.stderr.write("engramory doctor: note: %s\n" % note)
    if args.json:
        sys.stdout.write(json.dumps(report(findings, st, chosen, args.strict), indent=2) + "\n")
    else:
        sys.stdout.write(render_text(findings, root, st))
    return exit_code(findings, args.strict)


if __name__ == "__main__":
    raise SystemExit(main())
