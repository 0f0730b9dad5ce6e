"""opencode (`opencode-ai`): a JS plugin (`hooks/opencode/engramory.js`, copied into a plugins
folder by `engramory install --host opencode`) hands each `write`, `edit` and `apply_patch` to
this module through `hooks/engramory_opencode_hook.py` and throws the reason when the answer is
a deny. opencode has no hook timeout at all (a plugin that never answers hangs the session),
so the plugin bounds every call itself and lets the tool run when the guard is slow, missing or
broken.

Protocol (plugin -> script, one JSON object on stdin; script -> plugin, one on stdout):
`{"event": "before", "tool", "args", "directory", "sessionID"}` -> `{"deny": R}` | `{"note": T}` | `{}`;
`{"event": "read", "tool", "args", "directory", "sessionID"}` (after `read`: what the session
was shown of an index is recorded for the stale-write rule, engramory.stale) -> `{}`;
`{"event": "after", "tool", "directory", "sessionID"}` (shell tools) and
`{"event": "start", "directory", "sessionID"}` -> `{"context": T}` | `{}`.

Edit model, ported from opencode 1.18.33's embedded source:
- `edit`: the file's BOM is set aside; `oldString` and `newString` have CRLF folded, then take
  CRLF when the file holds any; the replacer chain `Ts()` runs on the file text as it is (CR
  included): exact, line-trimmed, block-anchor (first and last line anchors, middle lines by
  Levenshtein similarity >= 0.65, the block may be up to a quarter longer or shorter),
  whitespace-normalised, indentation-flexible, escape-normalised, trimmed-boundary,
  context-aware, multi-occurrence. The first candidate found exactly once is replaced (every
  occurrence with `replaceAll`); a candidate much larger than `oldString` refuses the edit.
  An empty `oldString` creates a missing file only.
- `write`: the content as given, with the old file's BOM kept.
- `apply_patch`: opencode's own V4A applier: lines matched exact, then trimEnd, trim, then trim
  with Unicode punctuation folded; the matched file lines are replaced by the patch's lines
  (so CRLF on them becomes LF); the result always ends with a newline; `Add File` overwrites.
"""

from engramory import jsonlite, scope
from engramory.hosts import claudelike

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import Any

    from engramory.guard import Decision
    from engramory.size import Window
    from engramory.stale import Session

# --- registry declarations (see engramory/hosts/__init__.py) ---
NAME = "opencode"
TITLE = "opencode"
VERIFIED = "1.18.33"
INSTALLER = "engramory.hosts.opencode.install"
SHELL_TOOLS = ("bash",)
FAIL_OPEN = "{}"  # engramory.hosts.run prints this when anything of ours fails: the plugin reads it as "go on"
BOM_CHAR = "\ufeff"
BOM = b"\xef\xbb\xbf"


def window() -> "Window":
    from engramory import size  # lazy: sizes only when a change is judged, not on the ignored path

    return size.Window(note="opencode loads no MEMORY.md of its own (AGENTS.md and friends load whole): the standard caps")


def index_paths(cwd: str, env: "Mapping[str, str]") -> "list[str]":
    return []


# --- the replacer chain (opencode's Ts) -------------------------------------------------------

_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
ANCHOR_SIMILARITY = 0.65


def _trim(s: str) -> str:
    return s.strip(_JS_SPACE)


def _lev(a: str, b: str) -> int:
    if a == "" or b == "":
        return max(len(a), len(b))
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (0 if a[i - 1] == b[j - 1] else 1))
        prev = cur
    return prev[len(b)]


def _span(lines: "list[str]", start: int, end: int) -> "tuple[int, int]":
    """(offset of line `start`, offset of the end of line `end`), lines joined by '\\n'."""
    a = sum(len(lines[m]) + 1 for m in range(start))
    b = a
    for m in range(start, end + 1):
        b += len(lines[m]) + (1 if m < end else 0)
    return a, b


def _simple(o: str, e: str) -> "Iterator[str]":
    yield e


def _line_trimmed(o: str, e: str) -> "Iterator[str]":
    r, t = o.split("\n"), e.split("\n")
    if t[-1] == "":
        t.pop()
    for i in range(len(r) - len(t) + 1):
        if all(_trim(r[i + y]) == _trim(t[y]) for y in range(len(t))):
            a, b = _span(r, i, i + len(t) - 1) if t else (0, 0)
            yield o[a:b]


def _block_anchor(o: str, e: str) -> "Iterator[str]":
    r, t = o.split("\n"), e.split("\n")
    if len(t) < 3:
        return
    if t[-1] == "":
        t.pop()
    first, last, size = _trim(t[0]), _trim(t[-1]), len(t)
    slack = max(1, size // 4)
    cands = []
    for a in range(len(r)):
        if _trim(r[a]) != first:
            continue
        for g in range(a + 2, len(r)):
            if _trim(r[g]) == last:
                if abs((g - a + 1) - size) <= slack:
                    cands.append((a, g))
                break
    if not cands:
        return

    def score(a: int, g: int, early: bool) -> float:
        c = g - a + 1
        n = min(size - 2, c - 2)
        if n <= 0:
            return 1.0
        h = 0.0
        for k in range(1, min(size - 1, c - 1)):
            d, w = _trim(r[a + k]), _trim(t[k])
            m = max(len(d), len(w))
            if m == 0:
                continue
            h += (1 - _lev(d, w) / m) / (n if early else 1)
            if early and h >= ANCHOR_SIMILARITY:
                break
        return h if early else h / n

    if len(cands) == 1:
        a, g = cands[0]
        if score(a, g, True) >= ANCHOR_SIMILARITY:
            x, y = _span(r, a, g)
            yield o[x:y]
        return
    best, best_score = None, -1.0
    for a, g in cands:
        s = score(a, g, False)
        if s > best_score:
            best, best_score = (a, g), s
    if best is not None and best_score >= ANCHOR_SIMILARITY:
        x, y = _span(r, best[0], best[1])
        yield o[x:y]


def _ws_norm(s: str) -> str:
    import re  # only here: the edit path, never the hot path of a tool the guard leaves alone

    return _trim(re.sub(r"\s+", " ", s))


def _whitespace_normalised(o: str, e: str) -> "Iterator[str]":
    import re

    t = _ws_norm(e)
    lines = o.split("\n")
    for u in lines:
        if _ws_norm(u) == t:
            yield u
        elif t in _ws_norm(u):
            words = re.split(r"\s+", _trim(e))
            if words:
                pattern = r"\s+".join(re.escape(w) for w in words)
                m = re.search(pattern, u)
                if m:
                    yield m.group(0)
    n = e.split("\n")
    if len(n) > 1:
        for y in range(len(lines) - len(n) + 1):
            block = "\n".join(lines[y : y + len(n)])
            if _ws_norm(block) == t:
                yield block


def _dedent(s: str) -> str:
    import re

    u = s.split("\n")
    m = [x for x in u if len(_trim(x)) > 0]
    if not m:
        return s
    least = min(len(re.match(r"^(\s*)", x).group(1)) for x in m)  # type: ignore[union-attr]
    return "\n".join(x if len(_trim(x)) == 0 else x[least:] for x in u)


def _indentation_flexible(o: str, e: str) -> "Iterator[str]":
    t = _dedent(e)
    lines, n = o.split("\n"), len(e.split("\n"))
    for y in range(len(lines) - n + 1):
        block = "\n".join(lines[y : y + n])
        if _dedent(block) == t:
            yield block


_ESC = r"\\(n|t|r|'|\"|`|\\|\n|\$)"
_ESC_MAP = {"n": "\n", "t": "\t", "r": "\r", "'": "'", '"': '"', "`": "`", "\\": "\\", "\n": "\n", "$": "$"}


def _unescape(s: str) -> str:
    import re

    return re.sub(_ESC, lambda m: _ESC_MAP[m.group(1)], s)


def _escape_normalised(o: str, e: str) -> "Iterator[str]":
    t = _unescape(e)
    if t in o:
        yield t
    lines, n = o.split("\n"), len(t.split("\n"))
    for y in range(len(lines) - n + 1):
        block = "\n".join(lines[y : y + n])
        if _unescape(block) == t:
            yield block


def _trimmed_boundary(o: str, e: str) -> "Iterator[str]":
    r = _trim(e)
    if r == e:
        return
    if r in o:
        yield r
    lines, n = o.split("\n"), len(e.split("\n"))
    for k in range(len(lines) - n + 1):
        block = "\n".join(lines[k : k + n])
        if _trim(block) == r:
            yield block


def _context_aware(o: str, e: str) -> "Iterator[str]":
    r = e.split("\n")
    if len(r) < 3:
        return
    if r[-1] == "":
        r.pop()
    t = o.split("\n")
    first, last = _trim(r[0]), _trim(r[-1])
    for y in range(len(t)):
        if _trim(t[y]) != first:
            continue
        for u in range(y + 2, len(t)):
            if _trim(t[u]) == last:
                m = t[y : u + 1]
                if len(m) == len(r):
                    same = seen = 0
                    for g in range(1, len(m) - 1):
                        c, h = _trim(m[g]), _trim(r[g])
                        if c or h:
                            seen += 1
                            if c == h:
                                same += 1
                    if seen == 0 or same / seen >= 0.5:
                        yield "\n".join(m)
                        break
                break


def _multi_occurrence(o: str, e: str) -> "Iterator[str]":
    start = 0
    while True:
        i = o.find(e, start)
        if i == -1:
            return
        yield e
        start = i + len(e)


REPLACERS = (
    _simple, _line_trimmed, _block_anchor, _whitespace_normalised, _indentation_flexible,
    _escape_normalised, _trimmed_boundary, _context_aware, _multi_occurrence,
)


def _too_large(y: str, e: str) -> bool:
    r = len(e.split("\n"))
    if len(y.split("\n")) >= max(r + 3, r * 2):
        return True
    if r == 1:
        return False
    return len(_trim(y)) > max(len(_trim(e)) + 500, len(_trim(e)) * 4)


def _js_replacement(new: str, match: str, before: str, after: str) -> str:
    """`new` as String.prototype.replace reads a replacement string: $$, $&, $`, $'."""
    if "$" not in new:
        return new
    import re

    return re.sub(r"\$([$&`'])", lambda m: {"$": "$", "&": match, "`": before, "'": after}[m.group(1)], new)


def replace(o: str, e: str, r: str, replace_all: bool = False) -> "str | None":
    """opencode's Ts(): the text after the edit, or None where it throws (the edit fails)."""
    if e == r or e == "":
        return None
    for replacer in REPLACERS:
        for y in replacer(o, e):
            u = o.find(y)
            if u == -1:
                continue
            if _too_large(y, e):
                return None
            if replace_all:
                if y == "":
                    return None  # a whitespace-only oldString: not modelled, and the host's result is absurd
                out, pos = [], 0
                while True:
                    i = o.find(y, pos)
                    if i == -1:
                        break
                    out.append(o[pos:i])
                    out.append(_js_replacement(r, y, o[:i], o[i + len(y) :]))
                    pos = i + len(y)
                out.append(o[pos:])
                return "".join(out)
            if u != o.rfind(y):
                continue
            return o[:u] + r + o[u + len(y) :]
    return None  # not found, or only ambiguous matches


def _strip_bom(text: str) -> "tuple[bool, str]":
    return (True, text[1:]) if text.startswith(BOM_CHAR) else (False, text)


def _decode(raw: bytes) -> "tuple[bool, str]":
    return _strip_bom(raw.decode("utf-8", "replace"))


def _encode(text: str, bom: bool) -> bytes:
    from engramory.edits import encode

    return (BOM if bom else b"") + encode(_strip_bom(text)[1])


def apply_edit(before: "bytes | None", old: str, new: str, replace_all: bool) -> "bytes | None":
    if old == new:
        return None
    if old == "":
        if before is not None:
            return None
        bom, text = _strip_bom(new)
        return _encode(text, bom)
    if before is None:
        return None
    bom, text = _decode(before)
    eol = "\r\n" if "\r\n" in text else "\n"

    def me(s: str) -> str:
        s = s.replace("\r\n", "\n")
        return s if eol == "\n" else s.replace("\n", "\r\n")

    result = replace(text, me(old), me(new), replace_all)
    if result is None:
        return None
    nbom, result = _strip_bom(result)
    return _encode(result, bom or nbom)


def apply_write(before: "bytes | None", content: str) -> bytes:
    old_bom = before is not None and _decode(before)[0]
    cbom, text = _strip_bom(content)
    return _encode(text, old_bom or cbom)


# --- apply_patch (opencode's Er / bn / cn / Lr): engramory.patches with opencode's rules ---------

# opencode's typographic folding: quotes, dashes and NBSP made plain, an ellipsis as three dots.
PATCH_PLAIN = {
    0x2018: "'", 0x2019: "'", 0x201A: "'", 0x201B: "'", 0x201C: '"', 0x201D: '"', 0x201E: '"', 0x201F: '"',
    0x2010: "-", 0x2011: "-", 0x2012: "-", 0x2013: "-", 0x2014: "-", 0x2015: "-", 0x00A0: " ", 0x2026: "...",
}


def patch_rules() -> "Any":
    """How opencode's apply_patch reads a file (its source, ported): lines split on LF with a
    CR kept in the text, JavaScript's whitespace (a BOM included), its own folding table, the
    whole matched span rewritten from the hunk, a pure insertion before a final empty line,
    the lines joined back with LF (a final empty line is lost), `*** End of File` tried at the
    end first, then anywhere after the previous hunk, and old lines left empty by the retry
    without a final empty line found nowhere."""
    from engramory import patches

    return patches.Rules(
        "opencode", lf_only=True, space=_JS_SPACE, plain=PATCH_PLAIN, keep_context=False, after_blank=False,
        blank_tail=False, eof=patches.EOF_OR_SCAN, empty_matches=False,
    )


def apply_patch_update(before: bytes, hunks: "list[Any]") -> "bytes | None":
    from engramory import patches

    bom, text = _decode(before)
    try:
        result = patches.update_text(text, hunks, patch_rules())
    except patches.PatchError:
        return None
    nbom, result = _strip_bom(result)
    return _encode(result, bom or nbom)


def apply_patch_add(content: str) -> bytes:
    if content and not content.endswith("\n"):
        content += "\n"
    bom, text = _strip_bom(content)
    return _encode(text, bom)


# --- the dialect ------------------------------------------------------------------------------


def predict(kind: str, before: "bytes | None", args: "dict[str, Any]") -> "bytes | None":
    if kind == claudelike.WRITE:
        content = args.get("content")
        return apply_write(before, content) if isinstance(content, str) else None
    old, new = args.get("oldString"), args.get("newString")
    if not isinstance(old, str) or not isinstance(new, str):
        return None
    return apply_edit(before, old, new, args.get("replaceAll") is True)


TOOLS = {"write": claudelike.WRITE, "edit": claudelike.EDIT}
DIALECT = claudelike.Dialect(NAME, TOOLS, ("filePath",), predict, index_paths, window)


def _window(dialect: "claudelike.Dialect") -> "Window":
    return dialect.window() if dialect.window is not None else window()


def _patch(text: str, directory: "str | None", env: "Mapping[str, str] | None", environ: "Mapping[str, str]",
           dialect: "claudelike.Dialect" = DIALECT, seen: "Session | None" = None) -> "Decision | None":
    from engramory import patches
    from engramory.guard import read_regular

    try:
        ops = patches.parse_v4a(text)
    except patches.PatchError:
        return None
    for op in ops:
        target = scope.resolve_path(op.target, directory)
        if op.kind == patches.DELETE or not scope.interesting(target, environ):
            continue
        source = scope.resolve_path(op.path, directory)

        def run(before: "bytes | None", op: "Any" = op, source: str = source, target: str = target) -> "bytes | None":
            if op.kind == patches.ADD:
                return apply_patch_add(op.content or "")  # Add overwrites an existing file
            old = before if source == target else read_regular(source)
            return apply_patch_update(old, op.hunks) if old is not None else None

        decision = claudelike.judge(target, "apply_patch", run, env, _window(dialect), seen)
        if decision is not None:
            return decision
    return None


def before_tool(payload: "dict[str, Any]", env: "Mapping[str, str] | None",
                dialect: "claudelike.Dialect" = DIALECT) -> "Decision | None":
    tool, args = payload.get("tool"), payload.get("args")
    directory = payload.get("directory")
    base = directory if isinstance(directory, str) else None
    if not isinstance(args, dict):
        return None
    environ = scope.environ() if env is None else env
    if tool == "apply_patch":
        text = args.get("patchText")
        return _patch(text, base, env, environ, dialect, _session(payload, dialect)) if isinstance(text, str) else None
    kind = TOOLS.get(tool) if isinstance(tool, str) else None
    raw = claudelike.path_of(args, ("filePath",))
    if kind is None or raw is None:
        return None
    full = scope.resolve_path(raw, base)  # opencode joins a relative path to the session directory
    if not scope.interesting(full, environ):
        return None
    return claudelike.judge(full, str(tool), lambda before: predict(kind, before, args), env, _window(dialect),
                            _session(payload, dialect))


def _session(payload: "dict[str, Any]", dialect: "claudelike.Dialect") -> "Session | None":
    from engramory import stale  # lazy: the stale-write record only for a call on an index

    return stale.session(dialect.name, payload.get("sessionID"))


def after_read(payload: "dict[str, Any]", env: "Mapping[str, str] | None", dialect: "claudelike.Dialect") -> None:
    """After `read`: when it read an index, record what the session saw (engramory.stale).
    Any other file: nothing imported, nothing opened."""
    args, directory = payload.get("args"), payload.get("directory")
    raw = claudelike.path_of(args, ("filePath",)) if isinstance(args, dict) else None
    if raw is None:
        return
    full = scope.resolve_path(raw, directory if isinstance(directory, str) else None)
    if not scope.guards_index(full, scope.environ() if env is None else env):
        return
    from engramory import stale  # lazy: the stale-write record only for a call on an index

    stale.note_read(full, _session(payload, dialect))


def respond(raw: bytes, env: "Mapping[str, str] | None" = None,
            dialect: "claudelike.Dialect" = DIALECT) -> "tuple[str, str, int]":
    """The plugin's question -> (stdout JSON, stderr, 0). `dialect` names the host of the
    opencode family asking (opencode itself, or a fork such as Kilo: engramory.hosts.kilo),
    whose load window judges the change."""
    payload = claudelike.parse(raw)
    if payload is None:
        return "{}", "", 0
    event = payload.get("event")
    if event == "before":
        d = before_tool(payload, env, dialect)
        if d is None:
            return "{}", "", 0
        from engramory.guard import DENY  # only with a decision: the ignored path stays off the guard

        return jsonlite.dumps({"deny": d.message} if d.action == DENY else {"note": d.message}), "", 0
    if event == "read":
        after_read(payload, env, dialect)
        return "{}", "", 0
    if event in ("after", "start"):
        if event == "after" and payload.get("tool") not in SHELL_TOOLS:
            return "{}", "", 0
        shaped = {"session_id": payload.get("sessionID"), "cwd": payload.get("directory"), "tool_name": payload.get("tool")}
        rendered = claudelike.notice(claudelike.POST if event == "after" else claudelike.START, shaped, dialect, env)
        text = ""
        if rendered:
            inner = jsonlite.loads(rendered).get("hookSpecificOutput", {})
            text = inner.get("additionalContext", "") if isinstance(inner, dict) else ""
        return jsonlite.dumps({"context": text} if text else {}), "", 0
    return "{}", "", 0
