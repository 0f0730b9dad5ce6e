"""`engramory install --host kiro` / `uninstall --host kiro`: the guard as a hook file of
engramory's own, in the format of Kiro's IDE 1.0 and CLI v3 (user scope:
`~/.kiro/hooks/engramory.json`; project scope: `./.kiro/hooks/engramory.json`; the runtime in
`~/.kiro/engramory/` or `./.kiro/engramory/`). Kiro reads every file in those folders, so the
user's own hook files are never touched; uninstall deletes the file it created. One entry,
`{"name", "trigger": "PreToolUse", "matcher", "action": {"type": "command", "command"},
"enabled": true}`, with no `timeout`: the v3 docs show `"timeout": 30` without a unit, and read
as milliseconds any value short enough to matter would cut the guard off (an error, so the
write goes through); Kiro's own default applies. No `|| true`: Kiro blocks on exit 2, and a missing
script (exit 1) is a hook error that lets the call through. CLI 2.x keeps hooks in an agent
config instead; PORTING.md shows the entry to add there by hand.
"""

from __future__ import annotations

from engramory.hosts import kiro
from engramory.install import settingshooks as core
from engramory.install.exitdeny import denied_by_exit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DEFAULT_TIMEOUT = 30  # seconds: the --check budget (the v3 docs' example; CLI 2.x's default is 30,000 ms)
HOOK_NAME = "engramory-index-guard"


def entry(command: str, event: str, matcher: str | None) -> dict[str, Any]:
    return {"name": HOOK_NAME, "trigger": event, "matcher": matcher, "action": {"type": "command", "command": command},
            "enabled": True}


def smoke_payload(project: str, index: str, content: str) -> dict[str, Any]:
    """A v3 `fs_write {path, text}`, as the CLI sends it."""
    return {"hook_event_name": "PreToolUse", "cwd": project, "tool_name": "fs_write",
            "tool_input": {"path": index, "text": content}}


SPEC = core.Spec(
    host=kiro.NAME,
    title=kiro.TITLE,
    dirname=".kiro",
    settings_name="hooks/engramory.json",
    hooks=(("PreToolUse", kiro.EDIT_MATCHER),),
    handler=core.command_handler(DEFAULT_TIMEOUT),
    seconds=core.timeout_seconds(DEFAULT_TIMEOUT),
    tools={"PreToolUse": tuple(kiro.TOOLS)},
    note="Kiro reads its hook files when a session starts: start a new one for the hook to apply.",
    or_true=False,
    shape="list",
    event_key="trigger",
    top={"version": "v1"},
    entry=entry,
    command_keys=("action.command", "command"),
    smoke_deny=smoke_payload,
    denies=denied_by_exit,
)


install, uninstall, check = core.verbs(SPEC)
