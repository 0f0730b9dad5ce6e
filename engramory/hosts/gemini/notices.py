"""Gemini CLI: the AfterTool and SessionStart notices (imported by engramory.hosts.gemini only
for those events).

What they need of the dialect (its tool and event names, where the private index lives, where a
write lands) they take from the package as an argument, `gemini`: the package passes itself when
it calls them, so this module never imports it back and the two form no import cycle."""

from engramory import config, jsonlite, notices, scope
from engramory.size import OK, OVER
from engramory.size import n as _n

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any, Protocol

    from engramory.config import Settings

    class Gemini(Protocol):
        """What these notices take from engramory.hosts.gemini (mypy checks the module
        against it where the package passes itself)."""

        NAME: str
        AFTER_TOOL: str
        SESSION_START: str
        WRITE_FILE: str
        REPLACE: str
        SHELL: str
        WINDOW_TEXT: str

        def private_index(self, project: str, env: Mapping[str, str], scan: bool = True) -> str: ...

        def landing_paths(self, tool: str, raw: str, cwd: str, name: str, paths: "Sequence[str] | None") -> "list[str]": ...


def _str(value: "Any") -> str:
    return value if isinstance(value, str) else ""


# -- the notices after a tool and at session start -----------------------------------------


def known_indexes(gemini: "Gemini", payload: "Mapping[str, Any]", env: "Mapping[str, str]") -> "list[str]":

    out: list[str] = []
    for p in config.from_env(env).index_paths or ():
        if p not in out:
            out.append(p)
    cwd = _str(payload.get("cwd"))
    if cwd and scope.isabs(cwd):
        p = gemini.private_index(cwd, env)
        if p not in out:
            out.append(p)
    return out


def _written_paths(gemini: "Gemini", payload: "Mapping[str, Any]", cwd: str, settings: "Settings") -> "list[str]":
    """Where a write_file or replace may have written, resolved as the guard resolves it (the
    tool's output is not read: see gemini.parse)."""

    tool_input = payload.get("tool_input")
    raw = tool_input.get("file_path") if isinstance(tool_input, dict) else None
    if payload.get("tool_name") not in (gemini.WRITE_FILE, gemini.REPLACE) or not isinstance(raw, str) or not raw or not cwd:
        return []
    return gemini.landing_paths(str(payload.get("tool_name")), raw, cwd, settings.index_name, settings.index_paths)


def _mentioned_indexes(tool_input: "Any", cwd: str, settings: "Settings") -> "list[str]":
    """Index files a shell command names (`>> notes/MEMORY.md`, `sed -i ... MEMORY.md`)."""
    if not isinstance(tool_input, dict) or not isinstance(tool_input.get("command"), str):
        return []
    command = tool_input["command"]
    wanted = {settings.index_name} | {scope.basename(p) for p in settings.index_paths or ()}
    if not any(w in command for w in wanted):
        return []  # the common case, decided without tokenizing
    base = _str(tool_input.get("dir_path"))
    base = scope.join(cwd, base) if base else cwd
    for sep in ";&|<>()'\"`=\t\n\r":
        command = command.replace(sep, " ")
    out = []
    for word in command.split(" "):
        if word and scope.basename(word) in wanted:
            path = scope.resolve_path(word, base)
            if path not in out:
                out.append(path)
    return out


def over_text(gemini: "Gemini", r: "Any") -> str:
    c = r.caps
    lines = "an unread number of lines" if r.lines is None else "%s lines" % _n(r.lines)
    return "the memory index %s is over its hard cap: %s and %s bytes (hard cap %s lines / %s bytes). %s." % (
        r.path, lines, _n(r.nbytes), _n(c.hard_lines), _n(c.hard_bytes), gemini.WINDOW_TEXT)


def warn_text(r: "Any") -> str:
    c = r.caps
    return ("the memory index %s is past its warn cap: %s lines and %s bytes (warn %s / %s, hard %s / %s); "
            "plan a compaction pass before adding much more." % (
                r.path, _n(r.lines or 0), _n(r.nbytes), _n(c.warn_lines), _n(c.warn_bytes),
                _n(c.hard_lines), _n(c.hard_bytes)))


def after_tool(gemini: "Gemini", payload: "Mapping[str, Any]", env: "Mapping[str, str]") -> str:
    """AfterTool: a notice when an index changed and is now past a cap; "" otherwise."""

    settings = config.from_env(env)
    cwd = _str(payload.get("cwd"))
    indexes = known_indexes(gemini, payload, env)
    written = _written_paths(gemini, payload, cwd, settings)
    if payload.get("tool_name") == gemini.SHELL:
        written += _mentioned_indexes(payload.get("tool_input"), cwd, settings)
    for path in written:
        if path and scope.is_index(path, settings.index_name, settings.index_paths) and path not in indexes:
            indexes.append(path)
    spath = notices.state_path(env, "gemini-" + _str(payload.get("session_id")))
    state = notices.load_state(spath)
    now = {p: notices.signature(p) for p in indexes}
    changed = [p for p in indexes if state.get(p) != now[p] and now[p] != "-"]
    if not changed:
        return ""
    merged = dict(state)
    merged.update(now)
    notices.save_state(spath, merged)
    tool = _str(payload.get("tool_name"))[:80] or "tool"
    lines = []
    for p in changed:
        reading = notices.read_index(p, env)
        if reading is None or reading.status == OK:
            continue
        if reading.status == OVER:
            from engramory.guard import COMPACT_STEPS  # only for a notice: guard and edits cost 0.25 ms

            lines.append("after this %s call, %s Compact it now with replace or write_file on the index "
                         "(the guard checks those). %s" % (tool, over_text(gemini, reading), COMPACT_STEPS))
        else:
            lines.append("after this %s call, %s" % (tool, warn_text(reading)))
    if not lines:
        return ""
    return _context(gemini.AFTER_TOOL, "engramory: " + " ".join(lines))


def session_start(gemini: "Gemini", payload: "Mapping[str, Any]", env: "Mapping[str, str]") -> str:

    indexes = known_indexes(gemini, payload, env)
    spath = notices.state_path(env, "gemini-" + _str(payload.get("session_id")))
    notices.save_state(spath, {p: notices.signature(p) for p in indexes})
    _seen_at_start(gemini, payload, env)
    lines = []
    for p in indexes:
        reading = notices.read_index(p, env)
        if reading is None or reading.status == OK:
            continue
        if reading.status == OVER:
            lines.append(over_text(gemini, reading) + " Compact it first (pointer-ify long lines, merge duplicates, "
                         "archive cold notes); edits that grow it are refused until it fits.")
        else:
            lines.append(warn_text(reading))
    if not lines:
        return ""
    return _context(gemini.SESSION_START, "engramory: " + " ".join(lines))


def _seen_at_start(gemini: "Gemini", payload: "Mapping[str, Any]", env: "Mapping[str, str]") -> None:
    """Gemini puts its private index, whole, into the session's system instruction: the agent's
    first read of it, recorded for the stale-write rule (engramory.stale)."""
    from engramory import stale  # lazy: hot path, AfterTool does not load stale

    cwd = _str(payload.get("cwd"))
    who = stale.session(gemini.NAME, payload.get("session_id"))
    if who is not None and cwd and scope.isabs(cwd):
        path = gemini.private_index(cwd, env)
        if scope.isfile(path):
            stale.note_read(path, who)


def _context(event: str, text: str) -> str:
    from engramory.guard import masked  # lazy: hot path, AfterTool does not load guard

    return jsonlite.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": masked(text)}})
