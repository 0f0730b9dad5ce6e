"""`engramory install --host windsurf` / `uninstall --host windsurf`: the guard as a
`pre_write_code` hook in Windsurf's `hooks.json` (user scope: `~/.codeium/windsurf/hooks.json`;
project scope: `./.windsurf/hooks.json`; the runtime beside it in `engramory/`). Windsurf
merges the system, user and workspace files, in that order. The entry is flat,
`{"command"}` under `hooks.pre_write_code` (the hook has no matcher: it runs for every
write). No `|| true`: Windsurf denies on exit 2 and any other exit proceeds, so a missing
script (exit 1) lets the write through. Hooks do not load in Restricted Mode.
"""

from __future__ import annotations

import os

from engramory.hosts import windsurf
from engramory.install import settingshooks as core
from engramory.install.exitdeny import denied_by_exit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


def user_base(env: Mapping[str, str]) -> str:
    return os.path.join(env.get("HOME") or os.path.expanduser("~"), ".codeium", "windsurf")


def entry(command: str, event: str, matcher: str | None) -> dict[str, Any]:
    return {"command": command}


def smoke_payload(project: str, index: str, content: str) -> dict[str, Any]:
    """A whole-index rewrite, as the docs show a `pre_write_code` payload."""
    with open(index, encoding="utf-8") as f:
        old = f.read()
    return {"agent_action_name": windsurf.EVENT, "trajectory_id": "engramory-check", "execution_id": "check",
            "timestamp": "2026-01-01T00:00:00Z",
            "tool_info": {"file_path": index, "edits": [{"old_string": old, "new_string": content}]}}


SPEC = core.Spec(
    host=windsurf.NAME,
    title=windsurf.TITLE,
    dirname=".windsurf",
    settings_name="hooks.json",
    hooks=((windsurf.EVENT, None),),
    handler=core.command_handler(0),
    note="Windsurf reads hooks.json on its own; hooks do not load in Restricted Mode.",
    or_true=False,
    shape="flat",
    entry=entry,
    smoke_deny=smoke_payload,
    denies=denied_by_exit,
    user_base=user_base,
)


install, uninstall, check = core.verbs(SPEC)
