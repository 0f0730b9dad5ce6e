"""Cline 3.0.65's apply_patch (@cline/core's parser and matcher: the reference apply_patch
with its fuzz), ported and run in engramory.patches' V4A model with Cline's rules; see the
package docstring (hosts/cline/__init__.py) for what it does, and
tests/hosts/cline/test_cline_patch_model.py for the check against the real CLI. Loaded only for an
apply_patch call: the editor's path stays off engramory.patches.
"""

from __future__ import annotations

from engramory import patches, scope
from engramory.scope import encode

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

BEGIN, END = "*** Begin Patch", "*** End Patch"
P_UPDATE, P_DELETE, P_ADD, P_MOVE, P_EOF = (
    "*** Update File: ", "*** Delete File: ", "*** Add File: ", "*** Move to: ", "*** End of File",
)
WRAPPERS = ("%%bash", "apply_patch", "EOF", "```")  # lines stripped around a patch with no sentinels
ACTION_ENDS = (END, P_UPDATE.strip(), P_DELETE.strip(), P_ADD.strip())
UPDATE_ENDS = ACTION_ENDS + (P_EOF,)
SECTION_ENDS = ("@@",) + UPDATE_ENDS
# JavaScript's String.prototype.trim() whitespace
JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
# Cline's normalisation of compared text (after NFC), then \` \' \" unescaped
PLAIN = {
    0x2010: "-", 0x2011: "-", 0x2012: "-", 0x2013: "-", 0x2014: "-", 0x2212: "-", 0x201C: '"', 0x201D: '"',
    0x201E: '"', 0xAB: '"', 0xBB: '"', 0x2018: "'", 0x2019: "'", 0x201B: "'", 0xA0: " ", 0x202F: " ",
}
SIMILAR = 0.66  # the last pass takes the first block whose Levenshtein similarity reaches this
FUZZ_CELLS = 6_000_000  # Levenshtein cells worked out per patch at most (about 0.6 s); beyond, judged by a bound


class TooCostly(Exception):
    """Working out Cline's fuzzy match would take longer than a hook may."""


def _plain(s: str) -> str:
    if not s.isascii():
        import unicodedata

        s = unicodedata.normalize("NFC", s).translate(PLAIN)
    return s.replace("\\`", "`").replace("\\'", "'").replace('\\"', '"')


def _js_slice(items: Sequence[str], start: int, stop: int) -> Sequence[str]:
    n = len(items)
    return items[max(n + start, 0) if start < 0 else start:max(n + stop, 0) if stop < 0 else stop]


def _units16(s: str) -> Sequence[int]:
    if s.isascii():
        return s.encode()
    return memoryview(s.encode("utf-16-le", "surrogatepass")).cast("H").tolist()


def _max_distance(size: int) -> int:
    """The largest Levenshtein distance whose similarity still reaches SIMILAR (-1: none)."""
    k = int(size * (1 - SIMILAR)) + 1
    while k >= 0 and (size - k) / size < SIMILAR:
        k -= 1
    return k


def _count_gap(x: Sequence[int], y: Sequence[int]) -> int:
    """A lower bound of the distance: each edit changes the character counts by two at most."""
    counts: dict[int, int] = {}
    for c in x:
        counts[c] = counts.get(c, 0) + 1
    for c in y:
        counts[c] = counts.get(c, 0) - 1
    return (sum(abs(v) for v in counts.values()) + 1) // 2


def _band_row(prev: list[int], xi: int, y: Sequence[int], i: int, k: int) -> tuple[list[int], int]:
    """Row i of the Levenshtein table inside the band |i - j| <= k (k + 1 stands for beyond),
    and the row's least value."""
    size, out = len(y), k + 1
    lo, hi = max(1, i - k), min(size, i + k)
    cur = [out] * (size + 1)
    cur[0] = i if i <= k else out
    best = cur[0]
    for j in range(lo, hi + 1):
        v = prev[j - 1] + (xi != y[j - 1])
        if prev[j] + 1 < v:
            v = prev[j] + 1
        if cur[j - 1] + 1 < v:
            v = cur[j - 1] + 1
        cur[j] = v if v < out else out
        if v < best:
            best = v
    return cur, best


def _within(x: Sequence[int], y: Sequence[int], k: int, budget: list[int]) -> bool:
    """Whether the Levenshtein distance of x and y is at most k; TooCostly past the budget."""
    size = len(y)
    prev = [j if j <= k else k + 1 for j in range(size + 1)]
    for i in range(1, len(x) + 1):
        prev, best = _band_row(prev, x[i - 1], y, i, k)
        budget[0] -= min(size, i + k) - max(1, i - k) + 1
        if budget[0] < 0:
            raise TooCostly()
        if best > k:
            return False
    return prev[size] <= k


def _similar(a: str, b: str, budget: list[int]) -> bool:
    """Whether Cline's similarity, (L - distance) / L with L the longer length in UTF-16 units,
    reaches SIMILAR: a Levenshtein distance bounded by the largest distance that passes."""
    x, y = _units16(a), _units16(b)
    if len(x) > len(y):
        x, y = y, x
    size = len(y)
    if size == 0:
        return True
    k = _max_distance(size)
    if k < 0 or size - len(x) > k or _count_gap(x, y) > k:
        return False
    return _within(x, y, k, budget)


def _as_is(s: str) -> str:
    return s


def _trim_end(s: str) -> str:
    return s.rstrip(JS_SPACE)


def _trim(s: str) -> str:
    return s.strip(JS_SPACE)


_SHAPES = (_as_is, _trim_end, _trim)


def _search(lines: Sequence[str], old: Sequence[str], start: int, budget: list[int]) -> int | None:
    m = len(old)
    spans = [_js_slice(lines, at, at + m) for at in range(start, len(lines))]
    for shape in _SHAPES:
        want = "\n".join(_plain(shape(t)) for t in old)
        for n, span in enumerate(spans):
            if "\n".join(_plain(shape(t)) for t in span) == want:
                return start + n
    want = "\n".join(_plain(t) for t in old)
    for n, span in enumerate(spans):
        if _similar("\n".join(_plain(t) for t in span), want, budget):
            return start + n
    return None


def _seeker(budget: list[int]) -> Callable[[Sequence[str], Sequence[str], int, bool], int | None]:
    def seek(lines: Sequence[str], old: Sequence[str], start: int, at_eof: bool) -> int | None:
        """Cline's find_context: exact, then each line's end trimmed, then both ends, then the
        first block similar enough, all on normalised text; `*** End of File` tries the end
        first, then from `start`."""
        if at_eof:
            found = _search(lines, old, len(lines) - len(old), budget)
            if found is not None:
                return found
        return _search(lines, old, start, budget)

    return seek


def _anchor(lines: Sequence[str], wanted: Sequence[str], start: int, at_eof: bool) -> int | None:
    """An `@@ <anchor>` line: the first non-empty line from `start` equal after normalising,
    itself or trimmed; none found leaves the search where it was."""
    target = _plain(wanted[0].strip(JS_SPACE))
    for at in range(start, len(lines)):
        line = lines[at]
        if line and (_plain(line) == target or _plain(line.strip(JS_SPACE)) == target):
            return at
    return None


def patch_rules(budget: list[int]) -> Any:
    """Cline's applier in the one V4A model: lines split on LF (CRLF folded first) and joined
    back as they are, only the `-`/`+` runs rewritten, a pure insertion where the search stands,
    no retry without a final empty line, and its own matchers."""
    return patches.Rules(
        "cline", lf_only=True, space=JS_SPACE, retry_blank=False, insert_here=True, joined=True,
        seek=_seeker(budget), anchor=_anchor,
    )


def _patch_body(lines: list[str]) -> list[str]:
    """The lines from `*** Begin Patch` to `*** End Patch`; without either sentinel, the lines
    inside the wrappers models put around a patch, with the sentinels added."""
    begin = next((i for i, line in enumerate(lines) if line.startswith(BEGIN)), -1)
    end = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].startswith(END)), -1)
    if begin >= 0 or end >= 0:
        if begin < 0 or end < begin:
            raise patches.PatchError("incomplete sentinels")
        return lines[begin:end + 1]
    lo, hi = 0, len(lines)
    while lo < hi and lines[lo].strip() and lines[lo].startswith(WRAPPERS):
        lo += 1
    while hi > lo and lines[hi - 1].strip() and lines[hi - 1].startswith(WRAPPERS):
        hi -= 1
    body = lines[lo:hi]
    while body and body[0] == "":
        body.pop(0)
    while body and body[-1] == "":
        body.pop()
    return [BEGIN] + body + [END]


_ACTIONS = ((P_UPDATE, patches.UPDATE), (P_DELETE, patches.DELETE), (P_ADD, patches.ADD))


def _added(lines: list[str], i: int, op: patches.FileOp) -> int:
    added = []
    while i < len(lines) and not lines[i].startswith(ACTION_ENDS):
        if not lines[i].startswith("+"):
            raise patches.PatchError("invalid Add File line (missing '+'): %r" % lines[i][:80])
        added.append(lines[i][1:])
        i += 1
    op.content = "\n".join(added)
    return i


def _file_op(lines: list[str], i: int, seen: set[str]) -> tuple[patches.FileOp, int]:
    line = lines[i]
    found = [(p, k) for p, k in _ACTIONS if line.startswith(p)]
    if not found:
        raise patches.PatchError("unknown line while parsing: %r" % line[:80])
    prefix, kind = found[0]
    op = patches.FileOp(kind, line[len(prefix):].strip(JS_SPACE), patches.V4A)
    if op.path in seen:
        raise patches.PatchError("duplicate %s for file: %s" % (kind, op.path))
    seen.add(op.path)
    i += 1
    if kind == patches.ADD:
        i = _added(lines, i, op)
    elif kind == patches.UPDATE:
        if i < len(lines) and lines[i].startswith(P_MOVE):
            op.move_to = lines[i][len(P_MOVE):].strip(JS_SPACE)
            i += 1
        i = _sections(lines, i, op)
    return op, i


def parse_patch(text: str) -> list[patches.FileOp]:
    """Cline's apply_patch parser: the file operations, or PatchError where Cline reports an
    error (or, for an update section holding a blank or `***` line, loops for ever)."""
    lines = _patch_body([line[:-1] if line.endswith("\r") else line for line in text.split("\n")])
    ops: list[patches.FileOp] = []
    seen: set[str] = set()
    i = 1
    while i < len(lines) and not lines[i].startswith(END):
        op, i = _file_op(lines, i, seen)
        ops.append(op)
    return ops


def _sections(lines: list[str], i: int, op: Any) -> int:
    while i < len(lines) and not lines[i].startswith(UPDATE_ENDS):
        line = lines[i]
        hunk = patches.Hunk()
        if line == "@@" or line.startswith("@@ "):
            anchor = line[3:]
            hunk.context = anchor if anchor.strip(JS_SPACE) else None
            i += 1
        elif op.hunks or _ends_section(line):
            # a section without @@ is only read first; a blank, `***` or `@@x` line there makes
            # Cline report an invalid line, or (nothing matched yet) never leave its loop
            raise patches.PatchError("invalid line in the update of %s: %r" % (op.path, line[:80]))
        while i < len(lines) and not _ends_section(lines[i]):
            line = lines[i]
            if line.startswith("***"):
                raise patches.PatchError("invalid line: %r" % line[:80])
            i += 1
            tag, rest = (line[0], line[1:]) if line[0] in "+- " else (" ", line)
            if tag == "+":
                hunk.new.append(rest)
            elif tag == "-":
                hunk.old.append(rest)
            else:
                hunk.kept.append((len(hunk.old), len(hunk.new)))
                hunk.old.append(rest)
                hunk.new.append(rest)
        if i < len(lines) and lines[i] == P_EOF:
            hunk.at_eof = True
            i += 1
        op.hunks.append(hunk)
    return i


def _ends_section(line: str) -> bool:
    return not line or line.startswith(SECTION_ENDS) or line == "***"


def _inside(raw: str, full: str, cwd: str | None) -> bool:
    """Cline refuses a relative path that leaves the workspace."""
    if raw.startswith("/") or cwd is None:
        return True
    root = scope.abspath(cwd)
    return full == root or full.startswith(root.rstrip(scope.sep) + scope.sep)


def predict_patch(text: str, cwd: str | None, read: Any) -> dict[str, bytes | None] | None:
    """Every file Cline's apply_patch writes (None: removed), or None when Cline refuses the
    whole patch (it checks every file and hunk before writing any). TooCostly when a fuzzy
    match cannot be worked out in time."""
    try:
        ops = parse_patch(text)
        budget = [FUZZ_CELLS]
        rules = patch_rules(budget)
        out: dict[str, bytes | None] = {}
        for op in ops:
            path = scope.resolve_path(op.path, cwd)
            if not _inside(op.path, path, cwd):
                return None
            before = read(path)
            if op.kind == patches.ADD:
                if before is not None:
                    return None  # "File already exists"
                out[path] = encode(op.content or "")
                continue
            if before is None:
                return None  # "File not found"
            if op.kind == patches.DELETE:
                out[path] = None
                continue
            raw = before.decode("utf-8", "replace")
            result = patches.update_text(raw.replace("\r\n", "\n"), op.hunks, rules, path)
            eol = "\r\n" if "\r\n" in raw else "\n"  # the file's own line ending, as the dialect keeps it
            after = encode(eol.join(result.replace("\r\n", "\n").split("\n")))
            if op.move_to:
                target = scope.resolve_path(op.move_to, cwd)
                if not _inside(op.move_to, target, cwd):
                    return None
                out[target] = after
                out[path] = None  # written, then the source removed (itself too, if the same)
            else:
                out[path] = after
    except patches.PatchError:
        return None
    return out
