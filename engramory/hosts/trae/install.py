"""`engramory install --host trae` / `uninstall --host trae`: the guard as a `PreToolUse` hook in
Trae's `hooks.json` (user scope: `~/.trae/hooks.json`; the CN edition's `~/.trae-cn/` is not
wired; project scope: `./.trae/hooks.json`; the runtime beside it in `engramory/`), in Claude Code's schema with the file's `"version": 1`. No matcher: Trae's file
tool names are undocumented, so the guard runs for every tool and leaves at once for a file it
does not keep. The deny is JSON with exit 0, so the command ends in `|| true`: whatever Trae
makes of exit 1, a missing script never blocks. Trae's docs: a matcher that is `*`, empty or
omitted matches every tool; `timeout` in seconds, default 30.
"""

from __future__ import annotations

from engramory.hosts import trae
from engramory.install import settingshooks as core
from engramory.install.exitdeny import denied_by_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

TIMEOUT = 10  # seconds (Trae's unit; its default is 30)


def smoke_payload(project: str, index: str, content: str) -> dict[str, Any]:
    """A Claude-shaped `Write` (the name Trae's CLI uses)."""
    return {"hook_event_name": "PreToolUse", "session_id": "engramory-check", "cwd": project, "tool_name": "Write",
            "tool_input": {"file_path": index, "content": content}}


SPEC = core.Spec(
    host=trae.NAME,
    title=trae.TITLE,
    dirname=".trae",
    settings_name="hooks.json",
    hooks=(("PreToolUse", None),),
    handler=core.command_handler(TIMEOUT),
    seconds=core.timeout_seconds(30),
    note="Trae reads hooks.json when a session starts: start a new one for the hook to apply.",
    or_true=True,
    top={"version": 1},
    smoke_deny=smoke_payload,
    denies=denied_by_json,
)


install, uninstall, check = core.verbs(SPEC)
