"""What the hosts that took Claude Code's hook schema share (Qwen Code, Factory droid, and
Copilot CLI's Claude dialect): a settings file with `hooks.<Event>[{matcher, hooks:[{type:
"command", command, timeout}]}]`, stdin `{hook_event_name, tool_name, tool_input, cwd,
session_id, ...}`, and a deny written as `hookSpecificOutput.permissionDecision: "deny"` with
exit 0. Each host module keeps only what is truly its own: its tool names and argument keys
(a `Dialect`), its edit model (how its tools write bytes), its load window and where its
indexes live.

Every answer is exit 0. Exit 2 would also deny on these hosts, but exit 1 blocks every tool
on Copilot, so no code path here exits non-zero: an internal error is an allow with one line
on stderr (the host's debug log).
"""

import sys

from engramory import jsonlite, scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from engramory.guard import Decision

STDIN_LIMIT = 256 << 20
WRITE = "write"
EDIT = "edit"
PRE = "PreToolUse"
POST = "PostToolUse"
START = "SessionStart"
EVENTS = (PRE, POST, START)

class Dialect:
    """One host's tool names and argument keys, and the functions that are its own."""

    def __init__(
        self,
        name: str,
        tools: "Mapping[str, str]",
        path_keys: "tuple[str, ...]",
        predict: "Callable[[str, bytes | None, dict[str, Any]], bytes | None]",
        index_paths: "Callable[[str, Mapping[str, str]], list[str]]",
    ) -> None:
        self.name = name
        self.tools = tools  # tool name -> WRITE or EDIT
        self.path_keys = path_keys
        self.predict = predict  # (kind, before, tool_input) -> bytes after, or None
        self.index_paths = index_paths


def parse(raw: bytes) -> "dict[str, Any] | None":
    try:
        payload = jsonlite.loads(jsonlite.decode_payload(raw))
    except ValueError:
        return None
    return payload if isinstance(payload, dict) else None


def path_of(tool_input: "dict[str, Any]", keys: "tuple[str, ...]") -> "str | None":
    for key in keys:
        value = tool_input.get(key)
        if isinstance(value, str) and value and "\x00" not in value:
            return value
    return None


# -- the decision, on bytes this host's edit model predicted ---------------------------------


def judge(
    path: str, tool: str, predict: "Callable[[bytes | None], bytes | None]", env: "Mapping[str, str] | None"
) -> "Decision | None":
    """guard.evaluate for a host that predicts its own bytes: the same read-only rules, caps,
    unreadable-file notes and trace, with `predict(before)` in place of Claude Code's model."""
    from engramory import config, edits, guard

    settings = config.from_env(env)
    if not guard.is_index(path, settings):
        # Not an index: only a store's read-only rules can apply, and they need no prediction.
        req = edits.Request(tool, path, edits.WRITE)
        req.content = ""
        return guard.evaluate(req, env)
    req = edits.Request(tool, path, edits.WRITE)
    root = scope.dirname(scope.realpath(path))
    store = config.load_store_config(root)
    if store.read_only:
        ro = guard._read_only_decision(req, root, store)  # noqa: SLF001 - the core's own rule, reused
        if ro is not None:
            return ro
    caps, notes = config.in_force(settings, store)
    before: bytes | None
    try:
        st = scope.stat(path)
        if st.st_mode & 0o170000 != 0o100000:
            return guard._unverified(req, caps, notes, "it is not a regular file")  # noqa: SLF001
        if st.st_size > guard.READ_LIMIT:
            return guard._unverified(req, caps, notes, "it is %s bytes, too large to read" % "{:,}".format(st.st_size))  # noqa: SLF001
        with open(path, "rb") as f:
            before = f.read()
    except FileNotFoundError:
        before = None
    except OSError as exc:
        return guard._unverified(req, caps, notes, exc.strerror or exc.__class__.__name__)  # noqa: SLF001
    after = predict(before)
    trace = (env if env is not None else scope.environ()).get(guard.TRACE_ENV)
    if trace:
        guard._trace(trace, req, after)  # noqa: SLF001
    if after is None:
        return None
    return guard.decide(path, tool, before or b"", after, caps, notes)


def render_pre(decision: "Decision") -> str:
    from engramory.guard import DENY

    if decision.action == DENY:
        inner = {"hookEventName": PRE, "permissionDecision": "deny", "permissionDecisionReason": decision.message}
    else:
        inner = {"hookEventName": PRE, "additionalContext": decision.message}
    return jsonlite.dumps({"hookSpecificOutput": inner})


def pre_tool(payload: "dict[str, Any]", dialect: Dialect, env: "Mapping[str, str] | None") -> str:
    """PreToolUse: the host's answer on stdout ("" for no opinion)."""
    tool = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    if not isinstance(tool, str) or not isinstance(tool_input, dict):
        return ""
    kind = dialect.tools.get(tool)
    if kind is None:
        return ""
    raw = path_of(tool_input, dialect.path_keys)
    if raw is None:
        return ""
    cwd = payload.get("cwd")
    full = scope.resolve_path(raw, cwd if isinstance(cwd, str) else None)
    environ = scope.environ() if env is None else env
    if not scope.interesting(full, environ):
        return ""
    decision = judge(full, tool, lambda before: dialect.predict(kind, before, tool_input), env)
    return render_pre(decision) if decision is not None else ""


# -- notices after shell tools and at session start ------------------------------------------


def _notice_env(payload: "Mapping[str, Any]", dialect: Dialect, env: "Mapping[str, str]") -> "dict[str, str]":
    """`env` with this host's own indexes added to the ones the backstop watches."""
    cwd = payload.get("cwd")
    extra = dialect.index_paths(cwd if isinstance(cwd, str) and cwd else scope.environ().get("PWD", ""), env)
    out = dict(env)
    if extra:
        import os

        have = [p for p in env.get(scope.ENV_INDEX_PATH, "").split(os.pathsep) if p.strip()]
        out[scope.ENV_INDEX_PATH] = os.pathsep.join(have + [p for p in extra if p not in have])
    return out


def notice(event: str, payload: "dict[str, Any]", dialect: Dialect, env: "Mapping[str, str] | None") -> str:
    import os

    from engramory import backstop

    base = dict(os.environ) if env is None else dict(env)
    notice_env = _notice_env(payload, dialect, base)
    if event == POST:
        return backstop.post_tool(payload, notice_env)
    return backstop.session_start(payload, notice_env)


def respond(raw: bytes, dialect: Dialect, event: str = PRE, env: "Mapping[str, str] | None" = None) -> "tuple[str, str, int]":
    """stdin bytes -> (stdout, stderr, exit code); the exit code is always 0."""
    payload = parse(raw)
    if payload is None:
        return "", "", 0
    if event == PRE:
        return pre_tool(payload, dialect, env), "", 0
    return notice(event, payload, dialect, env), "", 0


def main(dialect_module: str, argv: "list[str] | None" = None) -> int:
    """Entry script body: `<script> [PreToolUse|PostToolUse|SessionStart]`. Exit 0 always."""
    try:
        args = sys.argv[1:] if argv is None else argv
        event = args[0] if args and args[0] in EVENTS else PRE
        import importlib

        module = importlib.import_module(dialect_module)
        raw = sys.stdin.buffer.read(STDIN_LIMIT)
        out, err, _ = respond(raw, module.DIALECT, event)
        if err:
            sys.stderr.write(err)
        if out:
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
    except BaseException as exc:  # noqa: BLE001 - a guard must never lock the user out
        if isinstance(exc, KeyboardInterrupt):
            return 0
        try:
            sys.stderr.write("engramory guard: internal error, tool call allowed: %r\n" % (exc,))
        except Exception:  # noqa: BLE001 - nothing left to report to
            pass
    return 0
