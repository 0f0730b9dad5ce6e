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
checked on its own, through engramory.patches.
"""

from __future__ import annotations

import os

from engramory import jsonlite, scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from engramory.edits import Request
    from engramory.guard import Decision
    from engramory.size import Window

STDIN_LIMIT = 256 << 20
NO_OPINION = "{}"
FAIL_OPEN = NO_OPINION  # engramory.hookrun prints this when the guard itself fails
DENY_EXIT = 2

# --- registry declarations (see engramory/hosts/__init__.py) ---
NAME = "cursor"
TITLE = "Cursor"
VERIFIED = ""
UNVERIFIED_WHY = "Cursor cannot be installed from a package registry; checked against recorded payloads"
INSTALLER = "engramory.install_cursor"
def window() -> Window:
    """How this host loads an index (imported only when asked: hot path)."""
    from engramory import size

    return size.Window(note="Cursor loads rules, not MEMORY.md: the standard caps, in bytes")


def index_paths(cwd: str, env: Mapping[str, str]) -> list[str]:
    return []
TAG = "engramory cursor guard"

# Where ApplyPatch may carry its text; the field name is unverified, so try the likely ones.
PATCH_KEYS = ("patch", "input", "patch_text", "diff", "content", "contents")
PATCH_START = ("*** Begin Patch", "--- ", "diff --git ")


def _roots(payload: dict[str, Any], tool_input: dict[str, Any], env: Mapping[str, str]) -> list[str]:
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


def _patch_text(tool: str, tool_input: dict[str, Any]) -> str | None:
    """The patch an ApplyPatch (named, or unnamed but shaped like one) carries."""
    candidates: list[tuple[str, str]] = [
        (k, str(tool_input[k])) for k in PATCH_KEYS if isinstance(tool_input.get(k), str)
    ]
    if not candidates:
        return None
    from engramory.edits import PATCH_TOOLS

    for key, value in candidates:
        if tool in PATCH_TOOLS:
            return value
        if not tool and key in ("patch", "input", "patch_text", "diff") and value.lstrip().startswith(PATCH_START):
            return value
    return None


def _looks_like_a_file_change(tool: str, tool_input: dict[str, Any]) -> bool:
    from engramory import edits

    if tool in edits.WRITE_TOOLS or tool in edits.EDIT_TOOLS or tool in edits.DELETE_TOOLS or tool in edits.PATCH_TOOLS:
        return True
    return not tool and scope.raw_path(tool_input) is not None


def _patch_requests(
    tool: str, text: str, cwd: str | None, roots: list[str], env: Mapping[str, str], notes: list[str]
) -> list[Request]:
    """One Request per guarded file the patch touches: an add or a predicted update becomes
    a full write, a delete stays a delete, and a move also deletes its source."""
    from engramory import config, edits, guard, patches

    try:
        ops = patches.parse(text)
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
            after = patches.apply_to(None, op)
        elif guard.is_index(target, settings):
            after = patches.apply_to(_read(source), op)
            if after is None:
                notes.append(
                    "%s: cannot predict what this patch makes of %s (its old lines are not in the "
                    "file as it is now), so its size was NOT checked; run `engramory check` after it"
                    % (TAG, target)
                )
        else:
            after = None
        if after is not None:
            req.kind = edits.WRITE
            req.content = after.decode("utf-8", "replace")
        out.append(req)
    return out


def _read(path: str) -> bytes | None:
    from engramory.guard import read_regular

    return read_regular(path)


def _n(value: int) -> str:
    return "{:,}".format(value)


def user_message(decision: Decision) -> str:
    """The short form for the person: what was refused and the one thing to know."""
    if decision.after is None or decision.caps is None:
        return decision.message
    caps = decision.caps
    before = decision.before or (0, 0)
    return (
        "engramory blocked this edit: %s would be %s lines / %s %s (now %s / %s; hard cap "
        "%s lines / %s %s). Edits that shrink it are always allowed."
        % (
            os.path.basename(decision.path) or decision.path,
            _n(decision.after[0]), _n(decision.after[1]), decision.unit, _n(before[0]), _n(before[1]),
            _n(caps.hard_lines), _n(caps.hard_bytes), decision.unit,
        )
    )


def render_deny(decision: Decision) -> str:
    return jsonlite.dumps(
        {"permission": "deny", "user_message": user_message(decision), "agent_message": decision.message}
    )


def requests_from(payload: dict[str, Any], env: Mapping[str, str], notes: list[str]) -> list[Request]:
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
    from engramory import edits

    req = edits.normalise(tool, tool_input, base, roots)
    if req is None:
        if _looks_like_a_file_change(tool, tool_input):
            notes.append(
                "%s: cannot read this %s payload (keys: %s); edit allowed unchecked"
                % (TAG, tool or "untitled tool", ", ".join(sorted(str(k) for k in tool_input)[:12]))
            )
        return []
    return [req]


def handle(raw: bytes, env: Mapping[str, str] | None = None) -> tuple[str, str, int]:
    """stdin bytes -> (stdout text, stderr text, exit code)."""
    environ = os.environ if env is None else env
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
        from engramory import guard
    for req in requests:
        decision = guard.evaluate(req, env, window())
        if decision is None:
            continue
        if decision.action == guard.DENY:
            return render_deny(decision), decision.message + "\n", DENY_EXIT
        nudges.append(decision.message)
    err = "".join(line + "\n" for line in notes + nudges)
    return NO_OPINION, err, 0


def respond(raw: bytes, env: Mapping[str, str] | None = None) -> tuple[str, str, int]:
    """The registry's dialect entry (same as `handle`)."""
    return handle(raw, env)


def main(argv: list[str] | None = None) -> int:
    """The preToolUse hook process (engramory.hookrun: bounded stdin, `{}` and exit 0 on
    any failure of ours)."""
    from engramory.hosts import run

    return run(NAME)
