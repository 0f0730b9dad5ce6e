"""How a host's window lays out one index: the text it counts (BOM, frontmatter and HTML
comments skipped, trimmed, as `size.Window` says), where the cut lands, and which entries
fall outside. `size.Window.measure` answers the common case without this module; the rest
(`Window.layout`, `.outside`, `.loaded_length`) is here so that an ordinary index edit does not
pay for importing it.

It also holds how an entry is quoted when a message shows it (`clean`, `quote`; re-exported by
engramory.store.secrets): a deny names the entries that would fall outside, and one module less to
import on a deny is a tenth of a millisecond.
"""

from engramory.size import CHARS, HEAD_TAIL, JS_SPACE, UTF16, text_units

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from engramory.size import Window


def _cut_units(text: str, n: int, unit: str) -> int:
    """The index in `text` just after its first `n` units (never inside a character: a
    surrogate pair or a UTF-8 sequence that would straddle the cut is left out)."""
    if n <= 0:
        return 0
    if unit == CHARS or text.isascii():
        return min(n, len(text))
    count = 0
    for i, ch in enumerate(text):
        o = ord(ch)
        w = (2 if o > 0xFFFF else 1) if unit == UTF16 else (1 if o < 0x80 else 2 if o < 0x800 else 3 if o < 0x10000 else 4)
        if count + w > n:
            return i
        count += w
    return len(text)


def _tail_start(text: str, n: int, unit: str) -> int:
    """The index in `text` where its last `n` units start."""
    if n <= 0:
        return len(text)
    total = text_units(text, unit)
    if total <= n:
        return 0
    return _cut_units(text, total - n, unit) if unit != CHARS else len(text) - n


class Layout:
    """An index as one host counts it: `text` is the counted text (after BOM, frontmatter and
    comment skipping and trimming, as the window says), `lines` and `units` its size, and
    `head_end` / `tail_start` the parts of `text` the host loads ([0:head_end] and, for a
    head-tail window, [tail_start:]). `origin(i)` gives the 1-based line of the file that the
    counted text's position `i` comes from."""

    __slots__ = ("text", "lines", "units", "head_end", "tail_start", "_segments", "_source")

    def __init__(self, text: str, segments: "list[tuple[int, int]]", source: str) -> None:
        self.text = text
        self._segments = segments  # (start in text, start in source), ascending
        self._source = source
        self.lines = text.count("\n") + 1 if text else 0
        self.units = 0
        self.head_end = len(text)
        self.tail_start = len(text)

    def origin(self, i: int) -> int:
        seg_text, seg_src = 0, 0
        for t, s in self._segments:
            if t > i:
                break
            seg_text, seg_src = t, s
        return self._source.count("\n", 0, seg_src + (i - seg_text)) + 1

    @property
    def whole(self) -> bool:
        return self.head_end >= len(self.text)

    def entries(self, start: int = 0) -> "Iterator[tuple[int, str, bool]]":
        """(file line number, stripped text, loaded) for each non-blank counted line from
        the line holding position `start` on; a line the cut runs through counts as not
        loaded (the host shows only part of it)."""
        text = self.text
        n = len(text)
        pos = text.rfind("\n", 0, start) + 1 if start else 0
        number = self.origin(pos)
        src_at = self._src_index(pos)
        while pos <= n:
            end = text.find("\n", pos)
            if end < 0:
                end = n
            line = text[pos:end].strip(JS_SPACE)
            if line:
                here = self._src_index(pos)
                number += self._source.count("\n", src_at, here)
                src_at = here
                loaded = end <= self.head_end or pos >= self.tail_start
                yield number, line, loaded
            pos = end + 1

    def _src_index(self, i: int) -> int:
        seg_text, seg_src = 0, 0
        for t, s in self._segments:
            if t > i:
                break
            seg_text, seg_src = t, s
        return seg_src + (i - seg_text)

    def outside(self) -> "Iterator[tuple[int, str]]":
        """(file line number, stripped text) of each entry the host does not load in full."""
        if self.whole:
            return
        for number, line, loaded in self.entries(self.head_end):
            if not loaded:
                yield number, line


_FRONTMATTER = None


def _frontmatter_end(text: str) -> int:
    """Where YAML frontmatter at the start of `text` ends (0: none), matched as Claude Code
    2.1.332 matches it: /^---\\s*\\n([\\s\\S]*?)---\\s*\\n?/ (JavaScript's \\s), tried only when
    a second "---" exists past offset 3. The lazy body ends at the first "---" anywhere, and
    the trailing \\s* swallows blank lines and the next line's indentation."""
    global _FRONTMATTER
    if not text.startswith("---") or text.find("---", 3) < 0:
        return 0
    if _FRONTMATTER is None:
        import re  # only for an index that starts like frontmatter: re costs the hot path

        s = "[" + JS_SPACE.replace("\\", "") + "]"
        _FRONTMATTER = re.compile("---%s*\n[\\s\\S]*?---%s*\n?" % (s, s))
    m = _FRONTMATTER.match(text)
    return m.end() if m else 0


def _fence_opener(line: str, stripped: str) -> str:
    """The fence ("```" or "~~~") `line` opens (`stripped`: it without leading spaces), or ""."""
    if len(line) - len(stripped) <= 3 and (stripped.startswith("```") or stripped.startswith("~~~")):
        return stripped[:3]
    return ""


def _block_end(text: str, close: int) -> int:
    """Where a comment block whose first "-->" is at `close` ends: the end of that line and
    the line breaks after it."""
    n = len(text)
    stop = text.find("\n", close + 3)
    stop = n if stop < 0 else stop
    while stop < n and text[stop] == "\n":
        stop += 1
    return stop


def _comment_blocks(text: str) -> "list[tuple[int, int, str]]":
    """Block-level HTML comments the host drops, as (start, end, what stays) in `text`
    (LF line breaks). Claude Code lexes the index as Markdown and removes each top-level
    HTML block whose text starts with "<!--" and holds "-->": the block runs to the end of
    the line holding the first "-->" and takes the line breaks after it; what the block
    holds besides comments stays when it is not blank. Modelled conservatively: only a
    comment starting a line at column 0, outside fenced code, and not continuing an HTML
    block, is dropped (a comment the model keeps but the host drops only makes the guard
    count more than the host, never less)."""
    out: list[tuple[int, int, str]] = []
    pos = 0
    n = len(text)
    fence = ""
    prev_html = False
    closes = True  # False once a search for "-->" found none: no later "<!--" can close either
    while pos < n:
        end = text.find("\n", pos)
        if end < 0:
            end = n
        line = text[pos:end]
        stripped = line.lstrip(" ")
        if fence:
            if stripped.startswith(fence) and len(line) - len(stripped) <= 3:
                fence = ""
            pos = end + 1
            continue
        opener = _fence_opener(line, stripped)
        if opener:
            fence = opener
            prev_html = False
            pos = end + 1
            continue
        if line.startswith("<!--") and not prev_html and closes:
            close = text.find("-->", pos + 4)
            closes = close >= 0
            if close >= 0:
                stop = _block_end(text, close)
                block = text[pos:stop]
                rest = _strip_comments(block)
                out.append((pos, stop, rest if rest.strip(JS_SPACE) else ""))
                pos = stop
                prev_html = False
                continue
        # An HTML block (a line opening with "<") runs to the next blank line, and a
        # comment inside it stays: the block's text does not start with "<!--".
        if not line.strip(JS_SPACE):
            prev_html = False
        elif line.startswith("<"):
            prev_html = True
        pos = end + 1
    return out


def comment_lines(text: str) -> "dict[int, str]":
    """The one comment model of an index's lines, layout's (which matches the host), for
    engramory.store and notes.IndexLines too: line index (0-based, lines split at LF) -> what
    the host keeps of that line, for each line of a comment block it drops (`_comment_blocks`,
    after any frontmatter): "" for a line wholly inside comments, the rest of a line that also
    holds something else (`<!-- pinned --> - [a](a.md)`). An unclosed `<!--` is no comment:
    the host loads it and every line after it."""
    if "<!--" not in text:
        return {}
    base = _frontmatter_end(text)
    out: dict[int, str] = {}
    line, counted = 0, 0
    for start, stop, _rest in _comment_blocks(text[base:]):
        a, b = base + start, base + stop
        line += text.count("\n", counted, a)
        counted = a
        pieces = _strip_comments(text[a:b], keep_breaks=True).split("\n")
        if text.endswith("\n", a, b):
            pieces.pop()  # the block takes the line breaks after it, not the next line
        for k, piece in enumerate(pieces):
            out[line + k] = piece
    return out


def _strip_comments(block: str, keep_breaks: bool = False) -> str:
    out = []
    i = 0
    while True:
        a = block.find("<!--", i)
        if a < 0:
            break
        b = block.find("-->", a + 4)
        if b < 0:
            break
        out.append(block[i:a])
        if keep_breaks:
            out.append("\n" * block.count("\n", a, b + 3))
        i = b + 3
    out.append(block[i:])
    return "".join(out)


def _without_comments(source: str, text: str, base: int) -> "tuple[str, str, list[tuple[int, int]]] | None":
    """`text` (what follows `base` characters of `source`) without the comment blocks the host
    drops, the normalised source and the segments mapping one to the other; None when it drops
    none. The host lexes the text with line breaks made LF (lone CRs too) and rebuilds it from
    that normalised text when it removed anything."""
    norm_src = source[:base] + text.replace("\r\n", "\n").replace("\r", "\n")
    body = norm_src[base:]
    blocks = _comment_blocks(body)
    if not blocks:
        return None
    pieces: list[str] = []
    segments = []
    at = 0
    length = 0
    for start, stop, rest in blocks:
        segments.append((length, base + at))
        pieces.append(body[at:start])
        length += start - at
        if rest:
            segments.append((length, base + start))
            pieces.append(rest)
            length += len(rest)
        at = stop
    segments.append((length, base + at))
    pieces.append(body[at:])
    return "".join(pieces), norm_src, segments


def layout(window: "Window", data: bytes, cut: bool = True) -> "Layout":
    """The counted text of `data`, its size, and (when `cut`) what the host loads."""
    text = data.decode("utf-8", "replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    source = text
    segments = [(0, 0)]
    if window.skip_frontmatter:
        fm = _frontmatter_end(text)
        if fm:
            text = text[fm:]
            segments = [(0, fm)]
    if window.skip_comments and "<!--" in text:
        dropped = _without_comments(source, text, segments[0][1])
        if dropped is not None:
            text, source, segments = dropped
    if window.trim:
        lead = len(text) - len(text.lstrip(JS_SPACE))
        if lead:
            text = text[lead:]
            segments = _shift(segments, lead)
        text = text.rstrip(JS_SPACE)
    lay = Layout(text, segments, source)
    counted = text if window.crlf_counts else text.replace("\r\n", "\n")
    lay.units = text_units(counted, window.unit)
    if not window.trim and text.endswith("\n"):
        lay.lines -= 1  # a trailing newline ends the last line; it starts no new one
    if cut:
        _cut(window, lay)
    return lay

def _cut(window: "Window", lay: "Layout") -> None:
    text = lay.text
    end = len(text)
    if window.lines is not None and lay.lines > window.lines:
        pos = -1
        for _ in range(window.lines):
            pos = text.find("\n", pos + 1)
        end = pos
    if window.size is None:
        lay.head_end = end
        return
    if window.keep == HEAD_TAIL:
        if lay.units > window.size:
            lay.head_end = _cut_units(text, window.head or 0, window.unit)
            lay.tail_start = max(lay.head_end, _tail_start(text, window.tail or 0, window.unit))
        else:
            lay.head_end = end
        return
    head = text[:end]
    if text_units(head, window.unit) > window.size:
        limit = _cut_units(head, window.size, window.unit)
        # JavaScript's lastIndexOf("\n", size): a line break at index <= size.
        nl = head.rfind("\n", 0, limit + 1)
        end = nl if nl > 0 else limit
    lay.head_end = end

def loaded_length(window: "Window", data: bytes) -> int:
    """How many leading bytes of `data` the host loads in full (HEAD windows; for a
    HEAD_TAIL window, the head). Entries after them are cut or dropped."""
    lay = window.layout(data)
    if lay.whole:
        return len(data)
    # Map the end of the loaded head back to a file offset (via its line).
    if lay.head_end <= 0:
        return 0
    line = lay.origin(lay.head_end - 1)
    pos = -1
    for _ in range(line):
        pos = data.find(b"\n", pos + 1)
        if pos < 0:
            return len(data)
    return pos + 1


def _shift(segments: "list[tuple[int, int]]", n: int) -> "list[tuple[int, int]]":
    """Segments after dropping the first `n` characters of the text they map."""
    out: list[tuple[int, int]] = []
    for i, (t, s) in enumerate(segments):
        nxt = segments[i + 1][0] if i + 1 < len(segments) else None
        if nxt is not None and nxt <= n:
            continue
        if t >= n:
            out.append((t - n, s))
        else:
            out.append((0, s + (n - t)))
    return out or [(0, 0)]


# --- which lines the host loads whole, and what it skips (issue 19: a write must not hide) ---


def counted_lines(window: "Window", data: bytes) -> "Iterator[tuple[int, str, bool, bool]]":
    """(file line number, the part of that line the host counts, stripped; whole; loaded) for
    each non-blank piece of counted text. `whole`: the piece is the entire line (nothing of it
    fell into frontmatter or a comment block); `loaded`: it lies inside the window's cut. A line
    the host skips entirely yields nothing. Linear in the size of the index."""
    lay = layout(window, data)
    text, source, segments = lay.text, lay._source, lay._segments
    line_no, counted_to = 1, 0
    for k, (t, s) in enumerate(segments):
        t_end = min(segments[k + 1][0] if k + 1 < len(segments) else len(text), len(text))
        if t_end <= t:
            continue
        piece = text[t:t_end]
        exact = source.startswith(piece, s)  # False for what a comment block keeps besides comments
        line_no += source.count("\n", counted_to, s)
        counted_to = s
        a = 0
        while a <= len(piece):
            b = piece.find("\n", a)
            b = len(piece) if b < 0 else b
            content = piece[a:b].strip(JS_SPACE)
            if content:
                whole = exact and _alone(source, s + a, s + b)
                loaded = t + b <= lay.head_end or t + a >= lay.tail_start
                yield line_no + piece.count("\n", 0, a), content, whole, loaded
            a = b + 1
        if exact:  # a kept remainder maps to its block only roughly: the next segment recounts
            line_no += piece.count("\n")
            counted_to = s + len(piece)


def _alone(source: str, a: int, b: int) -> bool:
    """Whether source[a:b] is its whole line, but for white space around it."""
    start = source.rfind("\n", 0, a) + 1
    end = source.find("\n", b)
    end = len(source) if end < 0 else end
    return not source[start:a].strip(JS_SPACE) and not source[b:end].strip(JS_SPACE)


def skipped_spans(window: "Window", data: bytes) -> "list[tuple[int, int, str]]":
    """(first line, last line, what) of each part of `data` the host skips: its YAML
    frontmatter ("frontmatter") and block-level HTML comments ("an HTML comment")."""
    text = data.decode("utf-8", "replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    out: list[tuple[int, int, str]] = []
    base = 0
    if window.skip_frontmatter:
        base = _frontmatter_end(text)
        if base:
            out.append((1, text.count("\n", 0, base - 1) + 1, "frontmatter"))
    if window.skip_comments and "<!--" in text:
        norm = text[:base] + text[base:].replace("\r\n", "\n").replace("\r", "\n")
        body = norm[base:]
        for start, stop, _rest in _comment_blocks(body):
            first = norm.count("\n", 0, base + start) + 1
            out.append((first, first + body.count("\n", start, max(start, stop - 1)), "an HTML comment"))
    return out


def why_skipped(spans: "list[tuple[int, int, str]]", line: int) -> str:
    """Where line `line` falls among `spans`, in words ("" when outside every one)."""
    for first, last, what in spans:
        if first <= line <= last:
            if what == "frontmatter":
                return "inside the frontmatter the host skips (lines %d-%d: it starts with \"---\" and ends at " \
                       "the next \"---\", wherever it is)" % (first, last)
            return "inside %s the host skips (lines %d-%d)" % (what, first, last)
    return ""


def _whole_lines(window: "Window", data: bytes) -> "list[tuple[int, str]]":
    """(line number, stripped text) of each line of `data` the host loads whole."""
    return [(number, t) for number, t, whole, loaded in counted_lines(window, data) if whole and loaded]


def _tally(keys: "Iterable[str]") -> "dict[str, int]":
    counts: dict[str, int] = {}
    for key in keys:
        counts[key] = counts.get(key, 0) + 1
    return counts


def _take(counts: "dict[str, int]", key: str) -> bool:
    """Use up one `key` of `counts`: False when none is left."""
    if counts.get(key, 0) > 0:
        counts[key] -= 1
        return True
    return False


def lost_entries(window: "Window", before: bytes, after: bytes, removed: "list[str]",
                 added: "list[str]") -> "tuple[list[tuple[int, str]], list[str]]":
    """What a write of `after` over `before` costs the host's view: the lines it loads whole in
    `before` and would not in `after`, as (line in `before`, text), less those the write meant
    to take out or replace (`removed`); and the lines the write puts in (`added`) that it would
    not load whole. Lines are matched by their stripped text, so a line that moves is not lost."""
    now = _tally(t for _, t in _whole_lines(window, after))
    gone = _tally(t.strip(JS_SPACE) for t in removed)
    lost = [(number, t) for number, t in _whole_lines(window, before) if not _take(gone, t) and not _take(now, t)]
    # a blank line is no entry
    missing = [line for line in added if line.strip(JS_SPACE) and not _take(now, line.strip(JS_SPACE))]
    return lost, missing


# --- quoting text taken from a memory file (engramory.store.secrets re-exports these) ---
#
# A note is untrusted text: echoing it whole would let a hostile note flood a report or
# steer the agent that reads the hook's message. So every echo is cut short, stripped of
# control, invisible and bidirectional characters, and put in quotes.

# What is hidden (zero-width, bidi, soft hyphen, BOM, tags, joiners and variation selectors)
# is engramory.hiddenchars' one table; an excerpt drops all of it. Every code point of it is
# past ASCII, so an ASCII text (a deny's usual excerpt) is cleaned without importing it.


def clean(text: str) -> str:
    """`text` with control characters shown as spaces and hidden characters removed."""
    if text.isascii():
        return "".join(" " if ch < " " or ch == "\x7f" else ch for ch in text)
    from engramory.hiddenchars import ANY as hidden  # lazy: only a text past ASCII can hide anything

    out = []
    for ch in text:
        o = ord(ch)
        if o < 0x20 or 0x7F <= o < 0xA0:
            out.append(" ")
        elif o in hidden or 0xD800 <= o < 0xE000:
            continue
        else:
            out.append(ch)
    return "".join(out)


def quote(text: "str | bytes", limit: int = 60) -> str:
    """A short, safe, double-quoted excerpt: at most `limit` characters of content."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    text = " ".join(clean(text).split())
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "\u2026"
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
