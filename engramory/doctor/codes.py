"""The doctor's one table of checks (`CODES`), what a finding is, and what checks may know."""

from __future__ import annotations

import datetime

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ERROR = "error"
WARNING = "warning"
INFO = "info"
SEVERITIES = (ERROR, WARNING, INFO)
_RANK = {s: k for k, s in enumerate(SEVERITIES)}  # SEVERITIES.index, one lookup per sort key
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
    "store-in-git": (ERROR, False, "the store is inside a git work tree that does not ignore it (and `sync init` did not set it up)"),
    # a store shared through git (engramory.sync.checks)
    "index-conflict-markers": (ERROR, False, "the index holds conflict markers a merge left: they load into every session"),
    "merge-driver-unset": (WARNING, False, ".gitattributes names the engramory-index merge driver but this clone's git config lacks it"),
    "engramory-state-tracked": (WARNING, False, ".engramory/ (journal, blobs, manifest: this machine's state) is committed to git"),
    "store-split": (WARNING, False, "one project's memory lies in two folders (two spellings of its path, a move, a rename); --all only"),
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
    "index-hidden-pointer": (ERROR, False, "a pointer on a line the host skips as frontmatter or an HTML comment"),
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
    # what notes say about the code (engramory.verify), only with --verify: it runs git
    "ref-stale": (WARNING, False, "a path, symbol, package, command or commit a note names is not in the repository; --verify only"),
    "ref-moved": (INFO, False, "a path or symbol a note names moved (renamed, or its one file of that name is elsewhere); --verify only"),
    "verified-old": (WARNING, False, "a note that names code was last verified longer ago than verifyMaxAgeDays (90); --verify only"),
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
        return (self.path, self.line, _RANK[self.severity], self.code, self.message)

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



def shown(path: str) -> str:
    """A path as printed: a file name is text from the disk too, so a newline, a control or
    a bidirectional character in it is escaped instead of breaking or reordering the line."""
    if path.isprintable():
        return path
    return "".join(c if c.isprintable() else "\\u%04x" % ord(c) if ord(c) < 0x10000 else "\\U%08x" % ord(c)
                   for c in path)
