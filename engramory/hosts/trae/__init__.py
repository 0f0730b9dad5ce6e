"""Trae IDE: Claude Code's hook schema in `.trae/hooks.json` or `~/.trae/hooks.json`, said to
be Claude-compatible in its events, payloads and `hookSpecificOutput` answer, so a deny is
Claude's (exit 0, `permissionDecision: "deny"`; engramory.hosts.claudelike.render_pre). Not
verified on the real host: Trae is a desktop IDE that no package registry ships. Facts from
its hooks reference (docs.trae.cn/ide_hook-configuration-reference, as copied at w3cschool.cn)
and docs.trae.ai/ide/hook-configuration-reference as quoted in Chemaclass/agnostic-ai#729,
Fmarzochi/EGC#1079 and rtk-ai/rtk#3008, as PORTING.md says.

- Payload: Claude's `{hook_event_name, tool_name, tool_input, cwd, ...}`. The IDE's file tool
  names and argument keys are not documented (Trae's CLI uses `Write`, `Edit`, `MultiEdit`),
  so the hook runs for every tool (no matcher) and judges any call whose input names a
  guarded file, inferring a write from its content and an edit from its old and new strings
  (engramory.edits.normalise).
- Edit model: Claude Code's (engramory.edits.predict); an edit it cannot reproduce is judged
  by its worst case (guard.evaluate). Whether exit 2 blocks is not documented: no answer here
  uses it.
- Native memory: none found; rules (`.trae/rules/`, `AGENTS.md`) load with no documented cap.
  A store's index is held to the standard caps.
"""

from engramory import scope
from engramory.hosts import parse_object

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from engramory.size import Window

# --- registry declarations (see engramory/hosts/__init__.py) ---
NAME = "trae"
TITLE = "Trae IDE"
VERIFIED = ""
UNVERIFIED_WHY = ("Trae is a desktop IDE that no package registry reachable here ships, and its file-tool names "
                  "are undocumented; built from its hooks docs, which do not say what exit 2 does")
INSTALLER = "engramory.hosts.trae.install"


def window() -> "Window":
    from engramory import size  # lazy: sizes only when a change is judged, not on the ignored path

    return size.Window(note="Trae loads no MEMORY.md of its own (its docs): the standard caps, in bytes")


def index_paths(cwd: str, env: "Mapping[str, str]") -> "list[str]":
    return []


def respond(raw: bytes, env: "Mapping[str, str] | None" = None) -> "tuple[str, str, int]":
    """PreToolUse: stdin bytes -> (stdout, stderr, exit 0); a deny in Claude's JSON."""
    payload = parse_object(raw)
    if payload is None:
        return "", "", 0
    tool, tool_input, cwd = payload.get("tool_name"), payload.get("tool_input"), payload.get("cwd")
    raw_path = scope.raw_path(tool_input)
    if raw_path is None:
        return "", "", 0
    cwd = cwd if isinstance(cwd, str) else None
    environ = scope.environ() if env is None else env
    if not scope.interesting(scope.resolve_path(raw_path, cwd), environ):
        return "", "", 0  # the common case: nothing more is imported
    from engramory import edits  # lazy: only a call that may change an index needs this

    known = tool in edits.WRITE_TOOLS or tool in edits.EDIT_TOOLS or tool in edits.DELETE_TOOLS
    req = edits.normalise(tool if known else "", tool_input, cwd)
    if req is None:
        return "", "", 0
    if not known and isinstance(tool, str):
        req.tool = tool  # the message names the host's own tool
    from engramory import guard  # lazy: the ignored path must not load the guard
    from engramory.hosts.claudelike import render_pre  # lazy: only a call on a guarded file is rendered

    decision = guard.evaluate(req, env, window())
    return (render_pre(decision) if decision is not None else ""), "", 0


ENTRIES = {"PreToolUse": "respond"}


if TYPE_CHECKING:  # mypy checks this module against the registry's Host Protocol; never run
    from engramory.hosts import trae as _self
    from engramory.hosts.protocol import Host

    _host: Host = _self
