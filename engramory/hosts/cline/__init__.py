"""Cline CLI (`cline`): a plugin (`.cline/plugins/engramory.js`, written by `engramory install
--host cline`) hands each `editor` and `apply_patch` call to this module through the generic
entry, `hooks/engramory_hook.py cline` (plugins of earlier installs run the shim
`hooks/engramory_cline_hook.py`), and answers `{skip: true, reason}` when the answer is a deny
(only that call is blocked; the model reads `{"error": reason}`). A plugin that throws or takes
more than 3 s ends the whole run, so the plugin bounds every call to well under that and lets
the tool run when the guard is slow, missing or broken.

Protocol: the JS-plugin dialect (engramory.hosts.plugin), with Cline's keys:
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
  (its source in the npm package; tests/hosts/cline/test_cline_patch_model.py checks the port against
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

from engramory import scope
from engramory.hosts import EDIT, parse_object, path_of, plugin_quiet

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from engramory.judge import Decision
    from engramory.size import Window

# --- registry declarations (see engramory/hosts/__init__.py) ---
NAME = "cline"
TITLE = "Cline CLI"
VERIFIED = "3.0.65"
INSTALLER = "engramory.hosts.cline.install"
FAIL_OPEN = "{}"  # the plugin reads it as "go on"
TOOLS = {"editor": EDIT}  # the file tool; apply_patch (PATCH_TOOLS) is judged whatever it names
PATH_KEYS = ("path",)
PATCH_TOOLS = ("apply_patch",)
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
    from engramory.scope import encode  # loaded already (the one UTF-8 writer): no import on this path

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


def _written(text: str, cwd: "str | None", environ: "Mapping[str, str]") -> "list[tuple[str, Any]]":
    """(guarded file, op) for every file the patch would write."""
    # lazy: patches loads only for a patch that names a guarded file
    from engramory import patches
    from engramory.hosts.cline import model  # lazy: only an apply_patch call loads the port

    try:
        ops = model.parse_patch(text)
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
    from engramory.hosts import claudelike  # lazy: the host-side judge, only once a guarded file is written
    from engramory.hosts.cline import model  # lazy: only an apply_patch call loads the port

    try:
        predicted = model.predict_patch(text, cwd, scope.read_regular)
    except model.TooCostly:
        why = "Cline's fuzzy matching of this patch could not be worked out in time"
        for target, op in _written(text, cwd, environ):
            added = "".join(line + "\n" for hunk in op.hunks for line in hunk.new)
            decision = claudelike.judge_bound(target, scope.read_regular(target), added, env, window(), "apply_patch", why)
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
    if tool in PATCH_TOOLS:
        text = args.get("input")
        return _patch(text, base, env, environ) if isinstance(text, str) else None
    if tool not in TOOLS:
        return None
    raw = path_of(args, PATH_KEYS)
    if raw is None:
        return None
    full = scope.resolve_path(raw, base)
    if not scope.interesting(full, environ):
        return None
    from engramory.hosts import claudelike  # lazy: the host-side judge, only for a guarded file

    return claudelike.judge(full, "editor", lambda before: apply_editor(before, args), env, window())


def respond(raw: bytes, env: "Mapping[str, str] | None" = None) -> "tuple[str, str, int]":
    """The plugin's question -> (stdout JSON, stderr, 0) (engramory.hosts.plugin); one that
    surely gets `{}` (engramory.hosts.plugin_quiet) before the plugin dialect is loaded."""
    payload = parse_object(raw)
    if payload is None or plugin_quiet(payload, "input", "cwd", TOOLS, PATH_KEYS, env, PATCH_TOOLS, SHELL_TOOLS):
        return FAIL_OPEN, "", 0
    from engramory.hosts import plugin  # lazy: a quiet question never loads the plugin dialect

    host = plugin.Plugin(NAME, before_tool, index_paths, window, shell_tools=SHELL_TOOLS, cwd_key="cwd")
    return plugin.answer(payload, env, host)


if TYPE_CHECKING:  # mypy checks this module against the registry's Host Protocol; never run
    from engramory.hosts import cline as _self
    from engramory.hosts.protocol import Host

    _host: Host = _self
