"""Patch texts that name their own files: V4A (`*** Begin Patch`, as Codex apply_patch,
Hermes patch mode and OpenClaw apply_patch write them) and unified diffs (`--- a/x`,
`+++ b/x`, `@@ -1,2 +1,3 @@`). Host-neutral: parse into one FileOp per file, then predict
each file's bytes after the patch.

V4A is applied the way Codex's apply-patch applies it: each hunk's old lines are looked for
from where the previous hunk ended, first exactly, then ignoring trailing whitespace, then
ignoring surrounding whitespace, then with typographic dashes, quotes and spaces made plain;
the matched lines are replaced and the result always ends with a newline. A unified diff is
applied only where its old lines match exactly, nearest to the line number the hunk names.
Where the old lines are not found the prediction is None: the host either refuses the patch
or applies it fuzzily, and `size_delta` then gives the change the patch text itself states.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

ADD = "add"
UPDATE = "update"
DELETE = "delete"

V4A = "v4a"
UNIFIED = "unified"

_BEGIN = "*** Begin Patch"
_END = "*** End Patch"
_ADD = "*** Add File: "
_DELETE = "*** Delete File: "
_UPDATE = "*** Update File: "
_MOVE = "*** Move to: "
_EOF = "*** End of File"


class PatchError(ValueError):
    """The text is not a patch this module can read."""


class Hunk:
    """One change inside a file: `old` lines become `new` lines (no line terminators)."""

    __slots__ = ("context", "old", "new", "at_eof", "start", "old_no_eol", "new_no_eol")

    def __init__(self) -> None:
        self.context: str | None = None  # V4A `@@ <line>`: seek to this line first
        self.old: list[str] = []
        self.new: list[str] = []
        self.at_eof = False  # V4A `*** End of File`: the old lines end the file
        self.start: int | None = None  # unified: 1-based old start line, a hint
        self.old_no_eol = False  # unified `\ No newline at end of file` on each side
        self.new_no_eol = False

    def __repr__(self) -> str:
        return "Hunk(-%d +%d)" % (len(self.old), len(self.new))


class FileOp:
    """What a patch does to one file. `content` is the whole new text for ADD."""

    __slots__ = ("kind", "path", "move_to", "content", "hunks", "format")

    def __init__(self, kind: str, path: str, fmt: str) -> None:
        self.kind = kind
        self.path = path
        self.move_to: str | None = None
        self.content: str | None = None
        self.hunks: list[Hunk] = []
        self.format = fmt

    @property
    def target(self) -> str:
        """The file that holds the result (the destination of a move)."""
        return self.move_to or self.path

    def __repr__(self) -> str:
        return "FileOp(%r, %r%s, %d hunks)" % (
            self.kind, self.path, ", move_to=%r" % self.move_to if self.move_to else "", len(self.hunks),
        )


# --- parsing --------------------------------------------------------------------------------


def _lines(text: str) -> list[str]:
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _strip_heredoc(lines: list[str]) -> list[str]:
    # Models often wrap the patch as a shell heredoc: <<'EOF' ... EOF. Codex accepts that.
    if len(lines) >= 2 and lines[0].strip() in ("<<EOF", "<<'EOF'", '<<"EOF"') and lines[-1].strip() == "EOF":
        return lines[1:-1]
    return lines


def parse_v4a(text: str) -> list[FileOp]:
    """The file operations of a V4A patch, in order. Raises PatchError when it is not one."""
    lines = _strip_heredoc(_lines(text))
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines or lines[0].strip() != _BEGIN:
        raise PatchError("a V4A patch starts with %r" % _BEGIN)
    if lines[-1].strip() != _END:
        raise PatchError("a V4A patch ends with %r" % _END)
    body = lines[1:-1]
    ops: list[FileOp] = []
    i = 0
    while i < len(body):
        line = body[i]
        if line.startswith(_ADD):
            op = FileOp(ADD, _path(line[len(_ADD):]), V4A)
            i += 1
            added: list[str] = []
            while i < len(body) and body[i].startswith("+"):
                added.append(body[i][1:])
                i += 1
            op.content = "".join(a + "\n" for a in added)
            ops.append(op)
        elif line.startswith(_DELETE):
            ops.append(FileOp(DELETE, _path(line[len(_DELETE):]), V4A))
            i += 1
        elif line.startswith(_UPDATE):
            op = FileOp(UPDATE, _path(line[len(_UPDATE):]), V4A)
            i += 1
            if i < len(body) and body[i].startswith(_MOVE):
                op.move_to = _path(body[i][len(_MOVE):])
                i += 1
            i = _v4a_hunks(body, i, op)
            if not op.hunks and not op.move_to:
                raise PatchError("update of %s has no hunks" % op.path)
            ops.append(op)
        elif not line.strip():
            i += 1
        else:
            raise PatchError("unexpected line %d in V4A patch: %r" % (i + 2, line[:80]))
    if not ops:
        raise PatchError("the patch changes no file")
    return ops


def _path(raw: str) -> str:
    path = raw.strip()
    if not path or "\x00" in path:
        raise PatchError("a file operation names no usable path")
    return path


def _v4a_hunks(body: list[str], i: int, op: FileOp) -> int:
    hunk: Hunk | None = None
    while i < len(body):
        line = body[i]
        if line.startswith("*** ") and line.strip() != _EOF:
            break
        if line.strip() == _EOF:
            if hunk is None:
                raise PatchError("%r before any change in %s" % (_EOF, op.path))
            hunk.at_eof = True
            i += 1
            continue
        if line.startswith("@@"):
            hunk = Hunk()
            ctx = line[2:].strip()
            hunk.context = ctx or None
            op.hunks.append(hunk)
            i += 1
            continue
        if hunk is None:  # the first hunk may leave out its @@ line
            hunk = Hunk()
            op.hunks.append(hunk)
        if line == "":
            hunk.old.append("")
            hunk.new.append("")
        elif line[0] == " ":
            hunk.old.append(line[1:])
            hunk.new.append(line[1:])
        elif line[0] == "-":
            hunk.old.append(line[1:])
        elif line[0] == "+":
            hunk.new.append(line[1:])
        else:
            raise PatchError("unexpected line in the update of %s: %r" % (op.path, line[:80]))
        i += 1
    op.hunks = [h for h in op.hunks if h.old or h.new]
    return i


def _diff_path(raw: str) -> str | None:
    path = raw.split("\t", 1)[0].strip()
    if path == "/dev/null":
        return None
    if path.startswith(("a/", "b/")):
        path = path[2:]
    return _path(path)


def parse_unified(text: str) -> list[FileOp]:
    """The file operations of a unified diff (git or plain). Raises PatchError."""
    lines = _lines(text)
    ops: list[FileOp] = []
    i = 0
    while i < len(lines):
        if not (lines[i].startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")):
            i += 1
            continue
        old_path = _diff_path(lines[i][4:])
        new_path = _diff_path(lines[i + 1][4:])
        i += 2
        if old_path is None and new_path is None:
            raise PatchError("a diff from /dev/null to /dev/null")
        if old_path is None:
            assert new_path is not None
            op = FileOp(ADD, new_path, UNIFIED)
        elif new_path is None:
            op = FileOp(DELETE, old_path, UNIFIED)
        else:
            op = FileOp(UPDATE, old_path, UNIFIED)
            if new_path != old_path:
                op.move_to = new_path
        while i < len(lines) and lines[i].startswith("@@"):
            i = _unified_hunk(lines, i, op)
        if op.kind == ADD:
            new_text = "\n".join(h for hk in op.hunks for h in hk.new)
            no_eol = any(h.new_no_eol for h in op.hunks)
            op.content = new_text + ("" if no_eol or not new_text else "\n")
            op.hunks = []
        ops.append(op)
    if not ops:
        raise PatchError("no '--- ' / '+++ ' file header found")
    return ops


def _count(spec: str) -> tuple[int, int]:
    start, _, count = spec.partition(",")
    try:
        return int(start), int(count) if count else 1
    except ValueError:
        raise PatchError("bad hunk range %r" % spec[:40]) from None


def _unified_hunk(lines: list[str], i: int, op: FileOp) -> int:
    header = lines[i].split()
    if len(header) < 3 or not header[1].startswith("-") or not header[2].startswith("+"):
        raise PatchError("bad hunk header %r" % lines[i][:80])
    old_start, old_count = _count(header[1][1:])
    _, new_count = _count(header[2][1:])
    hunk = Hunk()
    hunk.start = old_start
    i += 1
    old_left, new_left = old_count, new_count
    last = ""
    while i < len(lines) and (old_left > 0 or new_left > 0 or lines[i].startswith("\\")):
        line = lines[i]
        if line.startswith("\\"):
            if last in (" ", "-"):
                hunk.old_no_eol = True
            if last in (" ", "+"):
                hunk.new_no_eol = True
            i += 1
            continue
        tag, rest = (line[0], line[1:]) if line else (" ", "")
        if tag == " ":
            hunk.old.append(rest)
            hunk.new.append(rest)
            old_left -= 1
            new_left -= 1
        elif tag == "-":
            hunk.old.append(rest)
            old_left -= 1
        elif tag == "+":
            hunk.new.append(rest)
            new_left -= 1
        else:
            raise PatchError("unexpected line in a hunk of %s: %r" % (op.path, line[:80]))
        last = tag
        i += 1
    if old_left != 0 or new_left != 0:
        raise PatchError("a hunk of %s is shorter than its header says" % op.path)
    op.hunks.append(hunk)
    return i


def parse(text: str) -> list[FileOp]:
    """V4A or unified diff, whichever `text` is. Raises PatchError for neither."""
    if _BEGIN in text[:4096]:
        return parse_v4a(text)
    return parse_unified(text)


# --- applying -------------------------------------------------------------------------------

_PLAIN = {
    0x2010: "-", 0x2011: "-", 0x2012: "-", 0x2013: "-", 0x2014: "-", 0x2015: "-", 0x2212: "-",
    0x2018: "'", 0x2019: "'", 0x201A: "'", 0x201B: "'",
    0x201C: '"', 0x201D: '"', 0x201E: '"', 0x201F: '"',
    0x00A0: " ", 0x2002: " ", 0x2003: " ", 0x2004: " ", 0x2005: " ", 0x2006: " ",
    0x2007: " ", 0x2008: " ", 0x2009: " ", 0x200A: " ", 0x202F: " ", 0x205F: " ", 0x3000: " ",
}


def _seek(lines: Sequence[str], pattern: Sequence[str], start: int, at_eof: bool) -> int | None:
    if not pattern:
        return start
    n, m = len(lines), len(pattern)
    if m > n:
        return None
    first = n - m if at_eof else start
    last = n - m
    for key in _LOOSER:
        want = [key(p) for p in pattern]
        for i in range(first, last + 1):
            if all(key(lines[i + k]) == want[k] for k in range(m)):
                return i
    return None


def _exact(s: str) -> str:
    return s


def _plain(s: str) -> str:
    return s.strip().translate(_PLAIN)


# Codex's order: exact, then trailing whitespace ignored, then both ends, then typography.
_LOOSER: tuple[Callable[[str], str], ...] = (_exact, str.rstrip, str.strip, _plain)


def _decode(before: bytes) -> str:
    # surrogateescape: bytes that are not UTF-8 come back out unchanged
    return before.decode("utf-8", "surrogateescape")


def _encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def apply_v4a_to(before: bytes | None, op: FileOp) -> bytes | None:
    """The bytes of `op.target` after a V4A op, or None when that cannot be predicted (the old
    lines are not in the file, or the file is missing for an update). DELETE gives b""."""
    if op.kind == ADD:
        assert op.content is not None
        return _encode(op.content)
    if op.kind == DELETE:
        return b"" if before is not None else None
    if before is None:
        return None
    lines = _decode(before).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    # Like Codex: find every hunk in the original lines first, then replace from the end.
    replacements: list[tuple[int, int, list[str]]] = []
    index = 0
    for hunk in op.hunks:
        if hunk.context is not None:
            found = _seek(lines, [hunk.context], index, False)
            if found is None:
                return None
            index = found + 1
        if not hunk.old:
            end = len(lines) - 1 if lines and lines[-1] == "" else len(lines)
            replacements.append((end, 0, list(hunk.new)))
            continue
        pattern = hunk.old
        new = list(hunk.new)
        at = _seek(lines, pattern, index, hunk.at_eof)
        if at is None and pattern[-1] == "":
            pattern = pattern[:-1]
            if new and new[-1] == "":
                new = new[:-1]
            at = _seek(lines, pattern, index, hunk.at_eof)
        if at is None:
            return None
        replacements.append((at, len(pattern), new))
        index = at + len(pattern)
    replacements.sort(key=lambda r: r[0])
    for at, length, new in reversed(replacements):
        lines[at:at + length] = new
    if not lines or lines[-1] != "":
        lines.append("")
    return _encode("\n".join(lines))


def _apply_unified(before: bytes | None, op: FileOp) -> bytes | None:
    if op.kind == ADD:
        assert op.content is not None
        return _encode(op.content)
    if op.kind == DELETE:
        return b"" if before is not None else None
    if before is None:
        return None
    text = _decode(before)
    had_eol = text.endswith("\n")
    lines = text.split("\n") if text else []
    if had_eol:
        lines.pop()
    offset = 0
    eol = had_eol
    floor = 0
    for hunk in op.hunks:
        hint = max((hunk.start or 1) - 1 + offset, floor)
        at = _nearest(lines, hunk.old, hint, floor)
        if at is None:
            return None
        touches_end = at + len(hunk.old) == len(lines)
        lines = lines[:at] + list(hunk.new) + lines[at + len(hunk.old):]
        offset += len(hunk.new) - len(hunk.old)
        floor = at + len(hunk.new)
        if touches_end:
            # the new side's last line ends the file: it has a newline unless the diff says not;
            # when the hunk removed the tail, the line now last kept its newline
            eol = not hunk.new_no_eol if hunk.new else True
    out = "\n".join(lines)
    if eol and lines:
        out += "\n"
    return _encode(out)


def _nearest(lines: list[str], pattern: list[str], hint: int, floor: int) -> int | None:
    n, m = len(lines), len(pattern)
    if m == 0:
        return min(max(hint, floor), n)
    for delta in range(0, n + 1):
        for at in (hint - delta, hint + delta) if delta else (hint,):
            if floor <= at <= n - m and lines[at:at + m] == pattern:
                return at
    return None


def apply_to(before: bytes | None, op: FileOp) -> bytes | None:
    """`op.target`'s bytes after the op, whichever format it came from; None = not exact."""
    if op.format == V4A:
        return apply_v4a_to(before, op)
    return _apply_unified(before, op)


def size_delta(op: FileOp) -> tuple[int, int]:
    """(lines, bytes) the op's text says it adds to the file (negative: removes), counting
    each hunk line with its newline. The estimate for when the exact result is unknown."""
    if op.kind == ADD:
        assert op.content is not None
        return op.content.count("\n"), len(_encode(op.content))
    lines = 0
    size = 0
    for hunk in op.hunks:
        lines += len(hunk.new) - len(hunk.old)
        size += sum(len(_encode(x)) + 1 for x in hunk.new) - sum(len(_encode(x)) + 1 for x in hunk.old)
    return lines, size
