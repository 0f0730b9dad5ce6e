"""What the curation commands share: slug rules, writing frontmatter, the pointer lines of the
index, near-duplicate detection, finding the store, and the command-line plumbing.

Pure functions over text and bytes; the commands in `curate` wrap them in one journal
transaction each. Standard library only.
"""

from __future__ import annotations

import datetime
import os
import re
import sys

from engramory.curate.root import Refusal as Refusal
from engramory.curate.root import default_root as default_root
from engramory.curate.root import fail as fail
from engramory.curate.root import is_path_like as is_path_like
from engramory.curate.root import resolve_root as resolve_root
from engramory.curate.search import tokens
from engramory.layout import comment_lines
from engramory.size import n as n
from engramory.store import descriptions, frontmatter, secrets
from engramory.store.pointers import note_links
from engramory.store.reader import HEADING_RE, TYPES, heading_type
from engramory.store.secrets import quote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from engramory.store.reader import Note, Store


SLUG_MAX = 80
SLUG_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\Z")
DERIVED_WORDS = 7
NEEDS_LABELS = ("feedback", "project")
ARCHIVE = "archive"


def today() -> str:
    return datetime.date.today().isoformat()


# -- names -----------------------------------------------------------------------------------

def check_slug(name: str) -> str:
    """A note name as given, or a Refusal: names are never sanitized, only accepted or not."""
    if not name:
        raise Refusal("the note name is empty: give --name, e.g. --name flaky-login-test")
    if "/" in name or "\\" in name or ".." in name or name.startswith("~") or "\x00" in name:
        raise Refusal("the name %s looks like a path; a note name is a plain file name without folders "
                      "(lowercase letters, digits, single hyphens), e.g. --name flaky-login-test" % _q(name))
    if name.lower().endswith(".md"):
        raise Refusal("give the name without .md: --name %s" % _q(name[:-3]))
    if len(name) > SLUG_MAX:
        raise Refusal("the name is %d characters; keep it at or under %d" % (len(name), SLUG_MAX))
    if not SLUG_RE.match(name):
        raise Refusal("the name %s is not allowed: use only lowercase letters a-z, digits and single hyphens "
                      "between them (no spaces, capitals, underscores or other characters), e.g. %s"
                      % (_q(name), _q(suggest_slug(name) or "flaky-login-test")))
    return name


def suggest_slug(text: str) -> str:
    """A slug made from the ASCII words of `text` (for derived names and suggestions): its
    first words that are not stopwords, and never all of the description's words, so the
    doctor's description-weak check (store.descriptions.weakness), which flags a description
    that only repeats the file name, accepts what `new` derives."""

    words = re.findall(r"[a-z0-9]+", text.lower())
    picked = ([w for w in words if w not in STOPWORDS] or words)[:DERIVED_WORDS]
    while len(picked) > 1 and picked == descriptions.words(text):
        picked = picked[:-1]
    slug = "-".join(picked)
    while len(slug) > SLUG_MAX - 4 and "-" in slug:
        slug = slug.rsplit("-", 1)[0]
    return slug[: SLUG_MAX - 4]


def note_arg(text: str) -> str:
    """A NAME argument of archive/restore/update: the slug, or its file name `slug.md`."""
    name = text[:-3] if text.endswith(".md") else text
    if "/" in name or "\\" in name or ".." in name:
        raise Refusal("%s is a path; name the note by its file name, e.g. %s" % (_q(text), _q(os.path.basename(name))))
    if not name:
        raise Refusal("empty note name")
    return name


def _q(text: str, limit: int = 60) -> str:

    return quote(text, limit)


# -- frontmatter -------------------------------------------------------------------------------

def scalar(key: str, value: str) -> str:
    """`value` written so the restricted frontmatter reader (and YAML) read it back exactly:
    plain when that is unambiguous, double-quoted otherwise. One line only."""
    if "\n" in value or "\r" in value or any(ord(c) < 0x20 and c != "\t" for c in value):
        raise Refusal("the %s must be one line of text (no line breaks or control characters)" % key)
    if value != value.strip():
        value = value.strip()
    for candidate in (value, '"%s"' % value.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t")):
        fm = frontmatter.parse("---\n%s: %s\n---\n" % (key, candidate))
        if not fm.problems and fm.fields.get(key) == value:
            return candidate
    raise Refusal("the %s %s cannot be written in the note's frontmatter; rephrase it" % (key, _q(value)))


def render_note(name: str, description: str, type_: str, body: str, created: str, updated: str) -> str:
    fm = "---\nname: %s\ndescription: %s\ntype: %s\ncreated: %s\nupdated: %s\n---\n" % (
        name, scalar("description", description), type_, created, updated)
    body = body.strip("\n")
    return fm + body + "\n"


def compose_body(body: str, why: str | None, how: str | None) -> str:
    body = body.replace("\r\n", "\n").strip("\n")
    extra = []
    if why:
        extra.append("**Why:** " + " ".join(why.split()))
    if how:
        extra.append("**How to apply:** " + " ".join(how.split()))
    if extra:
        body = (body + "\n\n" if body.strip() else "") + "\n".join(extra)
    return body


def set_fields(text: str, changes: dict[str, str], nested_type: str | None = None) -> str:
    """`text` with frontmatter keys set (replaced in place, or added before the closing
    fence) and, for a note in Claude Code's nested form, `metadata.type` set to `nested_type`.
    Every other byte of the note is kept."""
    fm = frontmatter.parse(text)
    if not fm.present or not fm.closed:
        raise Refusal("the note has no closed frontmatter block; fix it by hand (engramory doctor shows where)")
    nl = "\r\n" if "\r\n" in text[: fm.body_start] else "\n"
    lines = text[: fm.body_start].split(nl)
    # lines[0] is the opening fence; the closing fence is the last non-empty element
    close = max(i for i, line in enumerate(lines) if line.strip() == "---" and i > 0)
    done = set()
    for i in range(1, close):
        line = lines[i]
        m = re.match(r"([A-Za-z][A-Za-z0-9_-]*):", line)
        if m and m.group(1) in changes:
            key = m.group(1)
            lines[i] = "%s: %s" % (key, changes[key])
            done.add(key)
        elif nested_type is not None and re.match(r"\s+type:", line):
            indent = line[: len(line) - len(line.lstrip())]
            lines[i] = "%stype: %s" % (indent, nested_type)
    added = ["%s: %s" % (k, v) for k, v in changes.items() if k not in done]
    lines[close:close] = added
    return nl.join(lines) + text[fm.body_start:]


# -- the index -------------------------------------------------------------------------------------

class IndexLines:
    """The index as lines (line ends kept), with which lines are headings of which type and
    which line is the entry of which note (its first note link, pointers.note_links; a later link
    on it is a reference), outside code fences and the HTML comments the host drops
    (layout.comment_lines, the model the store and the layout judgement use too)."""

    def __init__(self, data: bytes) -> None:
        self.bom = data.startswith(b"\xef\xbb\xbf")
        text = data[3:].decode("utf-8") if self.bom else data.decode("utf-8")
        self.nl = "\r\n" if "\r\n" in text else "\n"
        self.lines = _split_keep(text)  # not splitlines: a lone CR or U+2028 is not a line end here

    def encode(self) -> bytes:
        data = "".join(self.lines).encode("utf-8")
        return (b"\xef\xbb\xbf" + data) if self.bom else data

    def scan(self) -> tuple[list[tuple[int, str | None]], list[tuple[int, list[str]]]]:
        """(headings as (index, type or None), note links as (index, targets)): per line
        its note links in order, the first being the line's pointer."""
        headings: list[tuple[int, str | None]] = []
        links: list[tuple[int, list[str]]] = []
        in_fence = False
        hidden = comment_lines("".join(self.lines)) if any("<!--" in x for x in self.lines) else {}
        for i, raw in enumerate(self.lines):
            line = hidden[i] if i in hidden else raw.rstrip("\r\n")  # what the host keeps of it
            stripped = line.strip()
            if stripped.startswith("```") or stripped.startswith("~~~"):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            if stripped.startswith("#"):
                m = HEADING_RE.match(stripped)
                if m:
                    headings.append((i, heading_type(m.group(1))))
                    continue
            targets = [t for _, t in note_links(line)]
            if targets:
                links.append((i, targets))
        return headings, links

    def pointer_lines(self, rel: str) -> list[int]:
        """Indexes of the lines that are `rel`'s entries (a note path relative to the root)."""
        want = os.path.normpath(rel)
        return [i for i, targets in self.scan()[1] if os.path.normpath(targets[0]) == want]

    def reference_lines(self, rel: str) -> list[int]:
        """Indexes of the lines that name `rel` in a link other than their pointer."""
        want = os.path.normpath(rel)
        return [i for i, targets in self.scan()[1] if any(os.path.normpath(t) == want for t in targets[1:])]

    def insert_pointer(self, type_: str, line: str) -> int:
        """Put `line` at the end of the section headed by `type_` (a new `## type` section at
        the end when there is none); returns its 1-based line number."""
        if self.lines and not self.lines[-1].endswith("\n"):
            self.lines[-1] += self.nl
        headings, _ = self.scan()
        start = next((i for i, t in headings if t == type_), None)
        entry = line + self.nl
        if start is None:
            block = [entry]
            prefix = []
            if self.lines and self.lines[-1].strip():
                prefix.append(self.nl)
            elif not self.lines:
                prefix = ["# Memory Index" + self.nl, self.nl]
            self.lines.extend(prefix + ["## %s%s" % (type_, self.nl)] + block)
            return len(self.lines)
        end = next((i for i, _ in headings if i > start), len(self.lines))
        pos = end
        while pos > start + 1 and not self.lines[pos - 1].strip():
            pos -= 1
        self.lines.insert(pos, entry)
        return pos + 1

    def remove_lines(self, indexes: Iterable[int]) -> None:
        for i in sorted(set(indexes), reverse=True):
            del self.lines[i]


def _split_keep(text: str) -> list[str]:
    out = []
    start = 0
    while True:
        pos = text.find("\n", start)
        if pos < 0:
            if start < len(text):
                out.append(text[start:])
            return out
        out.append(text[start: pos + 1])
        start = pos + 1


# -- near duplicates -------------------------------------------------------------------------------

STOPWORDS = frozenset(
    "a an and are as at be by for from has have in into is it its of on or that the this to was were "
    "will with we our you your i my me".split()
)
DUP_JACCARD = 0.7


def _words(text: str) -> set[str]:

    return {t for t in tokens(text) if t not in STOPWORDS}


def near_duplicate(st: Store, type_: str, description: str, body: str, skip: str | None = None) -> Note | None:
    """A live note of the same type that says nearly the same: the same description words (the
    doctor's rule), description words overlapping by DUP_JACCARD or more, or the same body."""
    mine = _words(description)
    body_key = " ".join(body.lower().split())
    for note in st.live:
        if note.type != type_ or note.text is None or note.slug == skip:
            continue
        theirs = _words(note.description or "")
        if len(mine) >= 3 and len(theirs) >= 3:
            overlap = len(mine & theirs) / len(mine | theirs)
            if overlap >= DUP_JACCARD:
                return note
        if len(body_key.split()) >= 8 and " ".join(note.body.lower().split()) == body_key:
            return note
    return None


# -- the store and the command line ------------------------------------------------------------

def emit(as_json: bool, obj: dict[str, object], text: str) -> None:
    """A receipt, through the one masker (engramory.store.secrets)."""

    if as_json:
        secrets.emit_json(obj, indent=2)  # ASCII: undecodable names survive
    else:
        secrets.emit(text if text.endswith("\n") else text + "\n")


def read_stdin(limit: int) -> str:
    """The body from stdin, at most `limit` bytes (one more tells it is too large)."""
    data = sys.stdin.buffer.read(limit + 1)
    if len(data) > limit:
        raise Refusal("the body on stdin is over %s bytes, the size cap of one note; one note holds one fact: "
                      "split it or trim it" % n(limit))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refusal("the body on stdin is not UTF-8 (byte %d); save it as UTF-8" % exc.start) from None


def types_text() -> str:
    return ", ".join(TYPES)


def split_names(args: Sequence[str]) -> tuple[list[str], str | None]:
    """NAME... [ROOT]: a trailing argument that looks like a path (has a '/', or is '.') is ROOT."""
    names = list(args)
    root = None
    if names and is_path_like(names[-1]):
        root = names.pop()
    return names, root
