"""Claude Code PreToolUse adapter (also what Cursor runs when it loads Claude hooks).

Contract: exit 0 always. A deny is one JSON object with hookSpecificOutput.hookEventName =
"PreToolUse", permissionDecision "deny" and permissionDecisionReason; a nudge carries only
additionalContext; otherwise nothing is printed. Never "allow" or "ask": the guard must not
approve anything on the user's behalf. Any failure of our own is a silent exit 0 (fail open,
engramory.hosts.run), with one line on stderr, which Claude Code keeps in its debug log.
"""

from engramory import jsonlite, scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from engramory.guard import Decision
    from engramory.size import Window

TAG = "engramory guard"
SHELL_TOOL = "Bash"
READ_TOOL = "Read"  # PostToolUse: what the agent read, for the stale-write rule of Bash writes
READ_FIELDS = frozenset(("tool_input", "cwd", "session_id"))  # what a Read's PostToolUse reads of its payload
SHELL_WRITE_TOOL = "Bash write (heredoc, printf or echo)"

# --- registry declarations (see engramory/hosts/__init__.py) ---
NAME = "claude"
TITLE = "Claude Code"
VERIFIED = "2.1.332"
INSTALLER = "engramory.hosts.claude.install"
# The window (200 lines, 25,000 UTF-16 units, measured on 2.1.332) is engramory.size's
# claude_code_window: the kernel's default window too, so it lives below this module.


def window() -> "Window":
    """How this host loads an index (imported only when asked: hot path)."""
    from engramory import size  # lazy: sizes only when a change is judged, not on the ignored path

    return size.claude_code_window()


def index_paths(cwd: str, env: "Mapping[str, str]") -> "list[str]":
    """The project's auto-memory index: `autoMemoryDirectory` (local, then user settings)
    when set, else `<config>/projects/<project>/memory/MEMORY.md` (engramory.automemory).
    `cwd` may be "" (then only CLAUDE_PROJECT_DIR decides)."""
    from engramory import automemory  # lazy: only a path outside every configured store asks auto-memory

    out: list[str] = []
    for project in automemory.project_candidates({"cwd": cwd}, env):
        index = automemory.auto_memory_index(project, env)
        if index is not None and index not in out:
            out.append(index)
    return out


def parse(raw: bytes) -> "dict[str, Any] | None":
    try:
        payload = jsonlite.loads(jsonlite.decode_payload(raw))
    except ValueError:
        return None
    return payload if isinstance(payload, dict) else None


def _roots(payload: "dict[str, Any]") -> "list[str]":
    roots = payload.get("workspace_roots")
    roots = [r for r in roots if isinstance(r, str)] if isinstance(roots, list) else []
    environ = scope.environ()
    env_root = environ.get("CURSOR_PROJECT_DIR") or environ.get("CLAUDE_PROJECT_DIR")
    if env_root:
        roots.append(env_root)
    return roots


def request_from(payload: "dict[str, Any]") -> "Any":
    from engramory import edits  # lazy: only a call that may change an index needs this

    cwd = payload.get("cwd")
    return edits.normalise(payload.get("tool_name"), payload.get("tool_input"), cwd, _roots(payload))


def render(decision: "Decision") -> str:
    from engramory.judge import DENY  # lazy: the ignored path must not load the decision

    if decision.action == DENY:
        inner = {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": decision.message,
        }
    else:
        inner = {"hookEventName": "PreToolUse", "additionalContext": decision.message}
    return jsonlite.dumps({"hookSpecificOutput": inner})


def from_cursor(payload: "dict[str, Any]") -> bool:
    """Whether Cursor is running this Claude hook through its third-party hook loading. Its
    payloads carry Cursor's own fields and its camel-case event name."""
    return (
        "cursor_version" in payload
        or payload.get("hook_event_name") == "preToolUse"
        or ("conversation_id" in payload and "generation_id" in payload)
    )


def respond(raw: bytes, env: "Mapping[str, str] | None" = None) -> "tuple[str, str, int]":
    """stdin bytes -> (stdout, stderr, exit code). A payload from Cursor is answered in
    Cursor's own protocol (deny = exit 2), since whether Cursor honours a Claude-shaped
    answer from a Claude hook is unverified; exit 2 denies in both hosts."""
    payload = parse(raw)
    if payload is not None and from_cursor(payload):
        from engramory.hosts import cursor  # lazy: a Claude payload never loads Cursor's module

        return cursor.handle(raw, env)
    return _handle_payload(payload, env), "", 0


def handle(raw: bytes, env: "Mapping[str, str] | None" = None) -> str:
    """stdin bytes -> stdout text ("" for no opinion)."""
    return respond(raw, env)[0]


def _handle_payload(payload: "dict[str, Any] | None", env: "Mapping[str, str] | None") -> str:
    if payload is None:
        return ""
    if payload.get("tool_name") == SHELL_TOOL:
        return _shell(payload, env)
    path = scope.raw_path(payload.get("tool_input"))
    if path is None:
        return ""
    cwd = payload.get("cwd")
    environ = scope.environ() if env is None else env
    full = scope.resolve_path(path, cwd if isinstance(cwd, str) else None, _roots(payload))
    alias = None
    if not scope.interesting(full, environ):
        # A file of another name may still be the project's auto-memory index: the target
        # its MEMORY.md links to (dotfiles, docs/agent-memory.md).
        alias = scope.index_alias(full, index_paths(cwd if isinstance(cwd, str) else "", environ))
        if alias is None:
            return ""  # the common case: a file no store cares about; nothing more is imported
    req = request_from(payload)
    if req is None:
        return ""
    if alias is not None:
        req.path = alias  # judged as the index the host loads, with its caps and its name
    from engramory import guard  # lazy: the ignored path must not load the guard

    decision = guard.evaluate(req, env, window())
    if decision is None:
        return ""
    return render(decision)


def _shell(payload: "dict[str, Any]", env: "Mapping[str, str] | None") -> str:
    """A Bash call (installs since issue 22 select Bash in the PreToolUse matcher): the writes
    whose bytes the command fixes (engramory.shellwrite: `cat > F <<EOF`, `printf ... >> F`,
    `echo ... > F`) into an index or a store are judged by the core as a Write of those bytes
    would be; the host's own stale-read check covers Write, not the shell. Any other command
    is left to the after-tool notice, as before."""
    tool_input = payload.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if not isinstance(command, str) or ("<<" not in command and (
            ">" not in command or ("printf" not in command and "echo" not in command))):
        return ""  # the common case: no heredoc, no printf/echo into a file; nothing is imported
    from engramory import shellwrite  # lazy: a command that may write a file only

    environ = scope.environ() if env is None else env
    cwd = payload.get("cwd")
    base = cwd if isinstance(cwd, str) and cwd else None
    autos: list[str] | None = None

    def judged(path: str) -> "str | None":
        """The path a write of `path` is judged as: itself, or the auto-memory index it is
        (or that links to it); None when no store or index cares about it. The settings that
        place the auto-memory index are read only for a path no store claims."""
        nonlocal autos
        if scope.interesting(path, environ):
            return path
        if autos is None:
            autos = index_paths(base or "", environ)
        return path if path in autos else scope.index_alias(path, autos)

    worst: Decision | None = None
    for w in shellwrite.predicted(command, base, lambda path: judged(path) is not None):
        from engramory import judge as verdict  # lazy: only a write into an index or a store is judged

        path = judged(w.path) or w.path
        seen = verdict.session_for(NAME, payload.get("session_id"), path)
        decision = verdict.judge(path, w.before, w.after, environ, window(), SHELL_WRITE_TOOL, seen)
        if decision is not None and decision.action == verdict.DENY:
            return render(decision)
        worst = worst or decision
    return render(worst) if worst is not None else ""


def main(argv: "list[str] | None" = None) -> int:
    """The PreToolUse hook process (engramory.hosts.run: bounded stdin, fail open)."""
    from engramory.hosts import run  # lazy: the runtime only for the stand-alone entry

    return run(NAME)


def post(raw: bytes, env: "Mapping[str, str] | None" = None) -> "tuple[str, str, int]":
    """PostToolUse (and the late re-check on UserPromptSubmit): the host-neutral backstop."""
    from engramory.hosts import top_fields  # the runtime's flat reader (notices.post_tool_respond's)

    payload = top_fields(raw)
    if payload is None:
        return "", "", 0
    if payload.get("tool_name") == READ_TOOL:
        # only the fields it needs: tool_response holds the whole file that was read
        _after_read(top_fields(raw, READ_FIELDS, tuple(READ_FIELDS)), scope.environ() if env is None else env)
        return "", "", 0  # a Read changes nothing the backstop watches
    from engramory import automemory  # lazy: the after-tool path's cheap test, not the guard's (nor a Read's)

    if automemory.unchanged(payload, scope.environ() if env is None else env):
        return "", "", 0  # nothing notices watches moved: it is not imported
    from engramory.notices import after_tool_or_late  # not on the guard's path

    return after_tool_or_late(payload, env), "", 0


def _after_read(payload: "dict[str, Any] | None", env: "Mapping[str, str]") -> None:
    """PostToolUse of Read (installs since issue 22): when it read an index, record what the
    agent was shown (engramory.stale), so that a Bash rewrite of the whole index from that read
    is judged by the stale-write rule (the host checks staleness for its Write tool only). Any
    other file: nothing imported, nothing opened."""
    tool_input = payload.get("tool_input") if payload is not None else None
    raw = tool_input.get("file_path") if isinstance(tool_input, dict) else None
    if payload is None or not isinstance(raw, str) or not raw:
        return
    cwd = payload.get("cwd")
    full = scope.resolve_path(raw, cwd if isinstance(cwd, str) else None)
    if not scope.guards_index(full, env):
        # Claude's auto-memory index is always MEMORY.md: any other name skips the settings reads
        if scope.basename(full) != scope.INDEX_NAME or full not in index_paths(cwd if isinstance(cwd, str) else "", env):
            return
    from engramory import stale  # lazy: the stale-write record only for a read of an index

    stale.note_read(full, stale.session(NAME, payload.get("session_id")))


def start(raw: bytes, env: "Mapping[str, str] | None" = None) -> "tuple[str, str, int]":
    """SessionStart: the store's notice, first."""
    from engramory.notices import session_start_respond  # not on the guard's path

    return session_start_respond(raw, env)


# The event argument of the hook command -> the entry point (hooks/engramory_hook.py claude <event>).
ENTRIES = {"PreToolUse": "respond", "PostToolUse": "post", "UserPromptSubmit": "post", "SessionStart": "start"}


if TYPE_CHECKING:  # mypy checks this module against the registry's Host Protocol; never run
    from engramory.hosts import claude as _self
    from engramory.hosts.protocol import Host

    _host: Host = _self
