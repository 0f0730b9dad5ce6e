"""`engramory install --host crush` / `uninstall --host crush`: the guard as a `PreToolUse`
hook in Crush's JSON config (user scope: `$CRUSH_GLOBAL_CONFIG/crush.json`, default
`$XDG_CONFIG_HOME/crush/` or `~/.config/crush/`; project scope: `./.crush.json`, with the
runtime in `./.crush/engramory/`). Crush merges every config it finds and runs global and
project hooks both, with no trust prompt. The entry is flat, `{"name", "matcher", "command",
"timeout"}` (seconds) under `hooks.PreToolUse`; the matcher is a Go regexp that must compile
(an invalid one stops Crush from starting), and the command is absolute (Crush resolves a
relative one against the working dir). No `|| true`: Crush denies on exit 2, halts the turn on
exit 49, and reads any other exit as a non-blocking error (`internal/hooks/runner.go`), so a
missing script (exit 1) lets the call through.
"""

from __future__ import annotations

import os

from engramory.hosts import crush
from engramory.install import settingshooks as core
from engramory.install.exitdeny import denied_by_exit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

TIMEOUT = 10  # seconds (Crush's default is 30)


def user_base(env: Mapping[str, str]) -> str:
    moved = env.get("CRUSH_GLOBAL_CONFIG")
    if moved:
        return moved
    xdg = env.get("XDG_CONFIG_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".config")
    return os.path.join(xdg, "crush")


def entry(command: str, event: str, matcher: str | None) -> dict[str, Any]:
    return {"name": "engramory", "matcher": matcher, "command": command, "timeout": TIMEOUT}


def smoke_payload(project: str, index: str, content: str) -> dict[str, Any]:
    """A `write` as Crush's BuildPayload sends it."""
    return {"event": "PreToolUse", "session_id": "engramory-check", "cwd": project, "tool_name": "write",
            "tool_input": {"file_path": index, "content": content}}


SPEC = core.Spec(
    host=crush.NAME,
    title=crush.TITLE,
    dirname=".crush",
    settings_name="crush.json",
    hooks=(("PreToolUse", crush.EDIT_MATCHER),),
    handler=core.command_handler(TIMEOUT),
    seconds=core.timeout_seconds(30),
    tools={"PreToolUse": tuple(crush.TOOLS)},
    note="Crush reads its config when it starts: start it again for the hook to apply.",
    or_true=False,
    shape="flat",
    entry=entry,
    smoke_deny=smoke_payload,
    denies=denied_by_exit,
    user_base=user_base,
    project_settings=".crush.json",
)


install, uninstall, check = core.verbs(SPEC)
