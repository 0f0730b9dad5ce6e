"""GitHub Copilot CLI (`@github/copilot`): its native hook dialect, `{"version": 1, "hooks":
{"preToolUse": [{"type": "command", "bash": …, "timeoutSec": …}]}}` in a JSON file of
`$COPILOT_HOME/hooks/` (default `~/.copilot/hooks/`, loaded without folder trust) or of the
repository's `.github/hooks/` (loaded only in a trusted folder).

- Payload (stdin): `{sessionId, timestamp, cwd, toolName, toolArgs}`; `toolArgs` is an object
  for function tools (`create {path, file_text}`, `edit {path, old_str, new_str}`) and the raw
  patch text for the freeform `apply_patch` (a JSON string of either is accepted too). There is
  no matcher: every tool call runs the hook, so it leaves at once for anything else.
- Deny: stdout `{"permissionDecision": "deny", "permissionDecisionReason": R}`; the model reads
  `Denied by preToolUse hook: R`. **Exit 1 denies too, and with no matcher that is every tool
  call**: nothing here exits non-zero, and the installed command ends in `|| true`.
- Stale writes (engramory.stale): postToolUse of `view` records what the session was shown of
  an index (a view of any other file imports nothing and opens nothing); preToolUse passes the
  payload's `sessionId`, so a create/edit/apply_patch that would drop lines another writer
  added since the session's last view is denied with them.
- Notices: postToolUse and sessionStart answer `{"additionalContext": T}` (appended to the tool
  result / a user message before the prompt).
- Edit model: `edit` matches loosely in native code that cannot be ported (CRLF, re-indented
  `new_str`, trailing spaces, curly quotes, runs of whitespace). Prediction: an exact unique
  match (after CRLF is folded) gives exact bytes, the file's line endings kept; else the best
  line-normalised match (indentation, spaces, quotes ignored) is spliced, with lines exact and
  bytes within a stated bound (see `predict_with_bound`); a deny on bytes alone needs the
  lower end of that bound over the cap, so an edit whose real result shrinks is never denied.
  No match at all: Copilot refuses the edit (ambiguous ones too). `create` is refused on an
  existing path. `apply_patch` (codex models on the Responses wire) keeps each file's line
  endings and missing final newline (claudelike.patch_keeping_endings), and applies a patch's
  operations one by one, stopping at the first that fails (see `apply_patch`).
"""

from engramory import jsonlite, scope
from engramory.hosts import parse_object, path_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from engramory.judge import Decision
    from engramory.size import Window

# --- registry declarations (see engramory/hosts/__init__.py) ---
NAME = "copilot"
TITLE = "GitHub Copilot CLI"
VERIFIED = "1.0.102"
INSTALLER = "engramory.hosts.copilot.install"
PRE, POST, START = "preToolUse", "postToolUse", "sessionStart"
# the notices' own event names, and the edit kinds of the Claude-shaped models (claudelike's:
# tests/hosts/copilot/test_copilot_model.py holds them equal), spelled here: every tool call of
# Copilot, which has no matcher, runs this hook, and its ignored path imports no other module
EVENTS = {PRE: "PreToolUse", POST: "PostToolUse", START: "SessionStart"}
WRITE, EDIT = "write", "edit"
TOOLS = {"create": WRITE, "edit": EDIT}
PATCH_TOOL = "apply_patch"
SHELL_TOOLS = ("bash",)
READ_TOOL = "view"
BOM = b"\xef\xbb\xbf"


def window() -> "Window":
    from engramory import size  # lazy: sizes only when a change is judged, not on the ignored path

    return size.Window(note="Copilot CLI loads no MEMORY.md of its own (its memory is a service): the standard caps")


def index_paths(cwd: str, env: "Mapping[str, str]") -> "list[str]":
    return []


# --- the edit model ---------------------------------------------------------------------------

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def _norm(line: str) -> str:
    return " ".join(line.translate(_QUOTES).split())


def _split(text: str) -> "tuple[list[str], list[str]]":
    """(lines without endings, each line's ending) of `text`."""
    parts = text.split("\n")
    lines, ends = [], []
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if last and part == "":
            break
        if part.endswith("\r") and not last:
            lines.append(part[:-1])
            ends.append("\r\n")
        else:
            lines.append(part)
            ends.append("" if last else "\n")
    return lines, ends


def _eol(ends: "list[str]") -> str:
    real = [e for e in ends if e]
    return "\r\n" if real and all(e == "\r\n" for e in real) else "\n"


def _original_offset(text: str, lf_offset: int) -> int:
    """The offset in `text` of position `lf_offset` of `text` with its CRLF folded to LF."""
    seen = 0
    pos = 0
    while True:
        crlf = text.find("\r\n", pos)
        if crlf < 0 or crlf - seen >= lf_offset:
            return lf_offset + seen
        seen += 1
        pos = crlf + 2


def predict_with_bound(before: "bytes | None", tool_input: "dict[str, Any]", kind: str) -> "tuple[bytes | None, int]":
    """(predicted bytes or None for "refused", the byte bound: the real result's size is
    within that many bytes of the prediction; its line count is exact)."""
    from engramory.scope import encode  # loaded already (the one UTF-8 writer): no import on this path

    if kind == WRITE:
        content = tool_input.get("file_text")
        if not isinstance(content, str) or before is not None:
            return None, 0  # create refuses an existing path
        return encode(content), 0
    old, new = tool_input.get("old_str"), tool_input.get("new_str")
    if before is None or not isinstance(old, str) or not isinstance(new, str) or old == "":
        return None, 0
    bom = before.startswith(BOM)
    text = before[3 if bom else 0 :].decode("utf-8", "replace")
    lines, ends = _split(text)
    eol = _eol(ends)
    lf = text.replace("\r\n", "\n")
    old_lf, new_lf = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
    head = BOM if bom else b""
    if new_lf == "" and not old_lf.endswith("\n") and (old_lf + "\n") in lf:
        old_lf += "\n"  # measured: deleting text takes the newline that ends it
    count = lf.count(old_lf)
    if count > 1:
        return None, 0  # "Ambiguous match"
    if count == 1:
        if eol == "\r\n":
            return head + encode(lf.replace(old_lf, new_lf, 1).replace("\n", "\r\n")), 0
        # Every other line keeps its own ending; the new text goes in with LF (measured).
        start = _original_offset(text, lf.index(old_lf))
        stop = _original_offset(text, lf.index(old_lf) + len(old_lf))
        return head + encode(text[:start] + new_lf + text[stop:]), 0
    # Loose: the old text's lines, normalised, as a unique run of the file's normalised lines.
    old_trailing = old_lf.endswith("\n")
    want = [_norm(x) for x in (old_lf[:-1] if old_trailing else old_lf).split("\n")]
    have = [_norm(x) for x in lines]
    hits = [i for i in range(len(have) - len(want) + 1) if have[i : i + len(want)] == want]
    if len(hits) != 1:
        return None, 0
    i = hits[0]
    j = i + len(want)
    if old_trailing and ends[j - 1] == "":
        return None, 0  # measured: an old text ending in a newline does not match a last line without one
    indent = lines[i][: len(lines[i]) - len(lines[i].lstrip(" \t"))]
    new_lines = new_lf.split("\n")
    block = eol.join(indent + x if x.strip() else x for x in new_lines)
    region_end = "" if old_trailing else ends[j - 1]
    after = "".join(lines[k] + ends[k] for k in range(i)) + block + region_end
    after += "".join(lines[k] + ends[k] for k in range(j, len(lines)))
    # Re-indentation and line endings of the new lines are Copilot's choice: per new line, up
    # to the indent width either way and one byte of line ending.
    bound = (len(indent) + 1) * len(new_lines) + sum(len(x) - len(x.lstrip()) for x in new_lines)
    return head + encode(after), bound


def predict(kind: str, before: "bytes | None", tool_input: "dict[str, Any]") -> "bytes | None":
    return predict_with_bound(before, tool_input, kind)[0]


# --- the dialect ------------------------------------------------------------------------------


def _args(value: "Any") -> "Any":
    if isinstance(value, str):
        stripped = value.lstrip()
        if stripped.startswith("{"):
            try:
                return jsonlite.loads(value)
            except ValueError:
                return value
    return value


def _pre(payload: "dict[str, Any]", env: "Mapping[str, str] | None") -> "Decision | None":
    tool = payload.get("toolName")
    args = _args(payload.get("toolArgs"))
    cwd = payload.get("cwd")
    base = cwd if isinstance(cwd, str) else None
    environ = scope.environ() if env is None else env
    if tool == PATCH_TOOL:
        text = args if isinstance(args, str) else (args.get("input") if isinstance(args, dict) else None)
        return _patch(text, base, env, environ, payload.get("sessionId")) if isinstance(text, str) else None
    kind = TOOLS.get(tool) if isinstance(tool, str) else None
    if kind is None or not isinstance(args, dict):
        return None
    raw = path_of(args, ("path",))
    if raw is None:
        return None
    full = scope.resolve_path(raw, base)
    if not scope.interesting(full, environ):
        return None
    # lazy: the host-side judge and the plugin dialect's session, only for a guarded file
    from engramory.hosts import claudelike, plugin

    bound = [0]

    def run(before: "bytes | None") -> "bytes | None":
        after, bound[0] = predict_with_bound(before, args, kind)
        return after

    seen = plugin.session(NAME, payload.get("sessionId"), full)
    return claudelike.lenient(claudelike.judge(full, str(tool), run, env, window(), seen), bound[0])


def after_view(payload: "dict[str, Any]", env: "Mapping[str, str] | None") -> None:
    """postToolUse of `view`: when it showed an index, record what the session saw
    (engramory.stale). Any other file: nothing imported, nothing opened."""
    raw = path_of(_args(payload.get("toolArgs")), ("path",))
    if raw is None:
        return
    cwd = payload.get("cwd")
    full = scope.resolve_path(raw, cwd if isinstance(cwd, str) else None)
    if not scope.guards_index(full, scope.environ() if env is None else env):
        return  # the common case, decided before the plugin dialect is imported
    from engramory.hosts import plugin  # lazy: the read record, only after a `view` of an index

    plugin.record_read(NAME, payload.get("sessionId"), full, None, env)


def _patch(text: str, cwd: "str | None", env: "Mapping[str, str] | None", environ: "Mapping[str, str]",
           session_id: "Any" = None) -> "Decision | None":
    """Each index the patch writes, judged on what Copilot leaves there after every operation."""
    from engramory import patches  # lazy: the patch parser only for a call that carries a patch

    # lazy: the host-side judge and the plugin dialect's session, only for a call that carries a patch
    from engramory.hosts import claudelike, plugin

    try:
        ops = patches.parse(text)
    except patches.PatchError:
        return None
    targets = [scope.resolve_path(op.target, cwd) for op in ops if op.kind != patches.DELETE]
    for target in dict.fromkeys(t for t in targets if scope.interesting(t, environ)):
        bound = [0]

        def run(before: "bytes | None", target: str = target, bound: "list[int]" = bound) -> "bytes | None":
            after, bound[0] = apply_patch(ops, cwd, target, before)
            return None if after is None or after == before else after

        seen = plugin.session(NAME, session_id, target)
        decision = claudelike.lenient(claudelike.judge(target, PATCH_TOOL, run, env, window(), seen), bound[0])
        if decision is not None:
            return decision
    return None


def apply_patch(ops: "list[Any]", cwd: "str | None", target: str, before: "bytes | None") -> "tuple[bytes | None, int]":
    """(what `target` holds after Copilot applies `ops`, holding `before` now; the byte bound).
    Measured on Copilot CLI 1.0.102 (tests/copilot): the operations run one by one, each on
    what the ones before left (Delete then Add of a file writes the Add's text; a second Update
    applies to the first one's result; a Move overwrites its destination), and the first one
    that fails (an Add of a file that exists, an Update of one that does not or whose lines are
    not found) stops the patch, the ones before it staying applied."""
    from engramory import patches  # lazy: the patch parser only for a call that carries a patch
    from engramory.hosts import claudelike  # lazy: its V4A applier, only for a call that carries a patch

    files: dict[str, bytes | None] = {target: before}
    bound = 0
    for op in ops:
        source, dest = scope.resolve_path(op.path, cwd), scope.resolve_path(op.target, cwd)
        if source not in files:
            files[source] = scope.read_regular(source)
        old = files[source]
        if op.kind == patches.ADD:
            if old is not None:
                break  # "File already exists"
            files[dest] = patches.apply_to(None, op)
            continue
        if old is None:
            break
        if op.kind == patches.DELETE:
            files[source] = None
            continue
        after, more = claudelike.patch_keeping_endings(old, op)
        if after is None:
            break
        files[source] = None
        files[dest] = after
        bound += more if dest == target else 0
    return files[target], bound


def respond_event(raw: bytes, event: str, env: "Mapping[str, str] | None" = None) -> "tuple[str, str, int]":
    """stdin bytes of `event` -> (stdout, stderr, 0). Never a non-zero exit."""
    payload = parse_object(raw)
    if payload is None:
        return "", "", 0
    if event == PRE:
        decision = _pre(payload, env)
        if decision is None:
            return "", "", 0
        from engramory.judge import DENY  # only with a decision: the ignored path stays off the decision

        if decision.action == DENY:
            return jsonlite.dumps({"permissionDecision": "deny", "permissionDecisionReason": decision.message}), "", 0
        return jsonlite.dumps({"additionalContext": decision.message}), "", 0
    tool = payload.get("toolName")
    if event == POST and tool == READ_TOOL:
        after_view(payload, env)
        return "", "", 0
    if event == POST and tool not in SHELL_TOOLS:
        return "", "", 0
    from engramory.hosts import plugin  # lazy: the notice, only after a shell tool or at session start

    text = plugin.context(EVENTS.get(event, EVENTS[START]), payload.get("sessionId"), payload.get("cwd"), tool,
                          index_paths, env)
    return (jsonlite.dumps({"additionalContext": text}) if text else ""), "", 0


def respond(raw: bytes, env: "Mapping[str, str] | None" = None) -> "tuple[str, str, int]":
    return respond_event(raw, PRE, env)


def post(raw: bytes, env: "Mapping[str, str] | None" = None) -> "tuple[str, str, int]":
    return respond_event(raw, POST, env)


def start(raw: bytes, env: "Mapping[str, str] | None" = None) -> "tuple[str, str, int]":
    return respond_event(raw, START, env)


# The event argument of the hook command -> the entry point (hooks/engramory_hook.py copilot <event>).
ENTRIES = {PRE: "respond", POST: "post", START: "start"}


if TYPE_CHECKING:  # mypy checks this module against the registry's Host Protocol; never run
    from engramory.hosts import copilot as _self
    from engramory.hosts.protocol import Host

    _host: Host = _self
