"""Unified diffs (`--- a/x`, `+++ b/x`, `@@ -1,2 +1,3 @@`) read into engramory.patches'
FileOp and applied where their old lines match exactly, nearest to the line the hunk names.
Kept apart from the V4A parser and applier so that each module stays one subject; patches.parse
and patches.apply_to come here for a patch that is not V4A.
"""

from __future__ import annotations

from engramory.patchops import (
    ADD,
    DELETE,
    UNIFIED,
    UPDATE,
    FileOp,
    Hunk,
    PatchError,
    _apply,
    _decode,
    _encode,
    _lines,
    _path,
)


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
            hunk.kept.append((len(hunk.old), len(hunk.new)))
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


def apply_unified(before: bytes | None, op: FileOp) -> bytes | None:
    return _apply(before, op, lambda old: _unified_update(old, op))


def _unified_update(before: bytes, op: FileOp) -> bytes | None:
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
