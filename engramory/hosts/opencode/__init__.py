"""opencode (`opencode-ai`): a JS plugin (`engramory.js`, written into a plugins folder by
`engramory install --host opencode`) hands each `write`, `edit` and `apply_patch` to this module
through the generic entry, `hooks/engramory_hook.py opencode` (plugins of earlier installs run
the shim `hooks/engramory_opencode_hook.py`), and throws the reason when the answer is a deny. opencode has no hook timeout at all (a plugin that never answers hangs the session),
so the plugin bounds every call itself and lets the tool run when the guard is slow, missing or
broken.

Protocol: the JS-plugin dialect (engramory.hosts.plugin), with opencode's keys:
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

from engramory import scope
from engramory.hosts import EDIT, WRITE, parse_object, path_of, plugin_quiet

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from engramory.hosts import plugin
    from engramory.hosts.claudelike import Unknown
    from engramory.judge import Decision
    from engramory.size import Window

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
    return (BOM if bom else b"") + scope.encode(_strip_bom(text)[1])


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

    find, put = me(old), me(new)
    at = text.find(find)
    if not replace_all and find != put and at != -1 and at == text.rfind(find):
        # the chain's first replacer (the text as given) found exactly once: what Ts() replaces,
        # without loading the other eight (most edits are exact)
        result: str | None = text[:at] + put + text[at + len(find) :]
    else:
        from engramory.hosts.opencode import model  # lazy: the chain only for an edit not found once as given

        result = model.replace(text, find, put, replace_all)
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


def predict(kind: str, before: "bytes | None", args: "dict[str, Any]") -> "bytes | Unknown | None":
    if kind == WRITE:
        content = args.get("content")
        return apply_write(before, content) if isinstance(content, str) else None
    old, new = args.get("oldString"), args.get("newString")
    if not isinstance(old, str) or not isinstance(new, str):
        return None
    return apply_edit(before, old, new, args.get("replaceAll") is True)


TOOLS = {"write": WRITE, "edit": EDIT}
PATH_KEYS = ("filePath",)
PATCH_TOOLS = ("apply_patch",)  # judged whatever it names: the patch names its files


class Family:
    """A host of the opencode family (opencode, or a fork such as Kilo: engramory.hosts.kilo):
    opencode's tools and edit models, the fork's name, load window and indexes."""

    __slots__ = ("name", "window", "index_paths", "tools", "predict")

    def __init__(self, name: str, window: "Any", index_paths: "Any") -> None:
        self.name = name
        self.window = window
        self.index_paths = index_paths
        self.tools = TOOLS
        self.predict = predict


DIALECT = Family(NAME, window, index_paths)


def _patch(text: str, directory: "str | None", env: "Mapping[str, str] | None", environ: "Mapping[str, str]",
           dialect: "Family" = DIALECT, session_id: "Any" = None) -> "Decision | None":
    from engramory import patches  # lazy: the patch parser only for a patch (never quiet)
    from engramory.hosts import claudelike, plugin  # lazy: the judge and the plugin dialect, likewise

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

        seen = plugin.session(dialect.name, session_id, target)
        decision = claudelike.judge(target, "apply_patch", run, env, dialect.window(), seen)
        if decision is not None:
            return decision
    return None


def before_tool(payload: "dict[str, Any]", env: "Mapping[str, str] | None", dialect: "Family" = DIALECT) -> "Decision | None":
    tool, args = payload.get("tool"), payload.get("args")
    directory = payload.get("directory")
    base = directory if isinstance(directory, str) else None
    if not isinstance(args, dict):
        return None
    environ = scope.environ() if env is None else env
    if tool in PATCH_TOOLS:
        text = args.get("patchText")
        if not isinstance(text, str):
            return None
        return _patch(text, base, env, environ, dialect, payload.get("sessionID"))
    kind = TOOLS.get(tool) if isinstance(tool, str) else None
    raw = path_of(args, PATH_KEYS)
    if kind is None or raw is None:
        return None
    full = scope.resolve_path(raw, base)  # opencode joins a relative path to the session directory
    if not scope.interesting(full, environ):
        return None
    from engramory.hosts import claudelike, plugin  # lazy: the host-side judge, only for a guarded file

    return claudelike.judge(full, str(tool), lambda before: predict(kind, before, args), env, dialect.window(),
                            plugin.session(dialect.name, payload.get("sessionID"), full))


def after_read(payload: "dict[str, Any]", env: "Mapping[str, str] | None", dialect: "Family" = DIALECT) -> None:
    """After `read`: when it read an index, record what the session saw (engramory.stale).
    Any other file: nothing imported, nothing opened."""
    from engramory.hosts import plugin  # lazy: loaded already by a read that is not quiet

    directory = payload.get("directory")
    plugin.record_read(dialect.name, payload.get("sessionID"), path_of(payload.get("args"), PATH_KEYS),
                       directory if isinstance(directory, str) else None, env)


def host(dialect: "Family") -> "plugin.Plugin":
    """The plugin dialect of an opencode-family host."""
    from engramory.hosts import plugin  # lazy: a quiet question never loads the plugin dialect

    return plugin.Plugin(
        dialect.name, lambda payload, env: before_tool(payload, env, dialect), dialect.index_paths, dialect.window,
        read=lambda payload, env: after_read(payload, env, dialect), shell_tools=SHELL_TOOLS,
    )


def respond(raw: bytes, env: "Mapping[str, str] | None" = None, dialect: "Family" = DIALECT) -> "tuple[str, str, int]":
    """The plugin's question -> (stdout JSON, stderr, 0) (engramory.hosts.plugin). `dialect`
    names the host of the opencode family asking (opencode itself, or a fork such as Kilo:
    engramory.hosts.kilo), whose load window judges the change. A question that surely gets
    `{}` (engramory.hosts.plugin_quiet) is answered before the plugin dialect is loaded."""
    payload = parse_object(raw)
    if payload is None or quiet(payload, env):
        return FAIL_OPEN, "", 0
    return answer(payload, env, dialect)


def quiet(payload: "dict[str, Any]", env: "Mapping[str, str] | None") -> bool:
    """Whether an opencode-family question surely gets `{}` (engramory.hosts.plugin_quiet)."""
    return plugin_quiet(payload, "args", "directory", TOOLS, PATH_KEYS, env, PATCH_TOOLS, SHELL_TOOLS)


def answer(payload: "dict[str, Any]", env: "Mapping[str, str] | None", dialect: "Family" = DIALECT) -> "tuple[str, str, int]":
    """`respond` on a question already read and found not `quiet`."""
    from engramory.hosts import plugin  # lazy: a quiet question never loads the plugin dialect

    return plugin.answer(payload, env, host(dialect))


if TYPE_CHECKING:  # mypy checks this module against the registry's Host Protocol; never run
    from engramory.hosts import opencode as _self
    from engramory.hosts.protocol import Host

    _host: Host = _self
