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


def units_of(data: bytes, unit: str) -> int:
    """The size of `data` in `unit`. Undecodable bytes count as one replacement character."""
    if unit == BYTES:
        return len(data)
    if data.isascii():
        return len(data)
    text = data.decode("utf-8", "replace")
    if unit == CHARS:
        return len(text)
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)  # astral: a surrogate pair


class Window:
    """How one host loads an index into the model's context: the unit its size limit counts,
    the line and size limits (None: no limit of that kind), whether the text is trimmed
    before counting, whether YAML frontmatter and HTML comments count against the lines, and
    which part survives a cut ("head": the start; "head-tail": start and end, middle dropped).
    `note` is one line for `engramory hosts` and the docs, e.g. where it was measured."""

    __slots__ = ("unit", "lines", "size", "trim", "skip_frontmatter", "skip_comments", "keep", "note")

    def __init__(
        self,
        unit: str = BYTES,
        lines: "int | None" = HARD_LINES,
        size: "int | None" = HARD_BYTES,
        trim: bool = False,
        skip_frontmatter: bool = False,
        skip_comments: bool = False,
        keep: str = "head",
        note: str = "",
    ) -> None:
        self.unit = unit
        self.lines = lines
        self.size = size
        self.trim = trim
        self.skip_frontmatter = skip_frontmatter
        self.skip_comments = skip_comments
        self.keep = keep
        self.note = note

    def __repr__(self) -> str:
        return "Window(%s lines, %s %s, keep=%s)" % (self.lines, self.size, self.unit, self.keep)

    def describe(self) -> str:
        parts = []
        if self.lines is not None:
            parts.append("%s lines" % "{:,}".format(self.lines))
        if self.size is not None:
            parts.append("%s %s" % ("{:,}".format(self.size), self.unit))
        text = " and ".join(parts) if parts else "no limit (the whole file loads)"
        if self.keep == "head-tail":
            text += ", start and end kept, the middle dropped"
        return text
