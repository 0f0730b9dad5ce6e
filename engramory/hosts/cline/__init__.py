"""Cline CLI (`cline`): a plugin (`.cline/plugins/engramory.js`, written by `engramory install
--host cline`) hands each `editor` and `apply_patch` call to this module through
`hooks/engramory_cline_hook.py` and answers `{skip: true, reason}` when the answer is a deny
(only that call is blocked; the model reads `{"error": reason}`). A plugin that throws or takes
more than 3 s ends the whole run, so the plugin bounds every call to well under that and lets
the tool run when the guard is slow, missing or broken.

Protocol: one JSON object on stdin, one on stdout, as for opencode:
`{"event": "before", "tool", "input", "cwd"}` -> `{"deny": R}` | `{"note": T}` | `{}`;
`{"event": "after" | "start", "tool", "cwd", "sessionID"}` -> `{"context": T}` | `{}`.

Edit model, ported from Cline 3.0.65's `@cline/core` editor (exact, no fuzz):
- a missing file is created with `new_text` as given (parent folders too);
- `insert_line` N: the file is split on CRLF or LF, `new_text`'s lines are spliced in before
  line N (1 .. lines + 1) and everything is joined with the file's EOL (CRLF when the file
  holds any CRLF), so a mixed file is rewritten all CRLF;
- a replacement re-joins `old_text` and `new_text` with the file's EOL, then needs exactly one
  occurrence; an omitted or null `old_text` on an existing file is refused; a BOM is part of
  the text.
- `apply_patch` (for gpt / codex model ids): @cline/core's parser and matcher, ported exactly
  (its source in the npm package; tests/cline/test_cline_patch_model.py checks the port against
  the real CLI) and run in engramory.patches' V4A model with Cline's rules: the file with CRLF
  folded, split on LF and joined back (no final newline added), each section matched from
  where the last ended on normalised text (NFC, plain quotes and dashes, unescaped quotes):
  exactly, then line ends trimmed, then both ends, then the first block whose Levenshtein
  similarity reaches 0.66 (so a line that is not there replaces a similar one); an `@@` anchor
  not found is ignored; a pure insertion goes where the search stands; then the file's EOL on
  every line (CRLF when it holds any). Any failure refuses the whole patch. A similarity search
  that would take too long is judged by its bound instead (every new line added).
Relative paths resolve against the workspace (the run's cwd) and must stay inside it.
"""

from engramory import jsonlite, scope
from engramory.hosts import claudelike

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

    from engramory.guard import Decision
    from engramory.size import Window

# --- registry declarations (see engramory/hosts/__init__.py) ---
NAME = "cline"
TITLE = "Cline CLI"
VERIFIED = "3.0.65"
INSTALLER = "engramory.hosts.cline.install"
FAIL_OPEN = "{}"
SHELL_TOOLS = ("run_commands",)
MAX_INPUT = 6000  # the editor refuses old_text / new_text longer than this (after the hook)


def window() -> "Window":
    from engramory import size  # lazy: sizes only when a change is judged, not on the ignored path

    return size.Window(note="Cline loads no MEMORY.md of its own (rules load whole): the standard caps")


def index_paths(cwd: str, env: "Mapping[str, str]") -> "list[str]":
    return []


def _split(text: str) -> "list[str]":
    return text.replace("\r\n", "\n").split("\n")


def _eol(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _units(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def apply_editor(before: "bytes | None", args: "dict[str, Any]") -> "bytes | None":
    from engramory.edits import encode

    new = args.get("new_text")
    if not isinstance(new, str) or _units(new) > MAX_INPUT:
        return None
    old = args.get("old_text")
    if isinstance(old, str) and _units(old) > MAX_INPUT:
        return None
    insert = args.get("insert_line")
    if insert is not None:
        if before is None or isinstance(insert, bool):
            return None
        try:
            line = int(insert)
        except (TypeError, ValueError):
            return None
        text = before.decode("utf-8", "replace")
        lines = _split(text)
        if line < 1 or line > len(lines) + 1:
            return None
        lines[line - 1 : line - 1] = _split(new)
        return encode(_eol(text).join(lines))
    if before is None:
        return encode(new)
    if not isinstance(old, str):
        return None
    text = before.decode("utf-8", "replace")
    eol = _eol(text)
    old_j, new_j = eol.join(_split(old)), eol.join(_split(new))
    if old_j == "" or text.count(old_j) != 1:
        return None
    return encode(text.replace(old_j, new_j, 1))


# --- apply_patch: @cline/core's applier (the reference apply_patch with its fuzz), ported -------

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


def _js_slice(items: "Sequence[str]", start: int, stop: int) -> "Sequence[str]":
    n = len(items)
    return items[max(n + start, 0) if start < 0 else start:max(n + stop, 0) if stop < 0 else stop]


def _units16(s: str) -> "Sequence[int]":
    if s.isascii():
        return s.encode()
    return memoryview(s.encode("utf-16-le", "surrogatepass")).cast("H").tolist()


def _similar(a: str, b: str, budget: "list[int]") -> bool:
    """Whether Cline's similarity, (L - distance) / L with L the longer length in UTF-16 units,
    reaches SIMILAR: a Levenshtein distance bounded by the largest distance that passes."""
    x, y = _units16(a), _units16(b)
    if len(x) > len(y):
        x, y = y, x
    size = len(y)
    if size == 0:
        return True
    k = int(size * (1 - SIMILAR)) + 1
    while k >= 0 and (size - k) / size < SIMILAR:
        k -= 1
    if k < 0 or size - len(x) > k:
        return False
    counts: dict[int, int] = {}
    for c in x:
        counts[c] = counts.get(c, 0) + 1
    for c in y:
        counts[c] = counts.get(c, 0) - 1
    if (sum(abs(v) for v in counts.values()) + 1) // 2 > k:
        return False  # each edit changes the character counts by two at most
    out = k + 1
    prev = [j if j <= k else out for j in range(size + 1)]
    for i in range(1, len(x) + 1):
        lo, hi = max(1, i - k), min(size, i + k)
        cur = [out] * (size + 1)
        cur[0] = i if i <= k else out
        xi = x[i - 1]
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
        budget[0] -= hi - lo + 1
        if budget[0] < 0:
            raise TooCostly()
        if best > k:
            return False
        prev = cur
    return prev[size] <= k


def _as_is(s: str) -> str:
    return s


def _trim_end(s: str) -> str:
    return s.rstrip(JS_SPACE)


def _trim(s: str) -> str:
    return s.strip(JS_SPACE)


_SHAPES = (_as_is, _trim_end, _trim)


def _search(lines: "Sequence[str]", old: "Sequence[str]", start: int, budget: "list[int]") -> "int | None":
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


def _seeker(budget: "list[int]") -> "Callable[[Sequence[str], Sequence[str], int, bool], int | None]":
    def seek(lines: "Sequence[str]", old: "Sequence[str]", start: int, at_eof: bool) -> "int | None":
        """Cline's find_context: exact, then each line's end trimmed, then both ends, then the
        first block similar enough, all on normalised text; `*** End of File` tries the end
        first, then from `start`."""
        if at_eof:
            found = _search(lines, old, len(lines) - len(old), budget)
            if found is not None:
                return found
        return _search(lines, old, start, budget)

    return seek


def _anchor(lines: "Sequence[str]", wanted: "Sequence[str]", start: int, at_eof: bool) -> "int | None":
    """An `@@ <anchor>` line: the first non-empty line from `start` equal after normalising,
    itself or trimmed; none found leaves the search where it was."""
    target = _plain(wanted[0].strip(JS_SPACE))
    for at in range(start, len(lines)):
        line = lines[at]
        if line and (_plain(line) == target or _plain(line.strip(JS_SPACE)) == target):
            return at
    return None


def patch_rules(budget: "list[int]") -> "Any":
    """Cline's applier in the one V4A model: lines split on LF (CRLF folded first) and joined
    back as they are, only the `-`/`+` runs rewritten, a pure insertion where the search stands,
    no retry without a final empty line, and its own matchers."""
    from engramory import patches

    return patches.Rules(
        "cline", lf_only=True, space=JS_SPACE, retry_blank=False, insert_here=True, joined=True,
        seek=_seeker(budget), anchor=_anchor,
    )


def parse_patch(text: str) -> "list[Any]":
    """Cline's apply_patch parser: the file operations, or PatchError where Cline reports an
    error (or, for an update section holding a blank or `***` line, loops for ever)."""
    from engramory import patches

    lines = [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]
    begin = next((i for i, line in enumerate(lines) if line.startswith(BEGIN)), -1)
    end = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].startswith(END)), -1)
    if begin >= 0 or end >= 0:
        if begin < 0 or end < begin:
            raise patches.PatchError("incomplete sentinels")
        lines = lines[begin:end + 1]
    else:
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
        lines = [BEGIN] + body + [END]
    ops: list[Any] = []
    seen: set[str] = set()
    i = 1
    while i < len(lines) and not lines[i].startswith(END):
        line = lines[i]
        found = [(p, k) for p, k in ((P_UPDATE, patches.UPDATE), (P_DELETE, patches.DELETE), (P_ADD, patches.ADD))
                 if line.startswith(p)]
        if not found:
            raise patches.PatchError("unknown line while parsing: %r" % line[:80])
        prefix, kind = found[0]
        op = patches.FileOp(kind, line[len(prefix):].strip(JS_SPACE), patches.V4A)
        if op.path in seen:
            raise patches.PatchError("duplicate %s for file: %s" % (kind, op.path))
        seen.add(op.path)
        i += 1
        if kind == patches.ADD:
            added = []
            while i < len(lines) and not lines[i].startswith(ACTION_ENDS):
                if not lines[i].startswith("+"):
                    raise patches.PatchError("invalid Add File line (missing '+'): %r" % lines[i][:80])
                added.append(lines[i][1:])
                i += 1
            op.content = "\n".join(added)
        elif kind == patches.UPDATE:
            if i < len(lines) and lines[i].startswith(P_MOVE):
                op.move_to = lines[i][len(P_MOVE):].strip(JS_SPACE)
                i += 1
            i = _sections(lines, i, op)
        ops.append(op)
    return ops


def _sections(lines: "list[str]", i: int, op: "Any") -> int:
    from engramory import patches

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


def _inside(raw: str, full: str, cwd: "str | None") -> bool:
    """Cline refuses a relative path that leaves the workspace."""
    if raw.startswith("/") or cwd is None:
        return True
    root = scope.abspath(cwd)
    return full == root or full.startswith(root.rstrip(scope.sep) + scope.sep)


def predict_patch(text: str, cwd: "str | None", read: "Any") -> "dict[str, bytes | None] | None":
    """Every file Cline's apply_patch writes (None: removed), or None when Cline refuses the
    whole patch (it checks every file and hunk before writing any). TooCostly when a fuzzy
    match cannot be worked out in time."""
    from engramory import patches
    from engramory.edits import encode

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
            after = encode(_eol(raw).join(result.replace("\r\n", "\n").split("\n")))
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


def _written(text: str, cwd: "str | None", environ: "Mapping[str, str]") -> "list[tuple[str, Any]]":
    """(guarded file, op) for every file the patch would write."""
    from engramory import patches

    try:
        ops = parse_patch(text)
    except patches.PatchError:
        return []
    out = []
    for op in ops:
        target = scope.resolve_path(op.target, cwd)
        if op.kind != patches.DELETE and scope.interesting(target, environ):
            out.append((target, op))
    return out


def _known(after: "bytes | None") -> "Any":
    return lambda before: after


def _patch(text: str, cwd: "str | None", env: "Mapping[str, str] | None", environ: "Mapping[str, str]") -> "Decision | None":
    from engramory.guard import judge_bound, read_regular

    try:
        predicted = predict_patch(text, cwd, read_regular)
    except TooCostly:
        why = "Cline's fuzzy matching of this patch could not be worked out in time"
        for target, op in _written(text, cwd, environ):
            added = "".join(line + "\n" for hunk in op.hunks for line in hunk.new)
            decision = judge_bound(target, read_regular(target), added, env, window(), "apply_patch", why)
            if decision is not None:
                return decision
        return None
    if predicted is None:
        # Cline refuses the patch and writes nothing (judge() says nothing then, and traces it)
        for target, _ in _written(text, cwd, environ):
            claudelike.judge(target, "apply_patch", _known(None), env, window())
        return None
    for target, after in predicted.items():
        if after is None or not scope.interesting(target, environ):
            continue
        decision = claudelike.judge(target, "apply_patch", _known(after), env, window())
        if decision is not None:
            return decision
    return None


def before_tool(payload: "dict[str, Any]", env: "Mapping[str, str] | None") -> "Decision | None":
    tool, args, cwd = payload.get("tool"), payload.get("input"), payload.get("cwd")
    base = cwd if isinstance(cwd, str) else None
    environ = scope.environ() if env is None else env
    if not isinstance(args, dict):
        return None
    if tool == "apply_patch":
        text = args.get("input")
        return _patch(text, base, env, environ) if isinstance(text, str) else None
    if tool != "editor":
        return None
    raw = claudelike.path_of(args, ("path",))
    if raw is None:
        return None
    full = scope.resolve_path(raw, base)
    if not scope.interesting(full, environ):
        return None
    return claudelike.judge(full, "editor", lambda before: apply_editor(before, args), env, window())


DIALECT = claudelike.Dialect(NAME, {}, ("path",), lambda kind, before, args: None, index_paths, window)


def respond(raw: bytes, env: "Mapping[str, str] | None" = None) -> "tuple[str, str, int]":
    """The plugin's question -> (stdout JSON, stderr, 0)."""
    payload = claudelike.parse(raw)
    if payload is None:
        return FAIL_OPEN, "", 0
    event = payload.get("event")
    if event == "before":
        d = before_tool(payload, env)
        if d is None:
            return FAIL_OPEN, "", 0
        from engramory.guard import DENY  # only with a decision: the ignored path stays off the guard

        return jsonlite.dumps({"deny": d.message} if d.action == DENY else {"note": d.message}), "", 0
    if event in ("after", "start"):
        if event == "after" and payload.get("tool") not in SHELL_TOOLS:
            return FAIL_OPEN, "", 0
        shaped = {"session_id": payload.get("sessionID"), "cwd": payload.get("cwd"), "tool_name": payload.get("tool")}
        rendered = claudelike.notice(claudelike.POST if event == "after" else claudelike.START, shaped, DIALECT, env)
        text = ""
        if rendered:
            inner = jsonlite.loads(rendered).get("hookSpecificOutput", {})
            text = inner.get("additionalContext", "") if isinstance(inner, dict) else ""
        return jsonlite.dumps({"context": text} if text else {}), "", 0
    return FAIL_OPEN, "", 0
