"""How big an index is, the caps it is held to, and the verdict.

Every count in the project goes through `count_lines` and `len(bytes)`: the hook, `check`,
`doctor` and every host shim. Imports nothing: this module sits on the hook's hot path.
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

# Claude Code 2.1.332 was measured to load exactly the first 200 lines and 25,000 bytes of
# MEMORY.md (the byte cut falls at the last newline at or before byte 25,000). So the hard
# caps are the load window itself, and the warn caps leave room to compact before it.
WARN_LINES = 150
WARN_BYTES = 20_000
HARD_LINES = 200
HARD_BYTES = 25_000

OK = "OK"
WARN = "WARN"
OVER = "OVER"


def count_lines(data: bytes) -> int:
    """Lines as the host counts them: each b"\\n" ends one, and a non-empty unterminated
    tail is one more. CRLF counts once; a lone CR is not a line break (unlike splitlines)."""
    n = data.count(b"\n")
    if data and not data.endswith(b"\n"):
        n += 1
    return n


class Caps:
    """The four caps an index is held to. 'Over' always means strictly greater."""

    __slots__ = ("warn_lines", "warn_bytes", "hard_lines", "hard_bytes")

    def __init__(
        self,
        warn_lines: int = WARN_LINES,
        warn_bytes: int = WARN_BYTES,
        hard_lines: int = HARD_LINES,
        hard_bytes: int = HARD_BYTES,
    ) -> None:
        self.warn_lines = warn_lines
        self.warn_bytes = warn_bytes
        self.hard_lines = hard_lines
        self.hard_bytes = hard_bytes

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Caps) and self.as_dict() == other.as_dict()

    def __repr__(self) -> str:
        return "Caps(%r)" % (self.as_dict(),)

    def as_dict(self) -> "dict[str, int]":
        return {
            "warn_lines": self.warn_lines,
            "warn_bytes": self.warn_bytes,
            "hard_lines": self.hard_lines,
            "hard_bytes": self.hard_bytes,
        }


def verdict(lines: "int | None", nbytes: int, caps: "Caps") -> str:
    """OK, WARN or OVER for an index of this size. `lines` may be None when only the
    byte size is known (a file too large to read); bytes alone then decide."""
    if nbytes > caps.hard_bytes or (lines is not None and lines > caps.hard_lines):
        return OVER
    if nbytes > caps.warn_bytes or (lines is not None and lines > caps.warn_lines):
        return WARN
    return OK


def loaded_length(data: bytes, caps: "Caps") -> int:
    """How many leading bytes of `data` fall inside the load window: the first
    `hard_lines` lines, cut back to the last newline at or before `hard_bytes`."""
    end = len(data)
    if count_lines(data) > caps.hard_lines:
        pos = -1
        for _ in range(caps.hard_lines):
            pos = data.index(b"\n", pos + 1)
        end = pos + 1
    if end > caps.hard_bytes:
        cut = data.rfind(b"\n", 0, caps.hard_bytes)
        end = cut + 1  # -1 + 1 == 0: no newline at all means nothing loads
    return end


def lines_outside_window(data: bytes, caps: "Caps") -> "Iterator[tuple[int, bytes]]":
    """(1-based line number, line) for each non-blank line the host would not load."""
    start = loaded_length(data, caps)
    if start >= len(data):
        return
    number = data.count(b"\n", 0, start) + 1
    for line in data[start:].split(b"\n"):
        stripped = line.strip()
        if stripped:
            yield number, stripped
        number += 1


# --- a host's load window ---------------------------------------------------------------
# The unit a host counts an index's size in. Claude Code counts UTF-16 code units of the
# trimmed text (in ASCII equal to bytes); OpenClaw and Qwen Code count characters.
BYTES = "bytes"
UTF16 = "UTF-16 units"
CHARS = "characters"
UNITS = (BYTES, UTF16, CHARS)
HEAD = "head"
HEAD_TAIL = "head-tail"

# What JavaScript's String.prototype.trim() strips (str.strip() differs: it also strips
# \x1c-\x1f and U+0085, and keeps U+FEFF).
JS_SPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_JS_SPACE_BYTES = b"\t\n\v\f\r "


def units_of(data: bytes, unit: str) -> int:
    """The size of `data` in `unit`. Undecodable bytes count as one replacement character."""
    if unit == BYTES or data.isascii():
        return len(data)
    return text_units(data.decode("utf-8", "replace"), unit)


def text_units(text: str, unit: str) -> int:
    """The size of `text` in `unit` (BYTES: its UTF-8 encoding, lone surrogates as U+FFFD)."""
    if unit == CHARS or text.isascii():
        return len(text)
    if unit == UTF16:
        return len(text.encode("utf-16-le", "surrogatepass")) >> 1
    return len(text.encode("utf-8", "replace"))


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

    def entries(self) -> "Iterator[tuple[int, str, bool]]":
        """(file line number, stripped text, loaded) for each non-blank counted line; a line
        the cut runs through counts as not loaded (the host shows only part of it)."""
        pos = 0
        text = self.text
        n = len(text)
        while pos <= n:
            end = text.find("\n", pos)
            if end < 0:
                end = n
            line = text[pos:end].strip(JS_SPACE)
            if line:
                loaded = end <= self.head_end or pos >= self.tail_start
                yield self.origin(pos), line, loaded
            pos = end + 1

    def outside(self) -> "Iterator[tuple[int, str]]":
        """(file line number, stripped text) of each entry the host does not load in full."""
        if self.whole:
            return
        for number, line, loaded in self.entries():
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
        if len(line) - len(stripped) <= 3 and (stripped.startswith("```") or stripped.startswith("~~~")):
            fence = stripped[:3]
            prev_html = False
            pos = end + 1
            continue
        if line.startswith("<!--") and not prev_html:
            close = text.find("-->", pos + 4)
            if close >= 0:
                stop = text.find("\n", close + 3)
                stop = n if stop < 0 else stop
                while stop < n and text[stop] == "\n":
                    stop += 1
                block = text[pos:stop]
                rest = _strip_comments(block)
                out.append((pos, stop, rest if rest.strip(JS_SPACE) else ""))
                pos = stop
                prev_html = False
                continue
        prev_html = line.startswith("<") and bool(line.strip())
        if not line.strip(JS_SPACE):
            prev_html = False
        pos = end + 1
    return out


def _strip_comments(block: str) -> str:
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
        i = b + 3
    out.append(block[i:])
    return "".join(out)


class Window:
    """How one host loads an index into the model's context.

    - `unit`: what its size limit counts: BYTES (UTF-8), UTF16 (JavaScript string length)
      or CHARS (code points).
    - `lines`, `size`: the line and size limits (None: no limit of that kind). The guard's
      caps default to them (see `caps()`); `ENGRAMORY_HARD` / `ENGRAMORY_HARD_BYTES` and a
      store config override the caps, in the same units.
    - `trim`: the text is trimmed (JavaScript `trim()`) before anything is counted.
    - `skip_frontmatter`, `skip_comments`: YAML frontmatter at the top and block-level HTML
      comments are removed before counting (Claude Code since 2.1.211).
    - `keep`: HEAD ("head": the first `lines` lines, then cut back to the last line break at
      or before `size` units; a first line longer than that is cut inside) or HEAD_TAIL
      ("head-tail", OpenClaw: past `size` units the first `head` and last `tail` units are
      kept, each cut anywhere, and the middle dropped).
    - `head`, `tail`: for HEAD_TAIL, the units kept at each end (default 75 % / 25 % of size).
    - `crlf_counts`: a CR before LF counts as one unit of size (Claude Code counts the raw
      text unless it removed a comment, which also turns CRLF into LF).
    - `note`: one line for `engramory hosts` and the docs, e.g. where it was measured.

    `measure(data) -> (lines, units)` is the size as the host counts it; `layout(data)`
    says, entry by entry, what it loads; `loaded_length(data)` how many leading bytes of the
    file it loads in full (HEAD windows)."""

    __slots__ = (
        "unit", "lines", "size", "trim", "skip_frontmatter", "skip_comments", "keep", "head",
        "tail", "crlf_counts", "note",
    )

    def __init__(
        self,
        unit: str = BYTES,
        lines: "int | None" = HARD_LINES,
        size: "int | None" = HARD_BYTES,
        trim: bool = False,
        skip_frontmatter: bool = False,
        skip_comments: bool = False,
        keep: str = HEAD,
        note: str = "",
        head: "int | None" = None,
        tail: "int | None" = None,
        crlf_counts: bool = True,
    ) -> None:
        if unit not in UNITS:
            raise ValueError("unit must be one of %s, not %r" % (", ".join(UNITS), unit))
        if keep not in (HEAD, HEAD_TAIL):
            raise ValueError("keep must be %r or %r, not %r" % (HEAD, HEAD_TAIL, keep))
        self.unit = unit
        self.lines = lines
        self.size = size
        self.trim = trim
        self.skip_frontmatter = skip_frontmatter
        self.skip_comments = skip_comments
        self.keep = keep
        self.note = note
        if keep == HEAD_TAIL and size is not None:
            head = size * 3 // 4 if head is None else head
            tail = size - head if tail is None else tail
        self.head = head
        self.tail = tail
        self.crlf_counts = crlf_counts

    def __repr__(self) -> str:
        return "Window(%s lines, %s %s, keep=%s)" % (self.lines, self.size, self.unit, self.keep)

    def limited(self, lines: "int | None", size: "int | None") -> "Window":
        """The same window with other limits (the caps in force, e.g. ENGRAMORY_HARD_BYTES)."""
        w = Window(
            self.unit, lines, size, self.trim, self.skip_frontmatter, self.skip_comments,
            self.keep, self.note, None, None, self.crlf_counts,
        )
        if self.keep == HEAD_TAIL and size is not None and self.size and self.head is not None:
            w.head = self.head * size // self.size
            w.tail = (self.tail or 0) * size // self.size
        return w

    def caps(self) -> "Caps":
        """The default caps for an index this host loads: hard = the window's limits (the
        standard 200 lines / 25,000 where the host has none), warn = 3/4 of the lines and
        4/5 of the size (150 / 20,000 for Claude Code)."""
        hl = self.lines if self.lines is not None else HARD_LINES
        hs = self.size if self.size is not None else HARD_BYTES
        return Caps(hl * 3 // 4, hs * 4 // 5, hl, hs)

    def describe(self) -> str:
        parts = []
        if self.lines is not None:
            parts.append("%s lines" % "{:,}".format(self.lines))
        if self.size is not None:
            parts.append("%s %s" % ("{:,}".format(self.size), self.unit))
        text = " and ".join(parts) if parts else "no limit (the whole file loads)"
        if self.keep == HEAD_TAIL:
            text += " (the first %s and last %s kept, the middle dropped)" % (
                "{:,}".format(self.head or 0), "{:,}".format(self.tail or 0),
            )
        extra = []
        if self.trim:
            extra.append("trimmed")
        if self.skip_frontmatter:
            extra.append("frontmatter")
        if self.skip_comments:
            extra.append("HTML comments")
        if extra:
            text += "; counted after %s" % (
                "trimming" if extra == ["trimmed"] else
                ("trimming, without " if self.trim else "without ") + " or ".join(e for e in extra if e != "trimmed")
            )
        return text

    # -- counting ----------------------------------------------------------------------

    def _fast(self, data: bytes) -> "tuple[int, int] | None":
        """measure() without decoding, for the common ASCII index with nothing to skip."""
        if not data.isascii() or (self.skip_comments and b"<!--" in data):
            return None
        if self.skip_frontmatter and data.startswith(b"---"):
            return None
        if self.trim:
            data = data.strip(_JS_SPACE_BYTES)
        if not self.trim:
            return count_lines(data), len(data)
        if not data:
            return 0, 0
        crs = 0 if self.crlf_counts else data.count(b"\r\n")
        return data.count(b"\n") + 1, len(data) - crs

    def measure(self, data: bytes) -> "tuple[int, int]":
        """(lines, units) of `data` as the host counts them against `lines` and `size`."""
        fast = self._fast(data)
        if fast is not None:
            return fast
        lay = self.layout(data, cut=False)
        return lay.lines, lay.units

    def layout(self, data: bytes, cut: bool = True) -> "Layout":
        """The counted text of `data`, its size, and (when `cut`) what the host loads."""
        text = data.decode("utf-8", "replace")
        if text.startswith("\ufeff"):
            text = text[1:]
        source = text
        segments = [(0, 0)]
        if self.skip_frontmatter:
            fm = _frontmatter_end(text)
            if fm:
                text = text[fm:]
                segments = [(0, fm)]
        if self.skip_comments and "<!--" in text:
            # The host lexes the text with line breaks made LF (lone CRs too) and rebuilds it
            # from that normalised text when it removed anything.
            base = segments[0][1]
            norm_src = source[:base] + text.replace("\r\n", "\n").replace("\r", "\n")
            body = norm_src[base:]
            blocks = _comment_blocks(body)
            if blocks:
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
                text = "".join(pieces)
                source = norm_src
        if self.trim:
            lead = len(text) - len(text.lstrip(JS_SPACE))
            if lead:
                text = text[lead:]
                segments = _shift(segments, lead)
            text = text.rstrip(JS_SPACE)
        lay = Layout(text, segments, source)
        counted = text if self.crlf_counts else text.replace("\r\n", "\n")
        lay.units = text_units(counted, self.unit)
        if not self.trim and text.endswith("\n"):
            lay.lines -= 1  # a trailing newline ends the last line; it starts no new one
        if cut:
            self._cut(lay)
        return lay

    def _cut(self, lay: "Layout") -> None:
        text = lay.text
        end = len(text)
        if self.lines is not None and lay.lines > self.lines:
            pos = -1
            for _ in range(self.lines):
                pos = text.find("\n", pos + 1)
            end = pos
        if self.size is None:
            lay.head_end = end
            return
        if self.keep == HEAD_TAIL:
            if lay.units > self.size:
                lay.head_end = _cut_units(text, self.head or 0, self.unit)
                lay.tail_start = max(lay.head_end, _tail_start(text, self.tail or 0, self.unit))
            else:
                lay.head_end = end
            return
        head = text[:end]
        if text_units(head, self.unit) > self.size:
            limit = _cut_units(head, self.size, self.unit)
            # JavaScript's lastIndexOf("\n", size): a line break at index <= size.
            nl = head.rfind("\n", 0, limit + 1)
            end = nl if nl > 0 else limit
        lay.head_end = end

    def loaded_length(self, data: bytes) -> int:
        """How many leading bytes of `data` the host loads in full (HEAD windows; for a
        HEAD_TAIL window, the head). Entries after them are cut or dropped."""
        lay = self.layout(data)
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

    def outside(self, data: bytes) -> "Iterator[tuple[int, str]]":
        """(file line number, stripped text) of each entry of `data` the host does not load
        in full: past the line limit, past the size cut, or in a head-tail window's middle."""
        lay = self.layout(data)
        return lay.outside()


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


# The window of an index whose host is not known (an ENGRAMORY_INDEX_PATH file a CLI check
# looks at, or a host that loads no index of its own): the standard caps, in bytes.
STANDARD = Window(note="the standard caps, in bytes")
