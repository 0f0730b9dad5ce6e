"""Hermes Agent plugin callbacks, run inside Hermes's own Python (the shell-hook variant in
engramory.hosts.hermes never loads this module).

- `pre_tool_call`: the guard's decision on a write_file or patch (engramory.hosts.hermes.decide);
  a block directive, or None to let the tool run;
- `post_tool_call`: after read_file showed an index, what this agent was shown is recorded for
  the stale-write rule (engramory.stale), keyed by Hermes's session id and task id: Hermes stamps
  its own reads per task (tools/file_state.py), so each agent of a session is judged on its reads;
- `transform_tool_result`: the warn-zone nudge, which has no channel before the tool runs, kept
  by tool_call_id and added to the tool's result afterwards.

Contract: no callback raises (a failure of ours allows the tool, with one line on stderr; in
Hermes an exception in a hook blocks the tool) and each accepts any keyword Hermes adds.
"""

from __future__ import annotations

import os
import sys

from engramory import scope
from engramory.hosts.hermes import (
    GUARDED_TOOLS,
    NAME,
    PENDING_LIMIT,
    READ_TOOL,
    TAG,
    base_dirs,
    decide,
    is_hermes_memory,
    resolve,
    task_base,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from engramory.stale import Session

_PENDING: dict[str, str] = {}


def pre_tool_call(tool_name: Any = None, args: Any = None, **kwargs: Any) -> dict[str, str] | None:
    """Hermes `pre_tool_call` callback: a block directive, or None to let the tool run."""
    try:
        if tool_name not in GUARDED_TOOLS:
            return None
        task_id = kwargs.get("task_id", "default")
        decision, notes = decide(tool_name, args, task_id=task_id, seen=session_of(kwargs.get("session_id"), task_id))
        if decision is not None:
            return {"action": "block", "message": decision.message}
        call_id = kwargs.get("tool_call_id")
        if notes and isinstance(call_id, str) and call_id:
            while len(_PENDING) >= PENDING_LIMIT:
                _PENDING.pop(next(iter(_PENDING)))
            _PENDING[call_id] = " ".join(notes)
        return None
    except BaseException as exc:  # noqa: BLE001 - a guard must never break the user's tools
        if isinstance(exc, KeyboardInterrupt):
            raise
        _complain(exc)
        return None


def session_of(session_id: Any, task_id: Any) -> Session | None:
    """The stale-write record's owner: Hermes's session and, within it, the agent (task), as
    Hermes stamps its own reads per task. None without a session id: nothing is recorded."""
    if not isinstance(session_id, str) or not session_id:
        return None
    # lazy: a call to any tool but write_file, patch, read_file must not load stale
    from engramory import stale

    task = task_id if isinstance(task_id, str) and task_id else "default"
    return stale.session(NAME, "%s\0%s" % (session_id, task))


def post_tool_call(tool_name: Any = None, args: Any = None, result: Any = None, **kwargs: Any) -> None:
    """Hermes `post_tool_call` callback: after read_file showed an index, record what this
    agent was shown (engramory.stale). Any other tool or file: nothing opened."""
    try:
        if tool_name != READ_TOOL or not isinstance(args, dict):
            return
        raw = args.get("path")
        if not isinstance(raw, str) or not raw or "\x00" in raw:
            return
        env = os.environ
        task_id = kwargs.get("task_id", "default")
        bases = base_dirs(env)
        first = task_base(task_id)
        if first:
            bases.insert(0, first)
        path = resolve(raw, bases)
        if not scope.guards_index(path, env) or is_hermes_memory(path, env) or not _read_ok(result):
            return
        # lazy: only a read of an index records
        from engramory import stale

        stale.note_read(path, session_of(kwargs.get("session_id"), task_id))
    except BaseException as exc:  # noqa: BLE001 - same rule as pre_tool_call
        if isinstance(exc, KeyboardInterrupt):
            raise
        _complain(exc)


def _read_ok(result: Any) -> bool:
    """Whether read_file's result is a read, not its `{"error": ...}` (then nothing was shown)."""
    import json  # lazy: only a read of an index parses its result

    try:
        data = json.loads(result) if isinstance(result, str) else None
    except ValueError:
        return False
    return isinstance(data, dict) and not data.get("error")


def transform_tool_result(tool_name: Any = None, result: Any = None, **kwargs: Any) -> str | None:
    """Hermes `transform_tool_result` callback: add a pending nudge to a successful result."""
    try:
        call_id = kwargs.get("tool_call_id")
        if not isinstance(call_id, str) or call_id not in _PENDING:
            return None
        note = _PENDING.pop(call_id)
        if not isinstance(result, str):
            return None
        import json

        try:
            data = json.loads(result)
        except ValueError:
            return None
        if not isinstance(data, dict) or data.get("error"):
            return None
        data["engramory"] = note
        return json.dumps(data, ensure_ascii=False)
    except BaseException as exc:  # noqa: BLE001 - same rule as pre_tool_call
        if isinstance(exc, KeyboardInterrupt):
            raise
        _complain(exc)
        return None


def _complain(exc: BaseException) -> None:
    try:
        sys.stderr.write("%s: internal error, tool allowed: %r\n" % (TAG, exc))
    except Exception:  # noqa: BLE001 - nothing left to report to
        pass


def register(ctx: Any) -> None:
    """What the Hermes plugin's register(ctx) does."""
    ctx.register_hook("pre_tool_call", pre_tool_call)
    ctx.register_hook("post_tool_call", post_tool_call)
    ctx.register_hook("transform_tool_result", transform_tool_result)
