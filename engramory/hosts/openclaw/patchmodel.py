"""OpenClaw 2026.9.6's own apply_patch (src/agents/apply-patch.ts, apply-patch-update.ts in its
npm package), ported line by line: its parser, and an applier that keeps every line's own
ending. It is not a `Rules` of engramory.patches' applier because its new lines take their
endings from the lines they replace (buildChangedLines), which that applier does not carry.
Loaded only for an apply_patch call (the edit path of the hook stays off engramory.patches).
"""

from __future__ import annotations

from engramory import patches, scope
from engramory.hosts import claudelike
from engramory.patches import (
    _ADD,
    _DELETE,
    _EOF,
    _MOVE,
    _UPDATE,
    ADD,
    BEGIN,
    DELETE,
    END,
    JS_SPACE,
    PLAIN,
    UPDATE,
    V4A,
    FileOp,
    Hunk,
    PatchError,
    _exact,
    split_lines,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

_HEREDOC = ("<<EOF", "<<'EOF'", '<<"EOF"')


def _oc_bounds_error(lines: list[str]) -> str | None:
    first, last = lines[0].strip(JS_SPACE), lines[-1].strip(JS_SPACE)
    if first == BEGIN and last == END:
        return None
    if first != BEGIN:
        return "the first line of the patch must be %r" % BEGIN
    return "the last line of the patch must be %r" % END


def parse_openclaw(text: str) -> list[FileOp]:
    """The file operations of a patch as OpenClaw's parsePatchText reads them, in order.
    PatchError where OpenClaw refuses the patch (then it changes nothing)."""
    trimmed = text.strip(JS_SPACE)
    if not trimmed:
        raise PatchError("the patch is empty")
    lines = [line[:-1] if line.endswith("\r") else line for line in trimmed.split("\n")]  # split(/\r?\n/)
    error = _oc_bounds_error(lines)
    if error is not None:
        if len(lines) < 4 or not (lines[0] in _HEREDOC and lines[-1].endswith("EOF")):
            raise PatchError(error)
        lines = lines[1:-1]
        error = _oc_bounds_error(lines)
        if error is not None:
            raise PatchError(error)
    rest = lines[1:-1]
    ops: list[FileOp] = []
    i = 0
    while i < len(rest):
        op, i = _oc_file_op(rest, i)
        ops.append(op)
    if not ops:
        raise PatchError("no files were modified")
    return ops


def _oc_path(raw: str) -> str:
    if not raw or "\x00" in raw:
        raise PatchError("a file operation names no usable path")
    return raw


def _oc_file_op(lines: list[str], i: int) -> tuple[FileOp, int]:
    first = lines[i].strip(JS_SPACE)
    if first.startswith(_ADD):
        op = FileOp(ADD, _oc_path(first[len(_ADD):]), V4A)
        i += 1
        added = []
        while i < len(lines) and lines[i].startswith("+"):
            added.append(lines[i][1:] + "\n")
            i += 1
        op.content = "".join(added)
        return op, i
    if first.startswith(_DELETE):
        return FileOp(DELETE, _oc_path(first[len(_DELETE):]), V4A), i + 1
    if not first.startswith(_UPDATE):
        raise PatchError("%r is not a valid hunk header" % lines[i][:80])
    op = FileOp(UPDATE, _oc_path(first[len(_UPDATE):]), V4A)
    i += 1
    if i < len(lines) and lines[i].strip(JS_SPACE).startswith(_MOVE):
        op.move_to = _oc_path(lines[i].strip(JS_SPACE)[len(_MOVE):])
        i += 1
    while i < len(lines):
        if lines[i].strip(JS_SPACE) == "":
            i += 1
            continue
        if lines[i].startswith("***"):
            break
        i = _oc_chunk(lines, i, op)
    if not op.hunks:
        raise PatchError("update file hunk for path %r is empty" % op.path)
    return op, i


def _oc_chunk_header(lines: list[str], i: int, op: FileOp, hunk: Hunk) -> int:
    first = lines[i]
    if first == "@@":
        i += 1
    elif first.startswith("@@ "):
        hunk.context = first[3:] or None  # `if (chunk.changeContext)`: an empty one is none
        i += 1
    elif op.hunks:
        raise PatchError("expected update hunk to start with a @@ context marker, got %r" % first[:80])
    if i >= len(lines):
        raise PatchError("update hunk does not contain any lines")
    return i


def _oc_line(hunk: Hunk, line: str) -> bool:
    """Adds a chunk line to `hunk`; False where the line is none (the chunk ends before it)."""
    marker = line[:1]
    if marker in ("", " "):
        hunk.kept.append((len(hunk.old), len(hunk.new)))
        hunk.old.append(line[1:])
        hunk.new.append(line[1:])
    elif marker == "+":
        hunk.new.append(line[1:])
    elif marker == "-":
        hunk.old.append(line[1:])
    else:
        return False
    return True


def _oc_chunk(lines: list[str], i: int, op: FileOp) -> int:
    hunk = Hunk()
    i = _oc_chunk_header(lines, i, op, hunk)
    parsed = 0
    while i < len(lines):
        line = lines[i]
        if line == _EOF:
            if parsed == 0:
                raise PatchError("update hunk does not contain any lines")
            hunk.at_eof = True
            i += 1
            break
        if not _oc_line(hunk, line):
            if parsed == 0:
                raise PatchError("unexpected line found in update hunk: %r" % line[:80])
            break
        parsed += 1
        i += 1
    op.hunks.append(hunk)
    return i


FOUND, MISSING, AMBIGUOUS = "found", "missing", "ambiguous"


def openclaw_seek(lines: Sequence[str], pattern: Sequence[str], start: int, eof: bool) -> tuple[str, int]:
    """OpenClaw's seekSequence: (FOUND, index), (MISSING, 0) or (AMBIGUOUS, occurrences). The
    first of its four normalisers that matches anywhere decides, and must match once."""
    if not pattern:
        return FOUND, start
    if len(pattern) > len(lines):
        return MISSING, 0
    last = len(lines) - len(pattern)
    begin = max(start, last) if eof else start
    if begin > last:
        return MISSING, 0
    keys: tuple[Callable[[str], str], ...] = (
        _exact,
        lambda s: s.rstrip(JS_SPACE),
        lambda s: s.strip(JS_SPACE),
        lambda s: s.strip(JS_SPACE).translate(PLAIN),
    )
    for key in keys:
        want = [key(p) for p in pattern]
        found = [i for i in range(begin, last + 1) if all(key(lines[i + k]) == want[k] for k in range(len(want)))]
        if found:
            return (FOUND, found[0]) if len(found) == 1 else (AMBIGUOUS, len(found))
    return MISSING, 0


def _oc_ending(lines: list[list[str]], i: int) -> str:
    # JavaScript's lines.at(i)?.ending: a negative index counts from the end
    return lines[i][1] if -len(lines) <= i < len(lines) else ""


def _oc_changed(lines: list[list[str]], start: int, count: int, new: Sequence[str], pref: str) -> list[list[str]]:
    # buildChangedLines: each new line's ending comes from the line it replaces, else nearby
    replaced = lines[start:start + count]
    nearby = (next((r[1] for r in replaced if r[1]), "") or _oc_ending(lines, start) or _oc_ending(lines, start - 1)
              or pref)
    out = []
    for k, text in enumerate(new):
        ending = nearby
        if len(replaced) == len(new):
            ending = replaced[k][1]
        elif k == len(new) - 1 and replaced:
            ending = replaced[-1][1]
        elif k < len(replaced) - 1:
            ending = replaced[k][1]
        out.append([text, ending])
    return out


def _oc_norm(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text if not text or text.endswith("\n") else text + "\n"


class _File:
    """The file as OpenClaw's applyUpdateHunk holds it while the hunks are placed."""

    def __init__(self, text: str) -> None:
        self.bom = "\ufeff" if text.startswith("\ufeff") else ""
        self.lines = [[t, e or ""] for t, e in split_lines(text[len(self.bom):])]
        self.pref = next((e for _, e in self.lines if e), "\n")
        self.missing_final = bool(self.lines) and self.lines[-1][1] == ""
        self.texts = [t for t, _ in self.lines]


def _oc_context(f: _File, hunk: Hunk, index: int, path: str) -> int:
    if not hunk.context:
        return index
    kind, at = openclaw_seek(f.texts, [hunk.context], index, False)
    if kind != FOUND:
        raise PatchError("context %r is %s in %s" % (hunk.context[:80], kind, path))
    return at + 1


def _oc_insert(f: _File, hunk: Hunk, index: int) -> tuple[int, int, list[list[str]]]:
    at = index if hunk.context and not hunk.at_eof else len(f.lines)
    added = _oc_changed(f.lines, at, 0, hunk.new, f.pref)
    if f.missing_final and at == len(f.lines) and added:
        added[-1][1] = ""
    return at, 0, added


def _oc_found(f: _File, hunk: Hunk, index: int, path: str) -> tuple[int, list[str], list[str]]:
    pattern, new = list(hunk.old), list(hunk.new)
    kind, at = openclaw_seek(f.texts, pattern, index, hunk.at_eof)
    if kind == MISSING and pattern[-1] == "":
        pattern = pattern[:-1]
        if new and new[-1] == "":
            new = new[:-1]
        kind, at = openclaw_seek(f.texts, pattern, index, hunk.at_eof)
    if kind != FOUND:
        raise PatchError("the old lines are %s in %s" % (kind, path))
    return at, pattern, new


def _oc_chunk_lines(f: _File, hunk: Hunk, at: int, pattern: list[str], new: list[str]) -> list[list[str]]:
    # buildChunkLines: context lines are the file's own lines, text and ending
    out: list[list[str]] = []
    old_start = new_start = 0
    for old_ctx, new_ctx in hunk.kept:
        if old_ctx >= len(pattern) or new_ctx >= len(new):
            continue
        out.extend(_oc_changed(f.lines, at + old_start, old_ctx - old_start, new[new_start:new_ctx], f.pref))
        out.append(f.lines[at + old_ctx])
        old_start, new_start = old_ctx + 1, new_ctx + 1
    out.extend(_oc_changed(f.lines, at + old_start, len(pattern) - old_start, new[new_start:], f.pref))
    return out


def openclaw_update_text(text: str, hunks: Sequence[Hunk], path: str = "the file", moved: bool = False) -> str:
    """The text OpenClaw's applyUpdateHunk makes of `text` (the file as read, BOM included);
    unless `moved` (to another file), `text` itself where the result differs from it only in
    line endings (OpenClaw then writes nothing). PatchError where OpenClaw refuses."""
    f = _File(text)
    reps: list[tuple[int, int, list[list[str]]]] = []
    index = 0
    for hunk in hunks:
        index = _oc_context(f, hunk, index, path)
        if not hunk.old:
            reps.append(_oc_insert(f, hunk, index))
            index = reps[-1][0]
            continue
        at, pattern, new = _oc_found(f, hunk, index, path)
        reps.append((at, len(pattern), _oc_chunk_lines(f, hunk, at, pattern, new)))
        index = at + len(pattern)
    reps.sort(key=lambda r: r[0])
    result = list(f.lines)
    for at, length, segment in reversed(reps):
        result[at:at + length] = segment
    for line in result[:-1]:  # ensureInteriorEndings
        line[1] = line[1] or f.pref
    after = f.bom + "".join(t + e for t, e in result)
    return text if not moved and _oc_norm(after) == _oc_norm(text) else after


def openclaw_update(before: bytes, hunks: Sequence[Hunk], path: str = "the file", moved: bool = False) -> bytes:
    """openclaw_update_text on a file's bytes: PatchError where it is not UTF-8 (OpenClaw
    refuses it); a lone surrogate from the patch is written as U+FFFD, as Node writes it."""
    try:
        text = before.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PatchError("%s is not UTF-8 (byte %d)" % (path, exc.start)) from None
    after = openclaw_update_text(text, hunks, path, moved)
    try:
        return after.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in after).encode("utf-8")


def rewrites(shared: list[Any], op: Any, base: str | None, target: str) -> bool:
    """A Delete of the file and then an Add of it (a whole-file rewrite): OpenClaw runs the
    operations in order, so the result is the Add's content, exactly."""
    return (len(shared) == 2 and shared[1] is op and op.kind == patches.ADD and shared[0].kind == patches.DELETE
            and scope.resolve_path(shared[0].path, base) == target)


def predict_op(before: bytes | None, op: Any, source: str, target: str, added: str | None,
             rewrite: bool) -> bytes | claudelike.Unknown | None:
    """The bytes one operation of an apply_patch leaves in `target` (None: refused)."""
    if added is not None:
        return claudelike.Unknown(added, "another operation of the same patch changes this file too")
    if op.kind == patches.ADD:
        return None if before is not None and not rewrite else patches.apply_to(None, op)
    if source != target and before is not None:
        return None  # a move onto an existing file is refused
    old = before if source == target else scope.read_regular(source)
    if old is None:
        return None
    try:
        return openclaw_update(old, op.hunks, target, moved=source != target)
    except patches.PatchError:
        return None
