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
import subprocess
import sys
import unicodedata

from engramory import automemory, config, frontmatter
from engramory import store as store_mod
from engramory.automemory import sanitize_project_path  # noqa: F401 - part of this module's interface
from engramory.cliutil import Parser
from engramory.excerpt import quote
from engramory.size import OVER, WARN, count_lines, lines_outside_window, verdict
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
    "store-in-git": (ERROR, False, "the store is inside a git work tree that does not ignore it"),
    "dir-unlistable": (ERROR, True, "a folder under ROOT cannot be listed"),
    "not-a-file": (WARNING, True, "a .md entry is not a regular file (FIFO, socket, device) and was not read"),
    "symlink-escape": (ERROR, True, "a note is a symlink that leads outside ROOT; it was not read"),
    # the index
    "index-missing": (ERROR, False, "ROOT has no MEMORY.md index"),
    "index-over-cap": (ERROR, False, "the index is past its hard cap: the host does not load its tail"),
    "index-warn-zone": (WARNING, False, "the index is past its warn cap: compact it soon"),
    "index-long-line": (WARNING, False, "an index line over 200 characters: content leaked out of a note"),
    "index-heading-type": (WARNING, False, "an index line sits under a heading of another type than its note"),
    "pointer-broken": (ERROR, False, "an index pointer leads to no file"),
    "pointer-escapes-root": (ERROR, False, "an index pointer leads outside ROOT (by path or symlink)"),
    "pointer-into-archive": (WARNING, False, "an index pointer leads into archive/"),
    "pointer-duplicate": (WARNING, False, "the same note is pointed to twice"),
    # the graph of notes
    "note-orphan": (WARNING, False, "a note neither indexed nor [[linked]]: recall cannot find it"),
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
}

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

    __slots__ = ("today", "git")

    def __init__(self, today: datetime.date | None = None, git: bool = True) -> None:
        self.today = today or datetime.date.today()
        self.git = git


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
    paths = ([st.index_name] if st.index_raw is not None else []) + [n.rel for n in st.notes]
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
        elif code == "index-too-large":
            assert st.caps is not None
            yield Finding("index-over-cap", name, 0,
                          "%s bytes, far over the hard cap of %s bytes; too large to read, so its pointers "
                          "were not checked: compact it" % (_n(st.index_size), _n(st.caps.hard_bytes)))
        else:
            yield Finding(code, name, 0, "the index cannot be read (%s); recall starts from it: fix it first" % reason)
        if st.index_raw is None:
            return
    raw = st.index_raw
    assert raw is not None and st.caps is not None
    caps = st.caps
    lines, nbytes = count_lines(raw), len(raw)
    status = verdict(lines, nbytes, caps)
    sizes = "%s lines, %s bytes (warn %s lines / %s bytes, hard %s / %s)" % (
        _n(lines), _n(nbytes), _n(caps.warn_lines), _n(caps.warn_bytes), _n(caps.hard_lines), _n(caps.hard_bytes))
    if status == OVER:
        outside = []
        for number, text in lines_outside_window(raw, caps):
            outside.append("line %d %s" % (number, quote(text, 50)))
            if len(outside) == 3:
                break
        first = int(outside[0].split(" ", 2)[1]) if outside else 0
        yield Finding("index-over-cap", name, first,
                      "%s; the host does not load past the window, so these entries are never recalled: "
                      "%s; compact now (pointer-ify long lines, merge, archive)" % (sizes, "; ".join(outside) or "none"))
    elif status == WARN:
        yield Finding("index-warn-zone", name, 0, "%s; plan a compaction pass before it reaches the hard cap" % sizes)
    if st.index_text is None:
        return
    for number, line in enumerate(st.index_text.split("\n"), 1):
        if len(line) > INDEX_LINE_MAX:
            yield Finding("index-long-line", name, number,
                          "%s characters (keep a pointer under %d): move the content into its note "
                          "and leave one hook + link: %s" % (_n(len(line)), INDEX_LINE_MAX, quote(line, 50)))


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


def _slug_map(st: Store) -> dict[str, list[Note]]:
    by: dict[str, list[Note]] = {}
    for n in st.notes:
        by.setdefault(n.slug.lower(), []).append(n)
        nm = n.name
        if nm and nm.strip().lower() != n.slug.lower():
            by.setdefault(nm.strip().lower(), []).append(n)
    return by


def check_graph(st: Store, ctx: Context) -> Iterator[Finding]:
    slugs = _slug_map(st)
    indexed = {p.rel for p in st.pointers if p.exists and not p.escapes}
    linked: set[str] = set()
    for n in st.live:
        for target, line in n.links:
            hits = slugs.get(_link_key(target))
            if hits:
                for h in hits:
                    if h is not n:
                        linked.add(h.rel)
            else:
                yield Finding("link-dangling", n.rel, line,
                              "[[%s]] names no note yet (allowed: write it when it is worth keeping)"
                              % quote(target, 60)[1:-1])
    if st.index_raw is None:
        return  # with no index every note would be an orphan: index-missing says it once
    for n in st.live:
        if n.rel in indexed:
            continue
        if n.rel in linked:
            yield Finding("note-link-only", n.rel, 0,
                          "reachable only through [[links]]: add an index line if recall should find it directly")
        else:
            yield Finding("note-orphan", n.rel, 0,
                          "neither in the index nor [[linked]]: add a pointer line to %s, or move it to "
                          "archive/ if it is retired" % st.index_name)


def check_slugs(st: Store, ctx: Context) -> Iterator[Finding]:
    by: dict[str, list[Note]] = {}
    for n in st.live:
        keys = {n.slug.lower()}
        nm = n.name
        if nm and nm.strip():
            keys.add(nm.strip().lower())
        for k in keys:
            by.setdefault(k, []).append(n)
    for key, group in by.items():
        if len(group) < 2:
            continue
        for n in group:
            others = ", ".join(shown(o.rel) for o in group if o is not n)
            yield Finding("slug-duplicate", n.rel, 0,
                          "the slug %s is also used by %s ([[links]] and case-insensitive disks cannot tell "
                          "them apart): rename one, or merge them" % (quote(key, 60), others))


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
    """Everything wrong with one note's frontmatter, judged by the note's form."""
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
    """Whether the lowercased body has `label` ("why" or "how to apply") as a line-start label."""
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
        line_start = low.rfind("\n", 0, start) + 1
        if _LABEL_BEFORE.match(low, line_start, start) and _LABEL_AFTER.match(low, end):
            return True
        pos = start + 1


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


def check_labels_and_dates(st: Store, ctx: Context) -> Iterator[Finding]:
    for n in st.live:
        if n.fm is None:
            continue
        t = n.type
        if t not in ("feedback", "project"):
            continue
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

    __slots__ = ("text", "starts")

    def __init__(self, parts: list[str]) -> None:
        self.text = _SEP.join(parts)
        self.starts = []
        pos = 0
        for part in parts:
            self.starts.append(pos)
            pos += len(part) + len(_SEP)

    def locate(self, offset: int) -> tuple[int, int]:
        """(note index, 1-based line within that note) of an offset."""
        i = bisect.bisect_right(self.starts, offset) - 1
        return i, self.text.count("\n", self.starts[i], offset) + 1


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
    for _literal, rx in ASSIGN_PATTERNS:
        for m in rx.finditer(big_low):
            i, line = low.locate(m.start())
            if ascii_[i]:
                # an ASCII note's lowercase copy lines up with it character for character
                start, end = m.start(1) - low.starts[i], m.end(1) - low.starts[i]
                value = texts[i][start:end]
                if any(a <= start < b for a, b in tokens[i]):
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
    out = []
    for m in HIDDEN_RE.finditer(text):
        if m.start() == 0 and m.group() == "\ufeff":
            continue
        out.append(("hidden-unicode", text.count("\n", 0, m.start()) + 1,
                    "invisible/bidirectional character U+%04X can hide or reorder text: read the raw "
                    "file and remove it" % ord(m.group())))
    pos = text.find(ZWJ)
    while pos >= 0:
        before = text[pos - 1] if pos else " "
        after = text[pos + 1] if pos + 1 < len(text) else " "
        if ord(before) < 0x2000 or ord(after) < 0x2000:  # between two emoji it joins them
            out.append(("hidden-unicode", text.count("\n", 0, pos) + 1,
                        "zero-width joiner U+200D outside an emoji sequence can hide text: remove it"))
        pos = text.find(ZWJ, pos + 1)
    return out


def scan_note(n: Note) -> list[Finding]:
    """The content findings for one note."""
    return scan_notes([n])


def check_content(st: Store, ctx: Context) -> Iterator[Finding]:
    notes = [n for n in st.notes if n.text is not None]
    if st.index_text is not None:
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
    by_desc: dict[str, list[Note]] = {}
    by_body: dict[str, list[Note]] = {}
    stop = STOPWORDS
    for n in st.live:
        t = n.type
        if t not in TYPES or n.text is None:
            continue
        desc = n.description
        if desc:
            words = {w for w in WORD_RE.findall(desc.lower()) if w not in stop}
            if len(words) >= 3:
                by_desc.setdefault(t + ":" + " ".join(sorted(words)), []).append(n)
        body_words = n.body.lower().split()
        if len(body_words) >= 8:
            by_body.setdefault(t + ":" + " ".join(body_words), []).append(n)
    reported: set[str] = set()
    for why, buckets in (("the same description words", by_desc), ("the same body text", by_body)):
        for group in buckets.values():
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


CHECKS: tuple[Callable[[Store, Context], Iterable[Finding]], ...] = (
    check_config, check_git, check_walk, check_index, check_pointers, check_graph, check_slugs,
    check_files, check_frontmatter, check_labels_and_dates, check_content, check_duplicates,
)


PARALLEL_MIN_NOTES = 2000


def _in_child(check: Callable[[Store, Context], Iterable[Finding]], st: Store, ctx: Context) -> Callable[[], list[Finding]]:
    """Start `check` in a forked child and return a function that collects its findings.
    The content scan is a third of a large store's checks and needs nothing the others
    produce, so on two cores it runs beside them. Small stores, platforms without fork, a
    process with other threads (fork would copy their locks), or any failure of the child:
    the check simply runs here instead."""
    def here() -> list[Finding]:
        return list(check(st, ctx))

    threading = sys.modules.get("threading")
    if (len(st.notes) < PARALLEL_MIN_NOTES or not hasattr(os, "fork")
            or (threading is not None and threading.active_count() > 1)):
        return here
    try:
        r, w = os.pipe()
        pid = os.fork()
    except OSError:
        return here
    if pid == 0:  # the child: compute, hand the findings over, and leave without cleanup
        status = 1
        try:
            os.close(r)
            data = json.dumps([f.as_dict() for f in check(st, ctx)]).encode()
            with os.fdopen(w, "wb") as out:
                out.write(data)
            status = 0
        finally:
            os._exit(status)
    os.close(w)

    def collect() -> list[Finding]:
        with os.fdopen(r, "rb") as f:
            data = f.read()
        _, status = os.waitpid(pid, 0)
        if status != 0:
            return here()
        try:
            return [Finding(d["code"], d["path"], d["line"], d["message"], d["severity"]) for d in json.loads(data)]
        except (ValueError, KeyError, TypeError):
            return here()

    return collect


def run_checks(st: Store, ctx: Context | None = None, skip: Iterable[str] = ()) -> list[Finding]:
    """Every finding for the store, sorted; codes in `skip` are left out."""
    ctx = ctx or Context()
    skipped = set(skip)
    if "store-in-git" in skipped:
        ctx = Context(ctx.today, git=False)
    content = _in_child(check_content, st, ctx)
    found = [f for check in CHECKS if check is not check_content for f in check(st, ctx)]
    found += content()
    out = [f for f in found if f.code not in skipped]
    out.sort(key=Finding.sort_key)
    return out


def audit(root: str, ctx: Context | None = None, skip: Iterable[str] = ()) -> tuple[Store, list[Finding]]:
    """Read the store at `root` and run every check. The cyclic garbage collector is paused
    meanwhile: the doctor builds tens of thousands of small objects that live until it exits,
    and collecting them again and again costs a tenth of the run. Raises OSError when `root`
    cannot be listed."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        st = store_mod.load(root)
        return st, run_checks(st, ctx, skip)
    finally:
        if enabled:
            gc.enable()


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


def render_text(findings: Sequence[Finding], root: str, st: Store) -> str:
    out = ["%s:%d: %s %s: %s" % (display_path(root, f.path), f.line, f.severity, f.code, f.message)
           for f in findings]
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
    parser.add_argument("--list-checks", action="store_true", help="print every check code and exit")
    args = parser.parse_args(argv)
    if args.list_checks:
        sys.stdout.write(list_checks())
        return 0
    unknown = [c for c in args.skip if c not in CODES]
    if unknown:
        parser.error("unknown check code %s for --skip (see --list-checks)" % ", ".join(repr(c[:40]) for c in unknown))
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
