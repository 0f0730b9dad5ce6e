"""The working state of a compaction plan: the index as lines, the note texts as they would
become, and the plan's records (operations, changes, sizes). `engramory.compact.plan` decides
the operations; this module holds what they act on and how the result is measured."""

from __future__ import annotations

import datetime
import hashlib
import re

from engramory import size
from engramory.size import JS_SPACE, Caps, Window
from engramory.store.pointers import Pointer, note_links
from engramory.store.reader import WIKI_RE, Note, Store, heading_type

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FROM_INDEX = "## From the index"
PINNED_TRUE = ("true", "yes", "on", "1")
LIST_MARKER_RE = re.compile(r"([ \t]*)([-*+])[ \t]+")
HEADING_LINE_RE = re.compile(r"[ \t]*(#{1,6})[ \t]+(.*?)[ \t#]*\Z")
WORD_RE = re.compile(r"\w+")



class Measure:
    """An index's size as the guard counts it under the host's window: `lines` and `units`
    (what the caps hold: Claude Code counts UTF-16 units of the trimmed text, without
    frontmatter and HTML comments), and the raw `bytes` on disk besides."""

    __slots__ = ("lines", "bytes", "units")

    def __init__(self, data: bytes, window: Window) -> None:
        self.lines, self.units = window.measure(data)
        self.bytes = len(data)

    @classmethod
    def of(cls, lines: int, nbytes: int, units: int) -> Measure:
        m = cls.__new__(cls)
        m.lines, m.bytes, m.units = lines, nbytes, units
        return m

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Measure) and self.as_dict() == other.as_dict()

    def __repr__(self) -> str:
        return "Measure(%r)" % (self.as_dict(),)

    def as_dict(self) -> dict[str, int]:
        return {"lines": self.lines, "bytes": self.bytes, "units": self.units}


class Target:
    __slots__ = ("lines", "bytes", "source")

    def __init__(self, lines: int, nbytes: int, source: str) -> None:
        self.lines = lines
        self.bytes = nbytes
        self.source = source

    def met(self, m: Measure) -> bool:
        return m.lines <= self.lines and m.units <= self.bytes

    def as_dict(self) -> dict[str, Any]:
        return {"lines": self.lines, "bytes": self.bytes, "source": self.source}


class Operation:
    __slots__ = ("op", "paths", "line", "reason", "effect")

    def __init__(self, op: str, paths: list[str], line: int, reason: str) -> None:
        self.op = op
        self.paths = paths
        self.line = line  # 1-based line of the index it starts from (0: none)
        self.reason = reason
        self.effect = {"lines": 0, "bytes": 0, "units": 0}

    def as_dict(self) -> dict[str, Any]:
        return {"op": self.op, "paths": self.paths, "line": self.line, "reason": self.reason,
                "effect": dict(self.effect)}


class Item:
    """A proposal or a decision: something only the agent or the user may settle."""

    __slots__ = ("kind", "paths", "reason")

    def __init__(self, kind: str, paths: list[str], reason: str) -> None:
        self.kind = kind
        self.paths = paths
        self.reason = reason

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "paths": self.paths, "reason": self.reason}


class Change:
    """One file the plan writes: `action` is "write" (new bytes at `path`) or "move" (from
    `path` to `to`, with the bytes `after`: the same as before unless text from the index
    was appended to the note first)."""

    __slots__ = ("path", "action", "to", "before", "after")

    def __init__(self, path: str, action: str, before: bytes, after: bytes, to: str = "") -> None:
        self.path = path
        self.action = action
        self.to = to
        self.before = before
        self.after = after

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"path": self.path, "action": self.action}
        if self.to:
            d["to"] = self.to
        d["before_sha256"] = sha256(self.before)
        d["after_sha256"] = sha256(self.after)
        d["after"] = self.after.decode("utf-8", "surrogateescape")
        return d


class Plan:
    def __init__(self, store: Store, target: Target, window: Window, caps: Caps) -> None:
        self.store = store
        self.target = target
        self.window = window
        self.unit = window.unit
        self.caps = caps
        self.digest = ""
        self.before: Measure | None = None
        self.after: Measure | None = None
        self.operations: list[Operation] = []
        self.proposals: list[Item] = []
        self.decisions: list[Item] = []
        self.invariants: list[tuple[str, bool, str]] = []
        self.changes: list[Change] = []
        self.recounted = False  # the running count disagreed with the whole count (never seen)

    @property
    def refused(self) -> bool:
        return any(not ok for _, ok, _ in self.invariants)

    @property
    def within_target(self) -> bool:
        return self.after is not None and self.target.met(self.after)

    @property
    def status(self) -> str:
        if self.refused:
            return "refused"
        if not self.operations and self.within_target:
            return "nothing-to-do"
        if not self.within_target:
            return "decisions-needed"
        return "planned"

    @property
    def exit_code(self) -> int:
        return {"nothing-to-do": 0, "planned": 1}.get(self.status, 2)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# -- reading what the store gave us -------------------------------------------------------


def md_links(line: str) -> list[re.Match[str]]:
    """The note links on one line, as the store reads them (pointers.note_links: the first is the
    line's pointer, the others are references)."""
    return [m for m, _ in note_links(line)]


def normalized_words(text: str) -> str:
    return " ".join(WORD_RE.findall(text.lower()))


def normalized_body(body: str) -> str:
    """A body up to line ends, runs of spaces and blank lines: the key of merge-identical."""
    lines = [" ".join(ln.split()) for ln in body.replace("\r\n", "\n").split("\n")]
    out: list[str] = []
    for ln in lines:
        if not ln and (not out or not out[-1]):
            continue
        out.append(ln)
    return "\n".join(out).strip()


def text_tokens(text: str) -> list[str]:
    """Whitespace tokens with every [[link]] reduced to one marker: the yardstick of "no note
    loses text" (repointing a link changes its target, never the words around it)."""
    return WIKI_RE.sub(" [[]] ", text).split()


def link_key(target: str) -> str:
    t = target.strip().lower()
    return t[:-3] if t.endswith(".md") else t


def is_pinned(note: Note) -> bool:
    fm = note.fm
    if fm is None:
        return False
    for value in (fm.fields.get("pinned"), fm.nested("metadata", "pinned")):
        if isinstance(value, str) and value.strip().lower() in PINNED_TRUE:
            return True
    return False


def note_date(note: Note) -> str | None:
    fm = note.fm
    if fm is None:
        return None
    for key in ("updated", "created"):
        value = fm.fields.get(key)
        if isinstance(value, str) and len(value) >= 10:
            try:
                datetime.date.fromisoformat(value[:10])
            except ValueError:
                continue
            return value[:10]
    return None


def _eol_of(text: str) -> str:
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf * 2 >= text.count("\n") else "\n"


# -- the working state ----------------------------------------------------------------------


class Line:
    __slots__ = ("text", "eol", "pointers", "refs", "matches", "kind", "heading")

    def __init__(self, text: str, eol: str) -> None:
        self.text = text  # without its line end
        self.eol = eol  # "\r\n", "\n" or "" (an unterminated last line)
        self.pointers: list[Pointer] = []  # the line's pointer (its first note link), if any
        self.refs: list[Pointer] = []  # the other note links on it: they name a note, they are not its entry
        self.matches: list[re.Match[str]] = []
        self.kind = "other"  # "pointer" (a list item with one pointer), "heading", "blank", "other"
        self.heading: str | None = None


def _split_lines(text: str) -> list[Line]:
    """`text` as lines, each with its own line break ("" for a last line without one)."""
    out = []
    parts = text.split("\n")
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if last and part == "":
            break
        if part.endswith("\r") and not last:
            out.append(Line(part[:-1], "\r\n"))
        else:
            out.append(Line(part, "" if last else "\n"))
    return out


def _by_line(pointers: list[Pointer]) -> dict[int, list[Pointer]]:
    out: dict[int, list[Pointer]] = {}
    for p in pointers:
        out.setdefault(p.line, []).append(p)
    return out


def _classify(ln: Line, pointers: list[Pointer], refs: list[Pointer]) -> None:
    """Set `ln`'s kind (blank, heading, pointer, else other) and what it points to."""
    if not ln.text.strip():
        ln.kind = "blank"
        return
    ln.pointers = pointers
    ln.refs = refs
    ln.matches = md_links(ln.text)
    hm = HEADING_LINE_RE.match(ln.text)
    if hm and not ln.pointers:
        ln.kind = "heading"
        ln.heading = heading_type(hm.group(2))
        return
    if len(ln.pointers) == 1 and len(ln.matches) == 1 and LIST_MARKER_RE.match(ln.text):
        before = ln.text[LIST_MARKER_RE.match(ln.text).end():ln.matches[0].start()]  # type: ignore[union-attr]
        if not before.strip():
            ln.kind = "pointer"


class Work:
    """The index as lines (None once dropped) and the note texts as they would become."""

    def __init__(self, store: Store, raw: bytes) -> None:
        self.store = store
        text = raw.decode("utf-8")
        self.bom = text.startswith("\ufeff")
        if self.bom:
            text = text[1:]
        self.eol = _eol_of(text)
        lines = _split_lines(text)
        by_line = _by_line(store.pointers)
        refs = _by_line(store.references)
        for number, ln in enumerate(lines, 1):
            _classify(ln, by_line.get(number, []), refs.get(number, []))
        self.lines: list[Line | None] = list(lines)
        self.texts: dict[str, str] = {}  # rel -> text as it would become (readable notes only)
        for n in store.notes:
            if n.text is not None:
                self.texts[n.rel] = n.text
        self.moves: dict[str, str] = {}  # rel -> archive rel
        self.appended: dict[str, list[str]] = {}  # rel -> paragraphs appended from the index
        self.repointed: dict[str, str] = {}  # archived rel -> the rel its links now name
        self.by_target: dict[str, list[int]] = {}  # rel -> the lines pointing to it (or naming it)
        self._index_targets()

    def _index_targets(self) -> None:
        # a reference counts here: archive-cold must not move a note another line still names
        for i, ln in enumerate(self.lines):
            if ln is not None:
                for p in ln.pointers + ln.refs:
                    if p.rel and p.exists and not p.escapes:
                        self.by_target.setdefault(p.rel, []).append(i)

    # -- a running count of the size, so an operation costs the lines it touches -----------
    # Used when the window counts the trimmed text and this index has nothing it skips
    # (no frontmatter, no HTML comment): then the host's count is the sum of its lines' counts
    # less the whitespace trimmed at both ends. The planner checks the final count against
    # window.measure of the final bytes and plans again the slow way if they ever differ.
    def start_count(self, window: Window) -> bool:
        text = "".join(ln.text + ln.eol for ln in self.lines if ln is not None)
        self.window = window
        self.running = bool(window.trim and (window.crlf_counts or "\r" not in text)
                            and not (window.skip_comments and "<!--" in text)
                            and not (window.skip_frontmatter and text.startswith("---")))
        self.n_units = self.n_nl = self.n_bytes = 0
        if self.running:
            for ln in self.lines:
                if ln is not None:
                    self._add(ln, 1)
        self._head, self._tail = 0, len(self.lines) - 1
        return self.running

    def _add(self, ln: Line, sign: int) -> None:
        s = ln.text + ln.eol
        self.n_units += sign * size.text_units(s, self.window.unit)
        self.n_bytes += sign * (len(s) if s.isascii() else len(s.encode("utf-8")))
        if ln.eol:
            self.n_nl += sign

    def measure(self, window: Window) -> Measure:
        if not getattr(self, "running", False):
            return Measure(self.index_bytes(), window)
        lines, unit = self.lines, window.unit
        while self._head < len(lines) and lines[self._head] is None:
            self._head += 1
        while self._tail >= 0 and lines[self._tail] is None:
            self._tail -= 1
        nbytes = self.n_bytes + (3 if self.bom else 0)
        trail = self._trimmed(range(self._tail, self._head - 1, -1), unit, False)
        if trail is None:
            return Measure.of(0, nbytes, 0)
        lead = self._trimmed(range(self._head, self._tail + 1), unit, True)
        assert lead is not None
        return Measure.of(self.n_nl - lead[1] - trail[1] + 1, nbytes, self.n_units - lead[0] - trail[0])

    def _trimmed(self, order: range, unit: str, leading: bool) -> tuple[int, int] | None:
        """(units, line breaks) of the whitespace the host trims at one end, the lines taken in
        `order` up to the first with content; None when no line has any."""
        units = breaks = 0
        for j in order:
            ln = self.lines[j]
            if ln is None:
                continue
            s = ln.text + ln.eol
            kept = s.lstrip(JS_SPACE) if leading else s.rstrip(JS_SPACE)
            cut = s[:len(s) - len(kept)] if leading else s[len(kept):]
            units += size.text_units(cut, unit)
            breaks += cut.count("\n")
            if kept:
                return units, breaks
        return None

    def set_text(self, i: int, text: str) -> None:
        ln = self.lines[i]
        assert ln is not None
        if getattr(self, "running", False):
            self._add(ln, -1)
            ln.text = text
            self._add(ln, 1)
        else:
            ln.text = text

    def replace_all(self, lines: list[Line | None]) -> None:
        self.lines = lines
        self.by_target = {}
        self._index_targets()
        if getattr(self, "running", False):
            self.start_count(self.window)

    def index_bytes(self) -> bytes:
        text = "".join(ln.text + ln.eol for ln in self.lines if ln is not None)
        return (("\ufeff" if self.bom else "") + text).encode("utf-8")

    def live_lines(self) -> list[tuple[int, Line]]:
        return [(i, ln) for i, ln in enumerate(self.lines) if ln is not None]

    def drop(self, i: int) -> None:
        ln = self.lines[i]
        assert ln is not None
        # keep the file's last-line ending as it was: dropping the last line moves its (missing)
        # newline onto the line before only when the file did not end with one
        if ln.eol == "":
            for j in range(i - 1, -1, -1):
                prev = self.lines[j]
                if prev is not None:
                    if getattr(self, "running", False):
                        self._add(prev, -1)
                        prev.eol = ""
                        self._add(prev, 1)
                    else:
                        prev.eol = ""
                    break
        if getattr(self, "running", False):
            self._add(ln, -1)
        self.lines[i] = None

    def pointer_lines_of(self, rel: str) -> tuple[list[int], bool]:
        """(indexes of droppable pointer lines to `rel`, whether another line points to it)."""
        droppable, other = [], False
        for i in self.by_target.get(rel, ()):
            ln = self.lines[i]
            if ln is None:
                continue
            if ln.kind == "pointer":
                droppable.append(i)
            else:
                other = True
        return droppable, other

    def keep_text(self, rel: str, text: str) -> int:
        """Make sure note `rel` holds `text`; append it under FROM_INDEX when it does not.
        Returns the characters appended (0 when the note already said it)."""
        words = normalized_words(text)
        if not words:
            return 0
        note = self.texts[rel]
        if words in normalized_words(note) or any(words in normalized_words(t) for t in self.appended.get(rel, ())):
            return 0
        eol = _eol_of(note)
        add = ""
        if note and not note.endswith("\n"):
            add += eol
        if rel not in self.appended and not note.rstrip().endswith(FROM_INDEX):
            add += eol + FROM_INDEX + eol
        add += eol + text.strip() + eol
        self.texts[rel] = note + add
        self.appended.setdefault(rel, []).append(text)
        return len(add)
