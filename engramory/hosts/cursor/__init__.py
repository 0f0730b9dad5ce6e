"""Cursor `preToolUse` adapter: stdin bytes -> (stdout, stderr, exit code).

Contract (shared reference, Cursor section; not verified on a real Cursor):
- deny: stdout `{"permission":"deny","user_message":…,"agent_message":…}`, the full reason
  on stderr, exit 2. Exit 2 alone already denies, so the deny holds even on builds that
  ignore the JSON or `agent_message`.
- anything else: stdout `{}` and exit 0. `{}` is valid JSON with no opinion; the guard never
  says "allow" (Cursor lets an allow override its own approval prompts) and prints no empty
  stdout, which some builds are reported to treat as an invalid response.
- nudge (warn zone, still over the hard cap after a shrink): Cursor's preToolUse has no
  channel that adds context without taking a permission decision, so the nudge goes to
  stderr only (Cursor's hook log) and the edit proceeds with `{}`.
- a payload it cannot read, or a change to the index it cannot predict, is allowed with one
  line on stderr. The guard's own errors never block (exit 0).

Dialects: Cursor's write-tool fields are not documented and vary by version; engramory.edits
normalise() reads them all. Relative paths resolve against `cwd`, then the tool input's
`working_directory`, then `workspace_roots[0]`, then `$CURSOR_PROJECT_DIR`. `ApplyPatch`
carries a V4A patch or a unified diff that names its own files: each file it touches is
checked on its own, through engramory.patches. Cursor's patch applier is not measured (it
cannot be installed here), so an update of an index is judged by its worst case: exact only
where the old lines match exactly, with the largest line endings (worst_update); otherwise as
if every new line were added and none removed (guard.judge_bound through edits.PATCH).
"""

from engramory import jsonlite, scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from engramory.edits import Request
    from engramory.guard import Decision
    from engramory.size import Window

NO_OPINION = "{}"
FAIL_OPEN = NO_OPINION  # engramory.hosts.run prints this when the guard itself fails
DENY_EXIT = 2

# --- registry declarations (see engramory/hosts/__init__.py) ---
NAME = "cursor"
TITLE = "Cursor"
VERIFIED = ""
UNVERIFIED_WHY = "Cursor cannot be installed from a package registry; checked against recorded payloads"
INSTALLER = "engramory.hosts.cursor.install"
def window() -> "Window":
    """How this host loads an index (imported only when asked: hot path)."""
    from engramory import size  # lazy: sizes only when a change is judged, not on the ignored path

    return size.Window(note="Cursor loads rules, not MEMORY.md: the standard caps, in bytes")


def index_paths(cwd: "str", env: "Mapping[str, str]") -> "list[str]":
    return []
TAG = "engramory cursor guard"

# Where ApplyPatch may carry its text; the field name is unverified, so try the likely ones.
PATCH_KEYS = ("patch", "input", "patch_text", "diff", "content", "contents")
PATCH_START = ("*** Begin Patch", "--- ", "diff --git ")


def _roots(payload: "dict[str, Any]", tool_input: "dict[str, Any]", env: "Mapping[str, str]") -> "list[str]":
    roots: list[str] = []
    wd = tool_input.get("working_directory")
    if isinstance(wd, str) and wd:
        roots.append(wd)
    ws = payload.get("workspace_roots")
    if isinstance(ws, list) and ws and isinstance(ws[0], str) and ws[0]:
        roots.append(ws[0])
    project = env.get("CURSOR_PROJECT_DIR")
    if project:
        roots.append(project)
    return roots


def _patch_text(tool: "str", tool_input: "dict[str, Any]") -> "str | None":
    """The patch an ApplyPatch (named, or unnamed but shaped like one) carries."""
    candidates: list[tuple[str, str]] = [
        (k, str(tool_input[k])) for k in PATCH_KEYS if isinstance(tool_input.get(k), str)
    ]
    if not candidates:
        return None
    from engramory.edits import PATCH_TOOLS  # lazy: only a call that may change an index needs this

    for key, value in candidates:
        if tool in PATCH_TOOLS:
            return value
        if not tool and key in ("patch", "input", "patch_text", "diff") and value.lstrip().startswith(PATCH_START):
            return value
    return None


def _looks_like_a_file_change(tool: "str", tool_input: "dict[str, Any]") -> "bool":
    from engramory import edits  # lazy: only a call that may change an index needs this

    if tool in edits.WRITE_TOOLS or tool in edits.EDIT_TOOLS or tool in edits.DELETE_TOOLS or tool in edits.PATCH_TOOLS:
        return True
    return not tool and scope.raw_path(tool_input) is not None


def _patch_requests(
    tool: "str", text: "str", cwd: "str | None", roots: "list[str]", env: "Mapping[str, str]", notes: "list[str]"
) -> "list[Request]":
    """One Request per guarded file the patch touches: an add or a predicted update becomes
    a full write, a delete stays a delete, and a move also deletes its source. An update of
    an index is judged by its worst case (worst_update)."""
    from engramory import (  # lazy: the patch parser only for a call that carries a patch
        config,
        edits,
        guard,
        patches,
    )

    try:
        ops = patches.parse(text)  # the lenient reading: a patch Cursor might refuse is judged anyway
    except patches.PatchError as exc:
        notes.append("%s: the %s text is not a patch it can read (%s); edit allowed" % (TAG, tool, exc))
        return []
    settings = config.from_env(env)
    out: list[Request] = []
    for op in ops:
        source = scope.resolve_path(op.path, cwd, roots)
        target = scope.resolve_path(op.target, cwd, roots)
        if op.kind == patches.DELETE or (op.move_to and source != target):
            if scope.interesting(source, env):
                out.append(edits.Request(tool, source, edits.DELETE))
            if op.kind == patches.DELETE:
                continue
        if not scope.interesting(target, env):
            continue
        req = edits.Request(tool, target, edits.PATCH)  # predicts nothing: read-only rules only
        if op.kind == patches.ADD:
            req.kind, req.content = edits.WRITE, op.content or ""
        elif guard.is_index(target, settings):
            old = scope.read_regular(source)
            worst = worst_update(old, op) if old is not None else None
            if worst is not None:
                req.kind, req.content = edits.WRITE, worst.decode("utf-8", "surrogateescape")
            else:
                _bound(req, old, op, source != target)
        out.append(req)
    return out


def worst_update(before: "bytes", op: "Any") -> "bytes | None":
    """The largest file an update can leave, whichever V4A or diff applier Cursor runs, or None
    when the matchers can disagree. Cursor's applier cannot be installed here, so nothing of
    it is measured: the result is given only where the old lines match exactly (patches.EXACT;
    any applier then changes the same lines; not in a file with a lone CR, which appliers split
    differently), with the line endings that make it largest (all CRLF when the file holds any,
    the final one always added) and a BOM kept."""
    from engramory import patches  # lazy: the patch parser only for a call that carries a patch

    if b"\r" in before.replace(b"\r\n", b""):
        return None  # a lone CR: appliers disagree on where its lines end
    try:
        after = patches.update(before, op.hunks, patches.EXACT) if op.format == patches.V4A else patches.apply_to(before, op)
    except patches.PatchError:
        return None
    if after is not None and b"\r\n" in before:
        after = after.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    return after


BOUND_WHY = (
    "its old lines are not in the file exactly as written, and Cursor's patch applier is not "
    "known (it may refuse the patch or apply it loosely)"
)


def _bound(req: "Request", old: "bytes | None", op: "Any", moved: "bool") -> "None":
    """A patch whose old lines only match loosely (or not at all, or in a file that cannot be
    read: Cursor may still apply it) is judged as if its new lines were all added and nothing
    removed: an edits.PATCH request carrying them (see handle). A context line is no new
    line, but an applier may rewrite it as the patch spells it: its text counts as added bytes."""
    from engramory import edits  # lazy: only a call that may change an index needs this

    plus: list[str] = []
    spelled: list[str] = []
    for hunk in op.hunks:
        kept = {n for _, n in hunk.kept}
        for n, line in enumerate(hunk.new):
            (spelled if n in kept else plus).append(line)
    added = "".join(line + "\n" for line in plus)
    extra = "".join(spelled)  # bytes on no line of their own
    if moved and old is not None:
        # the destination would hold the source's text plus the new lines
        text = old.decode("utf-8", "surrogateescape") + added
        text = text[:-1] + extra + "\n" if text.endswith("\n") else text + extra
        req.kind, req.content = edits.WRITE, text
    else:
        req.edits = [("", added + extra, False)]


def _exists(path: "str") -> "bool":
    try:
        scope.stat(path)
    except (OSError, ValueError):
        return False
    return True


def _judge(req: "Request", env: "Mapping[str, str] | None") -> "Decision | None":
    from engramory import edits, guard  # lazy: the ignored path must not load the guard

    if req.kind == edits.PATCH and req.edits:
        before = scope.read_regular(req.path)
        if before is not None or not _exists(req.path):
            return guard.judge_bound(req.path, before, req.edits[0][1], env, window(), req.tool, BOUND_WHY)
    return guard.evaluate(req, env, window())  # an index it cannot read: the guard's worst case





def user_message(decision: "Decision") -> "str":
    """The short form for the person: what was refused and the one thing to know."""
    if decision.after is None or decision.caps is None:
        return decision.message
    caps = decision.caps
    before = decision.before or (0, 0)
    # guard.judge_bound's sizes are an upper bound, and its message says so
    bound = " up to" if "by the worst case" in decision.message else ""
    return (
        "engramory blocked this edit: %s would be%s %s lines / %s %s (now %s / %s; hard cap "
        "%s lines / %s %s). Edits that shrink it are always allowed."
        % (
            scope.basename(decision.path) or decision.path, bound,
            _n(decision.after[0]), _n(decision.after[1]), decision.unit, _n(before[0]), _n(before[1]),
            _n(caps.hard_lines), _n(caps.hard_bytes), decision.unit,
        )
    )


def render_deny(decision: "Decision") -> "str":
    return jsonlite.dumps(
        {"permission": "deny", "user_message": user_message(decision), "agent_message": decision.message}
    )


def requests_from(payload: "dict[str, Any]", env: "Mapping[str, str]", notes: "list[str]") -> "list[Request]":
    tool_input = payload.get("tool_input")
    if isinstance(tool_input, str):  # some hosts send the arguments as a JSON string
        try:
            tool_input = jsonlite.loads(tool_input)
        except ValueError:
            tool_input = None
    if not isinstance(tool_input, dict):
        return []
    raw_tool = payload.get("tool_name")
    tool = raw_tool if isinstance(raw_tool, str) else ""
    roots = _roots(payload, tool_input, env)
    cwd = payload.get("cwd")
    base = cwd if isinstance(cwd, str) else None
    patch = _patch_text(tool, tool_input)
    if patch is not None:
        return _patch_requests(tool or "ApplyPatch", patch, base, roots, env, notes)
    raw = scope.raw_path(tool_input)
    if raw is not None and not scope.interesting(scope.resolve_path(raw, base, roots), env):
        return []  # the common case: a file no store cares about; nothing more is imported
    from engramory import edits  # lazy: only a call that may change an index needs this

    req = edits.normalise(tool, tool_input, base, roots)
    if req is None:
        if _looks_like_a_file_change(tool, tool_input):
            notes.append(
                "%s: cannot read this %s payload (keys: %s); edit allowed unchecked"
                % (TAG, tool or "untitled tool", ", ".join(sorted(str(k) for k in tool_input)[:12]))
            )
        return []
    return [req]


def handle(raw: "bytes", env: "Mapping[str, str] | None" = None) -> "tuple[str, str, int]":
    """stdin bytes -> (stdout text, stderr text, exit code)."""
    environ = scope.environ() if env is None else env
    try:
        payload = jsonlite.loads(jsonlite.decode_payload(raw))
    except ValueError as exc:
        return NO_OPINION, "%s: stdin is not JSON (%s); edit allowed\n" % (TAG, exc), 0
    if not isinstance(payload, dict):
        return NO_OPINION, "%s: stdin is not a JSON object; edit allowed\n" % TAG, 0
    event = payload.get("hook_event_name")
    if isinstance(event, str) and event.lower() != "pretooluse":
        return NO_OPINION, "%s: event %r is not preToolUse; nothing checked\n" % (TAG, event[:40]), 0

    notes: list[str] = []
    nudges: list[str] = []
    requests = requests_from(payload, environ, notes)
    if requests:
        from engramory import guard  # lazy: the ignored path must not load the guard
    for req in requests:
        decision = _judge(req, env)
        if decision is None:
            continue
        if decision.action == guard.DENY:
            return render_deny(decision), decision.message + "\n", DENY_EXIT
        nudges.append(decision.message)
    err = "".join(line + "\n" for line in notes + nudges)
    return NO_OPINION, err, 0


def respond(raw: "bytes", env: "Mapping[str, str] | None" = None) -> "tuple[str, str, int]":
    """The registry's dialect entry (same as `handle`)."""
    return handle(raw, env)


def main(argv: "list[str] | None" = None) -> "int":
    """The preToolUse hook process (engramory.hosts.run: bounded stdin, `{}` and exit 0 on
    any failure of ours)."""
    from engramory.hosts import run  # lazy: the runtime only for the stand-alone entry

    return run(NAME)


def _n(value: "int") -> "str":
    """size.n, imported only when a message needs it: a call on a file no store cares about
    loads nothing beyond what it needs."""
    from engramory.size import n  # lazy: sizes only when a change is judged, not on the ignored path

    return n(value)


if TYPE_CHECKING:  # mypy checks this module against the registry's Host Protocol; never run
    from engramory.hosts import cursor as _self
    from engramory.hosts.protocol import Host

    _host: Host = _self
