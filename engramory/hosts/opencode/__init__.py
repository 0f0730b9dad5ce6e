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
    from collections.abc import Mapping
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


def _strip_bom(text: str) -> "tuple[bool, str]":
    return (True, text[1:]) if text.startswith(BOM_CHAR) else (False, text)


def _decode(raw: bytes) -> "tuple[bool, str]":
    return _strip_bom(raw.decode("utf-8", "replace"))


def _encode(text: str, bom: bool) -> bytes:
    # lazy: edits loads only for a call that reaches prediction, never on the ignored path
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

    from engramory.hosts.opencode import model  # lazy: the ignored path must not load the replacer chain

    result = model.replace(text, me(old), me(new), replace_all)
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
    # lazy: patches loads only for a patch that names a guarded file
    from engramory import patches

    return patches.Rules(
        "opencode", lf_only=True, space=patches.JS_SPACE, plain=PATCH_PLAIN, keep_context=False, after_blank=False,
        blank_tail=False, eof=patches.EOF_OR_SCAN, empty_matches=False,
    )


def apply_patch_update(before: bytes, hunks: "list[Any]") -> "bytes | None":
    # lazy: patches loads only for a patch that names a guarded file
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
    # lazy: patches loads only for a patch that names a guarded file
    from engramory import patches

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
            old = before if source == target else scope.read_regular(source)
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


if TYPE_CHECKING:  # mypy checks this module against the registry's Host Protocol; never run
    from engramory.hosts import opencode as _self
    from engramory.hosts.protocol import Host

    _host: Host = _self
