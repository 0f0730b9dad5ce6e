"""An index as the merge driver sees it: sections, each a heading and its ordered lines, where
a line is either an entry (keyed by the note its first link points at) or text.

- The lines before the first heading are a section too (key ""): Claude Code's own index is
  often a flat list with no heading at all.
- A section is known by its heading line (stripped), an entry by its pointer target
  (normalised: `<>` and `#`/`?` parts removed, %-escapes decoded, `./` folded); the same
  heading or target a second time in one file gets the occurrence number 2, and so on, so a
  duplicate is a line of its own and never silently folded into the first.
- Headings, pointers, fences and HTML comments are told apart the way the store reader tells
  them (engramory.store.reader): nothing inside a code fence, an HTML comment or a leading YAML
  frontmatter block is a heading or an entry.
- Bytes that are not UTF-8 survive: the text is decoded with surrogateescape and encoded back
  the same way, so a merge never changes a byte it did not mean to.

Pure functions over bytes; standard library only.
"""

from __future__ import annotations

import posixpath
import re

from engramory.store.pointers import LINK_RE, SCHEME_RE, is_remote, local_path, unquote
from engramory.store.reader import HEADING_RE

BOM = b"\xef\xbb\xbf"
ENTRY = "entry"
TEXT = "text"
PREAMBLE = ("", 1)  # the key of the section before the first heading

# `- [label](name.md)`: the common entry, whose target needs no normalising (one regex, not
# LINK_RE's scan); it gives what the full rule below gives for such a line.
_PLAIN_ENTRY = re.compile(r"- \[[^\]\n]*\]\(([A-Za-z0-9_][A-Za-z0-9_.-]*\.md)\)")
# a conflict marker line, any length from git's default of 7 (`%L` may ask for more)
MARKER_RE = re.compile(r"(<{7,}|>{7,}|\|{7,})(?: |$)|={7,}$")
Key = tuple[str, int]  # (text, occurrence): a section's heading or an entry's target


def first_pointer(line: str) -> str | None:
    """The note an index line is the entry of: its FIRST link whose target is a local `.md`
    file, normalised; None when the line has none. Any other link on the line is a reference
    (`- [Owner](owner.md) - runs the [dashboard](dash.md)` is owner.md's line). The same rule
    as the store reader's line pointer (issue 19); kept here until the two meet in one place."""
    fast = _PLAIN_ENTRY.match(line)
    if fast is not None:
        return fast.group(1)
    if "](" not in line:
        return None
    for m in LINK_RE.finditer(line):
        target = m.group(2)
        if target.startswith("<"):
            target = target[1:-1]
        target = target.split("#", 1)[0].split("?", 1)[0]
        if target[-3:].lower() != ".md":
            continue
        if ":" in target and SCHEME_RE.match(target):
            if is_remote(target):
                continue
            target = local_path(target)
        if "%" in target:
            target = unquote(target)
        if "/" in target or target.startswith("."):
            target = posixpath.normpath(target)
        return target
    return None


class Item:
    """One line of a section: `kind` ENTRY (then `key` is its (target, occurrence)) or TEXT."""

    __slots__ = ("kind", "text", "key")

    def __init__(self, kind: str, text: str, key: Key | None = None) -> None:
        self.kind = kind
        self.text = text
        self.key = key

    def __repr__(self) -> str:
        return "Item(%s, %r)" % (self.kind, self.text)


class Section:
    """A heading (None for the preamble) and the lines under it, in file order."""

    __slots__ = ("key", "heading", "items")

    def __init__(self, key: Key, heading: str | None) -> None:
        self.key = key
        self.heading = heading
        self.items: list[Item] = []


class Index:
    """A parsed index: its sections in order, and how its bytes end (kept for the output)."""

    __slots__ = ("bom", "nl", "final_nl", "sections", "by_key")

    def __init__(self, bom: bool, nl: str, final_nl: bool) -> None:
        self.bom = bom
        self.nl = nl
        self.final_nl = final_nl
        self.sections: list[Section] = []
        self.by_key: dict[Key, tuple[Key, str]] = {}  # filled by parse()

    def entries(self) -> dict[Key, tuple[Key, str]]:
        """entry key -> (section key, line text), in file order."""
        return self.by_key

    def lines(self) -> list[str]:
        out: list[str] = []
        for s in self.sections:
            if s.heading is not None:
                out.append(s.heading)
            out.extend(it.text for it in s.items)
        return out


def decode(data: bytes) -> tuple[bool, str, bool, list[str]]:
    """(BOM, newline, ends with a newline, lines without their line ends). A file is CRLF when
    it holds one; only then is a CR before LF taken as part of the line end."""
    bom = data.startswith(BOM)
    text = data[3:].decode("utf-8", "surrogateescape") if bom else data.decode("utf-8", "surrogateescape")
    nl = "\r\n" if "\r\n" in text else "\n"
    final_nl = text.endswith("\n")
    lines = text.split("\n")
    if final_nl or not text:
        lines.pop()
    if nl == "\r\n":
        lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
    return bom, nl, final_nl, lines


def encode(lines: list[str], bom: bool, nl: str, final_nl: bool) -> bytes:
    text = nl.join(lines)
    if final_nl and lines:
        text += nl
    data = text.encode("utf-8", "surrogateescape")
    return BOM + data if bom else data


def _frontmatter_end(lines: list[str]) -> int:
    """How many leading lines are a YAML frontmatter block (0 when there is none)."""
    if not lines or lines[0].strip() != "---":
        return 0
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            return i + 1
    return 0


_HEADING = "heading"


def classify(line: str) -> tuple[str, str | None]:
    """(ENTRY, target), (_HEADING, stripped heading) or (TEXT, None) for a line outside fences,
    comments and frontmatter."""
    stripped = line.strip()
    if stripped[:1] == "#" and HEADING_RE.match(stripped):
        return _HEADING, stripped
    if "](" in line:
        target = first_pointer(line)
        if target is not None:
            return ENTRY, target
    return TEXT, None


def _blocks(text_lines: list[str]) -> list[bool]:
    """Per line, whether it is inside a leading frontmatter block, a code fence or an HTML
    comment (or is one of their fences): such a line is text, whatever it looks like."""
    skip = _frontmatter_end(text_lines)
    out = [i < skip for i in range(len(text_lines))]
    in_fence = in_comment = False
    for i in range(skip, len(text_lines)):
        line = text_lines[i]
        stripped = line.strip()
        if in_comment:
            out[i] = True
            in_comment = "-->" not in line
        elif stripped.startswith("```") or stripped.startswith("~~~"):
            out[i] = True
            in_fence = not in_fence
        elif in_fence:
            out[i] = True
        elif stripped.startswith("<!--"):
            out[i] = True
            in_comment = "-->" not in stripped[4:]
    return out


def _has_blocks(data: bytes) -> bool:
    head = data[3:6] if data.startswith(BOM) else data[:3]
    return head == b"---" or b"```" in data or b"~~~" in data or b"<!--" in data


def _known(line: str) -> tuple[str, str | None, Item]:
    """classify(line) and the line's Item (an entry's as its first occurrence)."""
    kind, what = classify(line)
    return kind, what, Item(kind, line, (what, 1) if kind is ENTRY and what is not None else None)


CACHE_LINES = 1 << 14  # lines whose reading is kept between merges of one process
_cache: dict[str, tuple[str, str | None, Item]] = {}


def shared_cache() -> dict[str, tuple[str, str | None, Item]]:
    """The reading of lines seen by earlier parses of this process (a process that merges many
    indexes, --resolve, an undo by key, reads each common line once), emptied past CACHE_LINES
    so it stays bounded. What a line is never depends on where it was seen."""
    if len(_cache) > CACHE_LINES:
        _cache.clear()
    return _cache


def parse(data: bytes, cache: dict[str, tuple[str, str | None, Item]] | None = None) -> Index:
    """The index in `data`. `cache` (line -> what it is) may be shared by the versions of one
    merge: most of their lines are the same, and are then read once (Items are never changed,
    so the versions share them)."""
    known: dict[str, tuple[str, str | None, Item]] = {} if cache is None else cache
    bom, nl, final_nl, lines = decode(data)
    index = Index(bom, nl, final_nl)
    section = Section(PREAMBLE, None)
    index.sections.append(section)
    seen_heads: dict[str, int] = {}
    seen_keys: dict[str, int] = {}
    inside = _blocks(lines) if _has_blocks(data) else None
    get = known.get
    items = section.items
    by_key = index.by_key
    for i, line in enumerate(lines):
        found = get(line)
        if found is None:
            found = known[line] = _known(line)
        kind, what, item = found
        if kind is TEXT or what is None:
            items.append(item)
        elif inside is not None and inside[i]:
            items.append(Item(TEXT, line))
        elif kind is ENTRY:
            if what in seen_keys:
                n = seen_keys[what] = seen_keys[what] + 1
                item = Item(ENTRY, line, (what, n))
            else:
                seen_keys[what] = 1
            items.append(item)
            by_key[item.key or (what, 1)] = (section.key, line)
        else:
            n = seen_heads[what] = seen_heads.get(what, 0) + 1
            section = Section((what, n), line)
            index.sections.append(section)
            items = section.items
    return index


def key_name(key: Key) -> str:
    """How a key is named in a message: the target, with its occurrence when it is a repeat."""
    return key[0] if key[1] == 1 else "%s (occurrence %d)" % (key[0], key[1])
