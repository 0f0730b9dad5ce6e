"""Factory droid (`@factory/cli`): Claude Code's hook schema in `~/.factory/settings.json` or
`<project>/.factory/settings.json`, so the dialect is the shared one
(engramory.hosts.claudelike); what is droid's own is here.

- Tools: `Create {file_path, content}` and `Edit {file_path, old_str, new_str, change_all?}`,
  or, with the "apply-patch" file-edit profile (droid's default for OpenAI-provider models),
  `ApplyPatch`, a freeform tool whose PreToolUse payload is `tool_input: {"input": <the patch
  text>}` (measured; relative paths are the session's cwd); shell is `Execute`. A deny
  (`hookSpecificOutput` deny) reaches the model as the tool result `Error: <reason>`. Exit 1 allows (stderr leaks into the result); we always exit 0.
- Edit model, measured on droid 0.225.2: an EXACT match (no whitespace, quote or indentation
  fuzz) after line endings are normalised: the file's CRLF and the strings' CRLF become LF
  before matching, a file that was all CRLF is written back CRLF, and a file with mixed
  endings is written all LF. `old_str` must be unique unless `change_all`; an empty one is
  refused. `Create` writes the content over any old file, keeping its BOM, and with CRLF
  line breaks when the old file's were all CRLF (measured here; not in the shared notes).
- ApplyPatch: predicted by a port of droid's own splitter, parser and applier
  (engramory.hosts.droid.model): every operation of a patch applied on its own, in order, on
  what the operations before it left; where droid's result cannot be told (a file it decodes as
  another encoding, or one with a credential in it, since droid matches against a masked
  copy), the worst case is judged: every line the patch writes there, added.
- Native memory: none examined; the guard keeps any `MEMORY.md` (or ENGRAMORY_INDEX_PATH).
- Stale writes (measured, tests/hosts/droid/test_droid_stale.py): Edit and ApplyPatch refuse a file
  changed since its Read (droid's own mtime check); Create does not, and drops the other
  writer's lines. PostToolUse on `Read` records what the agent saw (engramory.stale), so the
  guard refuses that Create.
"""

from engramory.hosts import EDIT, WRITE, claude_entries

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from engramory.guard import Decision
    from engramory.hosts import claudelike
    from engramory.size import Window

# --- registry declarations (see engramory/hosts/__init__.py) ---
NAME = "droid"
TITLE = "Factory droid"
VERIFIED = "0.225.2"
INSTALLER = "engramory.hosts.droid.install"
TOOLS = {"Create": WRITE, "Edit": EDIT}
PATH_KEYS = ("file_path",)
PATCH_TOOL = "ApplyPatch"
BOM = b"\xef\xbb\xbf"


def window() -> "Window":
    from engramory import size  # lazy: sizes only when a change is judged, not on the ignored path

    return size.Window(note="droid loads no MEMORY.md of its own: the standard caps, in bytes")


def index_paths(cwd: str, env: "Mapping[str, str]") -> "list[str]":
    return []


def _decode(raw: bytes) -> "tuple[str, bool]":
    bom = raw.startswith(BOM)
    return raw[3 if bom else 0 :].decode("utf-8", "replace"), bom


def apply_edit(before: "bytes | None", old: str, new: str, change_all: bool) -> "bytes | None":
    """The bytes `Edit` writes, or None when droid refuses the call."""
    from engramory.edits import encode  # lazy: only a call that may change an index needs this

    if before is None or old == "":
        return None
    text, bom = _decode(before)
    all_crlf = _all_crlf(text)
    body = text.replace("\r\n", "\n")
    old = old.replace("\r\n", "\n")
    new = new.replace("\r\n", "\n")
    n = body.count(old)
    if n == 0 or (n > 1 and not change_all):
        return None
    after = body.replace(old, new) if change_all else body.replace(old, new, 1)
    if all_crlf:
        after = after.replace("\n", "\r\n")
    return (BOM if bom else b"") + encode(after)


def _all_crlf(text: str) -> bool:
    crlf = text.count("\r\n")
    return crlf > 0 and crlf == text.count("\n")


def apply_create(before: "bytes | None", content: str) -> bytes:
    """Measured (differential suite): over a file whose line breaks are all CRLF, the content
    is written with CRLF too; over anything else, as given. An old file's BOM stays."""
    from engramory.edits import encode  # lazy: only a call that may change an index needs this

    if before is None:
        return encode(content)
    text, bom = _decode(before)
    if _all_crlf(text):
        content = content.replace("\r\n", "\n").replace("\n", "\r\n")
    if bom and not content.startswith("\ufeff"):
        return BOM + encode(content)
    return encode(content)


def predict(kind: str, before: "bytes | None", tool_input: "dict[str, Any]") -> "bytes | None":
    if kind == WRITE:
        content = tool_input.get("content")
        return apply_create(before, content) if isinstance(content, str) else None
    old, new = tool_input.get("old_str"), tool_input.get("new_str")
    if not isinstance(old, str) or not isinstance(new, str):
        return None
    return apply_edit(before, old, new, tool_input.get("change_all") is True)


def judge_patch(tool_input: "dict[str, Any]", cwd: "str | None", env: "Mapping[str, str] | None") -> "Decision | None":
    """ApplyPatch: each file the patch writes that the guard keeps, judged on the bytes droid
    leaves there (engramory.hosts.droid.model), or by the worst case where those are not known."""
    from engramory import patches, scope  # lazy: the patch parser only for a call that carries a patch
    from engramory.hosts import claudelike  # lazy: loaded already once a call is judged

    # lazy: the edit model only for a call that may change an index
    from engramory.hosts.droid import model as droid_patch

    text = tool_input.get("input")
    if not isinstance(text, str):
        return None
    try:
        ops = droid_patch.split(text)
    except patches.PatchError:
        return None  # droid refuses the whole patch
    environ = scope.environ() if env is None else env

    def resolve(raw: str) -> str:
        return scope.resolve_path(raw, cwd)

    targets = [resolve(op.move_to or op.path) for op in ops if op.kind != "delete"]
    for target in dict.fromkeys(t for t in targets if scope.interesting(t, environ)):

        def run(before: "bytes | None", target: str = target) -> "bytes | claudelike.Unknown | None":
            after, why = droid_patch.predict(ops, resolve, target, before, scope.read_regular)
            if why:
                return claudelike.Unknown(droid_patch.added_to(ops, resolve, target, scope.read_regular), why)
            return after

        decision = claudelike.judge(target, PATCH_TOOL, run, env, window())
        if decision is not None:
            return decision
    return None


READ_TOOL = "Read"  # PostToolUse: what the agent read, for the stale-write rule (engramory.stale)


def dialect() -> "claudelike.Dialect":
    """Factory droid's dialect: the shared one (engramory.hosts.claudelike) with its own tools,
    edit model, indexes and window; built only for a call the quiet check does not answer."""
    from engramory.hosts import claudelike  # lazy: a quiet call never loads the shared dialect

    return claudelike.Dialect(NAME, TOOLS, PATH_KEYS, predict, index_paths, window, {PATCH_TOOL: judge_patch},
                              read_tools=(READ_TOOL,))


# The entry points engramory.hosts.run calls (hooks/engramory_hook.py droid <event>).
respond, post, start = claude_entries(dialect, TOOLS, PATH_KEYS, judged=(PATCH_TOOL,))
ENTRIES = {"PreToolUse": "respond", "PostToolUse": "post", "SessionStart": "start"}


if TYPE_CHECKING:  # mypy checks this module against the registry's Host Protocol; never run
    from engramory.hosts import droid as _self
    from engramory.hosts.protocol import Host

    _host: Host = _self
