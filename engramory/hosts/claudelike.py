"""What the hosts that took Claude Code's hook schema share (Qwen Code, Factory droid, and
Copilot CLI's Claude dialect): a settings file with `hooks.<Event>[{matcher, hooks:[{type:
"command", command, timeout}]}]`, stdin `{hook_event_name, tool_name, tool_input, cwd,
session_id, ...}`, and a deny written as `hookSpecificOutput.permissionDecision: "deny"` with
exit 0. Each host module keeps only what is truly its own: its tool names and argument keys
(a `Dialect`), its edit model (how its tools write bytes), its load window and where its
indexes live.

Every answer of a `deny="json"` dialect is exit 0. Exit 2 would also deny on these hosts,
but exit 1 blocks every tool on Copilot, so no code path here exits non-zero: an internal
error is an allow with one line on stderr (the host's debug log).

A host whose documented deny is an exit code (Crush, Windsurf, Kiro, Auggie: exit 2, the
reason on stderr) declares `deny="exit"`: a deny is then ("", reason, 2) and everything else
(a pass, a nudge) ("", "", 0), since those hosts have no channel that adds context without a
decision. A host whose payload is not `{tool_name, tool_input, cwd}` gives `payload_of`, which
reads its own keys into those three.

A host module imports this module only inside its `dialect()`, which it hands to
`engramory.hosts.claude_entries` with the declarations the quiet check reads: the PreToolUse
entry answers a call that names no guarded file before this module is loaded (the ignored
path), and builds the Dialect for everything else.
"""

from engramory import jsonlite, scope

# EDIT, WRITE: the edit kinds, spelled in the package so that a host's tool table imports nothing
from engramory.hosts import EDIT as EDIT
from engramory.hosts import NEEDED, WANTED, parse_object, top_fields
from engramory.hosts import WRITE as WRITE
from engramory.hosts import path_of as path_of  # the one reading of a path argument (also the plugins')

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from engramory.guard import Decision
    from engramory.size import Window
    from engramory.stale import Session

    # a host's own judge of a tool whose input names its files itself: (tool_input, cwd, env)
    PatchJudge = Callable[[dict[str, Any], "str | None", "Mapping[str, str] | None"], "Decision | None"]

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
        predict: "Callable[[str, bytes | None, dict[str, Any]], bytes | Unknown | None]",
        index_paths: "Callable[[str, Mapping[str, str]], list[str]]",
        window: "Callable[[], Window] | None" = None,
        patch: "Mapping[str, PatchJudge] | None" = None,
        deny: str = "json",
        payload_of: "Callable[[dict[str, Any]], tuple[Any, Any, Any]] | None" = None,
        read_tools: "tuple[str, ...]" = (),
    ) -> None:
        self.name = name
        self.tools = tools  # tool name -> WRITE or EDIT
        self.path_keys = path_keys
        self.predict = predict  # (kind, before, tool_input) -> bytes after, or None
        self.index_paths = index_paths
        self.window = window  # the host's load window (hosts.<name>.window)
        self.patch = patch or {}  # tool name -> its own judge (a patch tool)
        self.deny = deny  # "json": hookSpecificOutput, exit 0; "exit": the reason on stderr, exit 2
        self.payload_of = payload_of  # payload -> (tool name, tool input, cwd); default Claude's keys
        # the host's read tools, whose PostToolUse records what the agent saw (engramory.stale);
        # a host that names any is judged by the stale-write rule too
        self.read_tools = read_tools

    # the entry points engramory.hosts.claude_entries hands a call that is not quiet
    def pre(self, payload: "dict[str, Any]", env: "Mapping[str, str] | None") -> "tuple[str, str, int]":
        return answer(payload, self, PRE, env)

    def post(self, raw: bytes, env: "Mapping[str, str] | None") -> "tuple[str, str, int]":
        return respond(raw, self, POST, env)

    def start(self, raw: bytes, env: "Mapping[str, str] | None") -> "tuple[str, str, int]":
        return respond(raw, self, START, env)


parse = parse_object  # the whole payload, when it is a JSON object (engramory.hosts.parse_object)


# -- the decision, on bytes this host's edit model predicted ---------------------------------


class Unknown:
    """What an edit model answers when it cannot tell what its host will write: the host may
    apply the call through a match the model does not port. The call is then judged by its
    worst case, `added` (all the text it inserts) added in full, never passed in silence;
    `why` says what is not modelled, for the message."""

    __slots__ = ("added", "why")

    def __init__(self, added: str, why: str) -> None:
        self.added = added
        self.why = why


def judge(
    path: str,
    tool: str,
    predict: "Callable[[bytes | None], bytes | Unknown | None]",
    env: "Mapping[str, str] | None",
    window: "Window | None" = None,
    seen: "Session | None" = None,
) -> "Decision | None":
    """Read the file (bounded), predict with this host's own edit model, and hand the bytes
    to the one decision, guard.judge, under this host's load window. `predict(before)` ->
    the bytes the host will write, None when it refuses the call (then nothing is said), or
    an `Unknown` (then guard.judge_bound judges the worst case). `seen`: the session, for the
    stale-write rule (guard.judge)."""
    # lazy: the ignored path must not load the decision; the host predicts, so engramory.judge
    # decides without engramory.guard (the Claude-shaped edit model), and engramory.worstcase
    # comes only with a change whose result is bounded, not known
    from engramory import config  # lazy: the ignored path must not load the decision
    from engramory import judge as verdict  # lazy: the ignored path must not load the decision

    environ = scope.environ() if env is None else env
    if not verdict.is_index(path, config.from_env(environ)):
        return verdict.judge(path, None, b"", environ, window, tool)  # a store's read-only rules only
    before: bytes | None = None
    try:
        st = scope.stat(path)
        if st.st_mode & 0o170000 != 0o100000:  # a FIFO would block the read: never open it
            return judge_bound(path, None, "", environ, window, tool, "it is not a regular file")
        if st.st_size > scope.READ_LIMIT:
            return judge_bound(path, None, "", environ, window, tool, "it is too large to read", (None, st.st_size))
        before = scope.read_bounded(path, scope.READ_LIMIT)[0]
    except FileNotFoundError:
        before = None
    except OSError as exc:
        return judge_bound(path, None, "", environ, window, tool, exc.strerror or exc.__class__.__name__)
    after = predict(before)
    target = environ.get(verdict.TRACE_ENV)
    if target:
        trace(target, path, tool, after)
    if after is None:
        return None  # the host refuses this call itself and writes nothing
    if isinstance(after, Unknown):
        return judge_bound(path, before, after.added, environ, window, tool, after.why)
    return verdict.judge(path, before, after, environ, window, tool, seen)


def judge_bound(path: str, before: "bytes | None", added: str, env: "Mapping[str, str] | None", window: "Window | None",
           tool: str, why: str, before_size: "tuple[int | None, int] | None" = None) -> "Decision | None":
    """guard.judge_bound, without the guard: the worst case of a change whose result is bounded."""
    from engramory import worstcase  # lazy: the worst-case paths are rare; a plain deny never loads them

    return worstcase.judge_bound(path, before, added, env, window, tool, why, before_size)


def trace(target: str, path: str, tool: str, after: "bytes | Unknown | None") -> None:
    """Test-only (guard.TRACE_ENV): one JSON line per prediction, for the differential suites
    (`unknown`: judged by the worst case, no bytes predicted)."""
    unknown = isinstance(after, Unknown)
    line = jsonlite.dumps({
        "path": path, "tool": tool, "refused": after is None, "unknown": unknown,
        "after": after.hex() if isinstance(after, bytes) else None,
    })
    try:
        with open(target, "a", encoding="utf-8") as f:
            f.write(line + "\n")
    except OSError:
        pass


def lenient(decision: "Decision | None", bound: int) -> "Decision | None":
    """For a host whose matcher is predicted within `bound` bytes (lines exact): a deny that
    rests on bytes alone, inside that bound of the cap or of the size now, is not certain (the
    edit may really shrink the index), so it is let through. Copilot CLI and OpenClaw use it."""
    from engramory.judge import DENY  # lazy: the ignored path must not load the decision

    if decision is None or decision.action != DENY or bound <= 0 or decision.after is None or decision.caps is None:
        return decision
    (b_lines, b_bytes), (a_lines, a_bytes) = decision.before or (0, 0), decision.after
    caps = decision.caps
    if a_lines > caps.hard_lines and a_lines > b_lines:
        return decision  # lines are predicted exactly
    low = a_bytes - bound
    if low > caps.hard_bytes and low > b_bytes:
        return decision
    return None


def patch_keeping_endings(old: bytes, op: "Any") -> "tuple[bytes | None, int]":
    """(bytes written, byte bound) for a V4A update the way OpenClaw and Copilot CLI apply it
    (measured): the hunks applied to the file with CRLF folded, then the file's own line endings
    (all CRLF stays CRLF; mixed ones are restored line by line, so only bounded here: lines
    exact, bytes within one per line break) and its missing final newline."""
    from engramory import patches  # lazy: the patch parser only for a call that carries a patch
    from engramory.scope import encode  # loaded already (the one UTF-8 writer): no import on this path

    bom = old.startswith(b"\xef\xbb\xbf")
    raw = old[3 if bom else 0 :].decode("utf-8", "replace")
    applied = patches.apply_to(raw.replace("\r\n", "\n").encode("utf-8"), op)
    if applied is None:
        return None, 0
    body = applied.decode("utf-8", "replace")
    if raw and not raw.endswith(("\n", "\r")) and body.endswith("\n"):
        body = body[:-1]
    head = b"\xef\xbb\xbf" if bom else b""
    crlf, lf_total = raw.count("\r\n"), raw.count("\n")
    if crlf == 0:
        return head + encode(body), 0
    if crlf == lf_total:
        return head + encode(body.replace("\n", "\r\n")), 0
    return head + encode(body), body.count("\n")


def render_pre(decision: "Decision") -> str:
    from engramory.judge import DENY  # lazy: the ignored path must not load the decision

    if decision.action == DENY:
        inner = {"hookEventName": PRE, "permissionDecision": "deny", "permissionDecisionReason": decision.message}
    else:
        inner = {"hookEventName": PRE, "additionalContext": decision.message}
    return jsonlite.dumps({"hookSpecificOutput": inner})


def pre_decision(payload: "dict[str, Any]", dialect: Dialect, env: "Mapping[str, str] | None") -> "Decision | None":
    """PreToolUse: the guard's decision on this call (None: nothing to say)."""
    if dialect.payload_of is not None:
        tool, tool_input, cwd = dialect.payload_of(payload)
    else:
        tool, tool_input, cwd = payload.get("tool_name"), payload.get("tool_input"), payload.get("cwd")
    if not isinstance(tool, str) or not isinstance(tool_input, dict):
        return None
    cwd = cwd if isinstance(cwd, str) else None
    patch = dialect.patch.get(tool)
    if patch is not None:
        return patch(tool_input, cwd, env)
    kind = dialect.tools.get(tool)
    if kind is None:
        return None
    raw = path_of(tool_input, dialect.path_keys)
    if raw is None:
        return None
    full = scope.resolve_path(raw, cwd)
    environ = scope.environ() if env is None else env
    if not scope.interesting(full, environ):
        return None
    win = dialect.window() if dialect.window is not None else None
    seen = _session(payload, dialect, full) if dialect.read_tools else None
    return judge(full, tool, lambda before: dialect.predict(kind, before, tool_input), env, win, seen)


def pre_tool(payload: "dict[str, Any]", dialect: Dialect, env: "Mapping[str, str] | None") -> str:
    """PreToolUse: the host's answer on stdout ("" for no opinion), for a `deny="json"` host."""
    decision = pre_decision(payload, dialect, env)
    return render_pre(decision) if decision is not None else ""


def render_exit(decision: "Decision | None") -> "tuple[str, str, int]":
    """The answer of a host that denies by exit code 2 with the reason on stderr; anything
    that is not a deny is silence and exit 0 (never an affirmative allow)."""
    if decision is None:
        return "", "", 0  # the common case: engramory.guard is never imported
    from engramory.judge import DENY  # lazy: the ignored path must not load the decision

    if decision.action != DENY:
        return "", "", 0
    return "", decision.message.rstrip("\n") + "\n", 2


def _session(payload: "Mapping[str, Any]", dialect: Dialect, path: "str | None" = None) -> "Session | None":
    """The session for the stale-write rule: for a write of `path`, only when its store keeps
    a record (judge.session_for: one stat, engramory.stale not imported otherwise)."""
    if path is not None:
        from engramory.judge import session_for  # lazy: only for a write of an index

        return session_for(dialect.name, payload.get("session_id"), path)
    from engramory import stale  # lazy: the stale-write record only for a call on an index

    return stale.session(dialect.name, payload.get("session_id"))


def after_read(payload: "Mapping[str, Any]", dialect: Dialect, env: "Mapping[str, str] | None") -> None:
    """PostToolUse of a read tool: when it read an index, record what the agent saw
    (engramory.stale). Any other file: nothing imported, nothing opened."""
    tool_input = payload.get("tool_input")
    raw = path_of(tool_input, dialect.path_keys) if isinstance(tool_input, dict) else None
    if raw is None:
        return
    cwd = payload.get("cwd")
    full = scope.resolve_path(raw, cwd if isinstance(cwd, str) else None)
    if not scope.guards_index(full, scope.environ() if env is None else env):
        return
    from engramory import stale  # lazy: the stale-write record only for a call on an index

    stale.note_read(full, _session(payload, dialect))


# -- notices after shell tools and at session start ------------------------------------------


def _notice_env(payload: "Mapping[str, Any]", dialect: Dialect, env: "Mapping[str, str]") -> "dict[str, str]":
    """`env` with this host's own indexes added to the ones the backstop watches."""
    from engramory import automemory  # lazy: the backstop's paths only, not the guard's

    return automemory.watch_env(payload, dialect.index_paths, env)


def notice(event: str, payload: "dict[str, Any]", dialect: Dialect, env: "Mapping[str, str] | None") -> str:
    """The backstop's answer after a shell tool (POST) or at session start, Claude-shaped ("" for
    none): engramory.notices is imported only when something it watches moved (automemory.watched)."""
    from engramory import automemory  # lazy: the backstop's paths only, not the guard's

    notice_env = automemory.watched(event, payload, dialect.index_paths, env)
    if notice_env is None:
        return ""
    from engramory import notices  # lazy: notices only when something it watches may have moved

    return notices.backstop(event, payload, notice_env)


POST_FIELDS = WANTED | {"tool_input"}
POST_NEEDED = (*NEEDED, "tool_input")


def respond(raw: bytes, dialect: Dialect, event: str = PRE, env: "Mapping[str, str] | None" = None) -> "tuple[str, str, int]":
    """stdin bytes -> (stdout, stderr, exit code): exit 0, or 2 for a deny of a `deny="exit"`
    dialect."""
    # after a tool, only the fields the read record and the backstop use: tool_response holds
    # the file a read tool showed or all a shell command printed
    payload = top_fields(raw, POST_FIELDS, POST_NEEDED) if event == POST else parse(raw)
    if payload is None:
        return "", "", 0
    return answer(payload, dialect, event, env)


def answer(payload: "dict[str, Any]", dialect: Dialect, event: str = PRE, env: "Mapping[str, str] | None" = None) -> "tuple[str, str, int]":
    """`respond` on a payload already read (engramory.hosts.claude_entries reads it for its
    quiet check first)."""
    if event == PRE:
        if dialect.deny == "exit":
            return render_exit(pre_decision(payload, dialect, env))
        return pre_tool(payload, dialect, env), "", 0
    if event == POST and payload.get("tool_name") in dialect.read_tools:
        after_read(payload, dialect, env)
        return "", "", 0
    return notice(event, payload, dialect, env), "", 0

