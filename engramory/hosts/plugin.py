"""The JS-plugin dialect, held once: how the plugins engramory writes for opencode and its fork
Kilo, Cline and OpenClaw ask their Python hook, and how a verdict is rendered back. Copilot
CLI's native hooks share its read record and its notice text. Each host module keeps only what
is its own: its tools, its edit model, its payload keys and its load window (a `Plugin`).

Protocol (plugin -> script, one JSON object on stdin; script -> plugin, one on stdout):

- `{"event": "before", ...the tool call}` -> `{"deny": R}` | `{"note": T}` | `{}`: the host's
  `before(payload, env)` decides (engramory.judge through the host's edit model); the plugin
  throws or skips on a deny, shows a note, and lets the tool run on `{}` (and on anything it
  cannot read: every failure of ours is the fail-open `{}`, engramory.hosts.run).
- `{"event": "read", ...}` (the host's read tool) -> `{}`: the host's `read(payload, env)`
  records what the session was shown of an index (engramory.stale; `record_read` below).
- `{"event": "after", "tool", ...}` (only for the host's `shell_tools`) and
  `{"event": "start", ...}` -> `{"context": T}` | `{}`: the backstop's notice (engramory.notices
  through automemory.watched), unless the host answers `start` itself (OpenClaw).
- anything else -> `{}`.

A host module asks engramory.hosts.plugin_quiet first and imports this module only for a
question that may need more than `{}` (a write or a read of a guarded file, an `after`, a
`start`); it imports only what every hook loads (jsonlite, scope, the runtime), and the
decision, the notices and the stale-write record only on the way to them.
"""

from engramory import jsonlite, scope
from engramory.hosts import EDIT as EDIT  # the edit kinds, spelled once in the package
from engramory.hosts import WRITE as WRITE
from engramory.hosts import parse_object
from engramory.hosts import path_of as path_of  # the one reading of a path argument (claudelike's too)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from engramory.judge import Decision
    from engramory.size import Window
    from engramory.stale import Session

    Before = Callable[[dict[str, Any], "Mapping[str, str] | None"], "Decision | None"]
    Handler = Callable[[dict[str, Any], "Mapping[str, str] | None"], Any]

EMPTY = "{}"  # "go on": also every plugin host's FAIL_OPEN
POST = "PostToolUse"  # the notices' events (claudelike.POST, claudelike.START)
START = "SessionStart"


class Plugin:
    """One JS-plugin host: its registry name, how it judges `before`, and what differs in its
    requests (`cwd_key`, `session_key`: the payload keys of the working folder and the session
    id; `shell_tools`: the tools whose `after` runs the backstop; `read`: its read recorder;
    `start`: its own session-start answer, replacing the shared notice)."""

    __slots__ = ("name", "before", "index_paths", "window", "read", "start", "shell_tools", "cwd_key", "session_key")

    def __init__(
        self,
        name: str,
        before: "Before",
        index_paths: "Callable[[str, Mapping[str, str]], list[str]]",
        window: "Callable[[], Window]",
        read: "Handler | None" = None,
        start: "Callable[[dict[str, Any], Mapping[str, str] | None], str] | None" = None,
        shell_tools: "tuple[str, ...]" = (),
        cwd_key: str = "directory",
        session_key: str = "sessionID",
    ) -> None:
        self.name = name
        self.before = before
        self.index_paths = index_paths
        self.window = window
        self.read = read
        self.start = start
        self.shell_tools = shell_tools
        self.cwd_key = cwd_key
        self.session_key = session_key


def respond(raw: bytes, env: "Mapping[str, str] | None", host: Plugin) -> "tuple[str, str, int]":
    """The plugin's question -> (stdout JSON, stderr, 0) for `host` (see the module docstring)."""
    payload = parse_object(raw)
    if payload is None:
        return EMPTY, "", 0
    return answer(payload, env, host)


def answer(payload: "dict[str, Any]", env: "Mapping[str, str] | None", host: Plugin) -> "tuple[str, str, int]":
    """`respond` on a question already read (a host module reads it for
    engramory.hosts.plugin_quiet first, and imports this module only when that says no)."""
    event = payload.get("event")
    if event == "before":
        return render(host.before(payload, env)), "", 0
    if event == "read" and host.read is not None:
        host.read(payload, env)
        return EMPTY, "", 0
    if event == "start" and host.start is not None:
        return host.start(payload, env), "", 0
    if event == "start" or (event == "after" and payload.get("tool") in host.shell_tools):
        text = context(POST if event == "after" else START, payload.get(host.session_key), payload.get(host.cwd_key),
                       payload.get("tool"), host.index_paths, env)
        return (jsonlite.dumps({"context": text}) if text else EMPTY), "", 0
    return EMPTY, "", 0


def render(decision: "Decision | None") -> str:
    """A verdict as the plugins read it: `{"deny": R}`, `{"note": T}`, or `{}` for nothing."""
    if decision is None:
        return EMPTY
    from engramory.judge import DENY  # lazy: only with a decision, the ignored path stays off it

    return jsonlite.dumps({"deny": decision.message} if decision.action == DENY else {"note": decision.message})


def context(event: str, session_id: "Any", cwd: "Any", tool: "Any",
            index_paths: "Callable[[str, Mapping[str, str]], list[str]]", env: "Mapping[str, str] | None") -> str:
    """The text of the backstop's notice after a shell tool (POST) or at session start, for a
    host whose requests are not Claude-shaped ("" for none): the plugins' `context`, Copilot
    CLI's `additionalContext`."""
    from engramory import automemory  # lazy: the backstop's paths only, never a `before` or `read`

    shaped = {"session_id": session_id, "cwd": cwd, "tool_name": tool}
    notice_env = automemory.watched(event, shaped, index_paths, env)
    if notice_env is None:
        return ""
    from engramory import notices  # lazy: notices only when something it watches may have moved

    rendered = notices.backstop(event, shaped, notice_env)
    if not rendered:
        return ""
    try:
        obj = jsonlite.loads(rendered)
    except ValueError:
        return ""
    inner = obj.get("hookSpecificOutput") if isinstance(obj, dict) else None
    text = inner.get("additionalContext") if isinstance(inner, dict) else None
    return text if isinstance(text, str) else ""


def session(host: str, session_id: "Any", path: str) -> "Session | None":
    """The session for the stale-write rule on a write of `path` (judge.session_for: None, and
    engramory.stale not imported, when `path`'s store keeps no record)."""
    from engramory.judge import session_for  # lazy: only for a write of a guarded file

    return session_for(host, session_id, path)


def record_read(host: str, session_id: "Any", raw: "str | None", base: "str | None",
                env: "Mapping[str, str] | None") -> None:
    """After (or before) the host's read tool showed `raw` (relative to `base`): when it is an
    index, record what the session saw (engramory.stale). Any other file: nothing imported,
    nothing opened."""
    if raw is None:
        return
    full = scope.resolve_path(raw, base)
    if not scope.guards_index(full, scope.environ() if env is None else env):
        return
    from engramory import stale  # lazy: the stale-write record only for a call on an index

    stale.note_read(full, stale.session(host, session_id))
