"""What a parsed patch is, whichever format it came in (V4A: engramory.patches; unified diffs:
engramory.unified): the kinds of file operation, FileOp and Hunk, PatchError, and the line and
byte helpers both parsers and appliers share. A leaf, so that patches and unified each import it
and never each other (patches.parse and patches.apply_to reach unified one way only).
Standard library only."""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

ADD = "add"
UPDATE = "update"
DELETE = "delete"

V4A = "v4a"
UNIFIED = "unified"


class PatchError(ValueError):
    """The text is not a patch this module can read, or the host would refuse it."""


class Hunk:
    """One change inside a file: `old` lines become `new` lines (no line terminators)."""

    __slots__ = ("context", "old", "new", "at_eof", "start", "old_no_eol", "new_no_eol", "kept")

    def __init__(self) -> "None":
        self.context: str | None = None  # V4A `@@ <line>`: seek to this line first
        self.old: list[str] = []
        self.new: list[str] = []
        self.at_eof = False  # V4A `*** End of File`: the old lines end the file
        self.start: int | None = None  # unified: 1-based old start line, a hint
        self.old_no_eol = False  # unified `\ No newline at end of file` on each side
        self.new_no_eol = False
        self.kept: list[tuple[int, int]] = []  # (old index, new index) of each context line

    def __repr__(self) -> "str":
        return "Hunk(-%d +%d)" % (len(self.old), len(self.new))


class FileOp:
    """What a patch does to one file. `content` is the whole new text for ADD."""

    __slots__ = ("kind", "path", "move_to", "content", "hunks", "format")

    def __init__(self, kind: "str", path: "str", fmt: "str") -> "None":
        self.kind = kind
        self.path = path
        self.move_to: str | None = None
        self.content: str | None = None
        self.hunks: list[Hunk] = []
        self.format = fmt

    @property
    def target(self) -> "str":
        """The file that holds the result (the destination of a move)."""
        return self.move_to or self.path

    def __repr__(self) -> "str":
        return "FileOp(%r, %r%s, %d hunks)" % (
            self.kind, self.path, ", move_to=%r" % self.move_to if self.move_to else "", len(self.hunks),
        )


def _lines(text: "str") -> "list[str]":
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _path(raw: "str") -> "str":
    path = raw.strip()
    if not path or "\x00" in path:
        raise PatchError("a file operation names no usable path")
    return path


def _decode(before: "bytes") -> "str":
    # surrogateescape: bytes that are not UTF-8 come back out unchanged
    return before.decode("utf-8", "surrogateescape")


def _encode(text: "str") -> "bytes":
    return text.encode("utf-8", "surrogateescape")


def _apply(before: "bytes | None", op: "FileOp", updated: "Callable[[bytes], bytes | None]") -> "bytes | None":
    if op.kind == ADD:
        assert op.content is not None
        return _encode(op.content)
    if op.kind == DELETE:
        return b"" if before is not None else None
    if before is None:
        return None
    try:
        return updated(before)
    except PatchError:
        return None
