"""How big an index is, the caps it is held to, and the verdict.

Every count in the project goes through `count_lines` and `len(bytes)`: the hook, `check`,
`doctor` and every host shim. Imports nothing: this module sits on the hook's hot path.
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from engramory.layout import Layout

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


def _astral(utf8: bytes) -> int:
    """Characters past U+FFFF in UTF-8 bytes: their lead bytes are 0xF0-0xF4."""
    return len(utf8) - len(utf8.translate(None, b"\xf0\xf1\xf2\xf3\xf4"))


def text_units(text: str, unit: str) -> int:
    """The size of `text` in `unit` (BYTES: its UTF-8 encoding, lone surrogates as U+FFFD).
    No codec beyond UTF-8 is used: the utf-16 codec module costs the hook an import."""
    if unit == CHARS or text.isascii():
        return len(text)
    utf8 = text.encode("utf-8", "replace")
    if unit == UTF16:
        return len(text) + _astral(utf8)
    return len(utf8)


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

    def within(self, caps: "Caps") -> "Window":
        """The window as the guard enforces it: each of the host's limits, or the caps' hard
        limit where that is stricter. A limit the host does not have stays absent (a host
        that loads the whole file loses nothing, whatever the caps)."""
        lines = None if self.lines is None else min(self.lines, caps.hard_lines)
        size = None if self.size is None else min(self.size, caps.hard_bytes)
        if lines == self.lines and size == self.size:
            return self
        return self.limited(lines, size)

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
        """measure() without the layout, for the common index with nothing to skip: ASCII,
        or valid UTF-8 whose trimmed ends are ASCII (a non-ASCII space there would be
        trimmed by the host, and a BOM is dropped: those take the full layout)."""
        if (self.skip_comments and b"<!--" in data) or (self.skip_frontmatter and data.startswith(b"---")):
            return None
        if self.trim:
            data = data.strip(_JS_SPACE_BYTES)
            if not data:
                return 0, 0
        ascii_only = data.isascii()
        if not ascii_only:
            if data[0] >= 0x80 or data[-1] >= 0x80:
                return None
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                return None
        lines = data.count(b"\n") + 1 if self.trim else count_lines(data)
        if ascii_only or self.unit == BYTES:
            units = len(data)
        elif self.unit == CHARS:
            units = len(text)
        else:
            units = len(text) + _astral(data)
        if not self.crlf_counts:
            units -= data.count(b"\r\n")
        return lines, units

    def measure(self, data: bytes) -> "tuple[int, int]":
        """(lines, units) of `data` as the host counts them against `lines` and `size`."""
        fast = self._fast(data)
        if fast is not None:
            return fast
        lay = self.layout(data, cut=False)
        return lay.lines, lay.units

    def layout(self, data: bytes, cut: bool = True) -> "Layout":
        """The counted text of `data`, its size, and (when `cut`) what the host loads
        (engramory.layout: imported only when a file needs more than measure's fast path)."""
        # lazy: hot path (an ignored hook loads size, not layout) and cycle (layout imports size)
        from engramory import layout

        return layout.layout(self, data, cut)

    def loaded_length(self, data: bytes) -> int:
        """How many leading bytes of `data` the host loads in full (HEAD windows; for a
        HEAD_TAIL window, the head). Entries after them are cut or dropped."""
        # lazy: hot path (an ignored hook loads size, not layout) and cycle (layout imports size)
        from engramory import layout

        return layout.loaded_length(self, data)

    def outside(self, data: bytes) -> "Iterator[tuple[int, str]]":
        """(file line number, stripped text) of each entry of `data` the host does not load
        in full: past the line limit, past the size cut, or in a head-tail window's middle."""
        return self.layout(data).outside()


# The window of an index whose host is not known (an ENGRAMORY_INDEX_PATH file a CLI check
# looks at, or a host that loads no index of its own): the standard caps, in bytes.
STANDARD = Window(note="the standard caps, in bytes")


def claude_code_window() -> "Window":
    """Claude Code's window (engramory.hosts.claude.window returns it), kept here in the kernel
    because it is also the default of a reader that is given no window (engramory.describe):
    the kernel never reaches up into a host for it. Measured on 2.1.332 (shared reference,
    corrections of 2026-12): 200 lines, 25,000 UTF-16 units of the trimmed text; frontmatter
    and HTML comments do not count against the lines."""
    return Window(
        unit=UTF16, lines=200, size=25_000, trim=True, skip_frontmatter=True, skip_comments=True,
        note="measured on Claude Code 2.1.332",
    )


def n(value: int) -> str:
    """A count as every message prints it: 25,000 (the one formatter; a test holds it so)."""
    return "{:,}".format(value)
