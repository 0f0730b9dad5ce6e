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
- `apply_patch` (for gpt / codex model ids): its parser matches with fuzz that is not ported;
  the prediction uses engramory.patches on the file with CRLF folded, then the file's EOL, and
  an added file without a final newline, as measured.
Relative paths resolve against the workspace (the run's cwd) and must stay inside it.
"""

from engramory import jsonlite, scope
from engramory.hosts import claudelike

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from engramory.guard import Decision
    from engramory.size import Window

# --- registry declarations (see engramory/hosts/__init__.py) ---
NAME = "cline"
TITLE = "Cline CLI"
VERIFIED = "3.0.65"
INSTALLER = "engramory.install_cline"
FAIL_OPEN = "{}"
SHELL_TOOLS = ("run_commands",)
MAX_INPUT = 6000  # the editor refuses old_text / new_text longer than this (after the hook)


def window() -> "Window":
    from engramory import size

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


def _patch(text: str, cwd: "str | None", env: "Mapping[str, str] | None", environ: "Mapping[str, str]") -> "Decision | None":
    from engramory import patches
    from engramory.edits import encode
    from engramory.guard import read_regular

    try:
        ops = patches.parse(text)
    except patches.PatchError:
        return None
    for op in ops:
        target = scope.resolve_path(op.target, cwd)
        if op.kind == patches.DELETE or not scope.interesting(target, environ):
            continue
        source = scope.resolve_path(op.path, cwd)

        def run(before: "bytes | None", op: "Any" = op, source: str = source, target: str = target) -> "bytes | None":
            if op.kind == patches.ADD:
                if before is not None:
                    return None  # Add File on an existing file fails
                content = op.content or ""
                return encode(content[:-1] if content.endswith("\n") else content)
            old = before if source == target else read_regular(source)
            if old is None:
                return None
            raw = old.decode("utf-8", "replace")
            after = patches.apply_to(raw.replace("\r\n", "\n").encode("utf-8"), op)
            if after is None:
                return None
            body = after.decode("utf-8", "replace")
            if not raw.endswith("\n") and body.endswith("\n"):
                body = body[:-1]  # a file without a final newline stays without
            return encode(_eol(raw).join(body.split("\n")))

        decision = claudelike.judge(target, "apply_patch", run, env, window())
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
    from engramory.guard import DENY

    payload = claudelike.parse(raw)
    if payload is None:
        return FAIL_OPEN, "", 0
    event = payload.get("event")
    if event == "before":
        d = before_tool(payload, env)
        if d is None:
            return FAIL_OPEN, "", 0
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
