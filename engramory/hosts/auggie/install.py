"""`engramory install --host auggie` / `uninstall --host auggie`: the guard as a `PreToolUse`
hook in Auggie's `settings.json` (user scope `~/.augment/`, project scope `./.augment/`; the
runtime beside it in `engramory/`), in Claude Code's schema: matcher `str-replace-editor|save-file`,
timeout in milliseconds. No `|| true`: Auggie blocks a PreToolUse on exit 2, and reads any other
non-zero exit, a timeout or a spawn error as a non-blocking error, so a missing script (exit 1)
lets the call through (its npm bundle 0.36.0, `augment.mjs`). The command holds `;`, so Auggie
runs it as `bash -c` (not split on blanks): no `.sh` wrapper is needed outside Windows.
"""

from __future__ import annotations

from engramory.hosts import auggie
from engramory.install import settingshooks as core
from engramory.install.exitdeny import denied_by_exit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

TIMEOUT_MS = 10_000  # Auggie's default is 60,000


def smoke_payload(project: str, index: str, content: str) -> dict[str, Any]:
    """A `save-file`, as the docs' examples read a payload (tool_name, tool_input.path)."""
    return {"hook_event_name": "PreToolUse", "cwd": project, "tool_name": auggie.WRITE_TOOL,
            "tool_input": {"path": index, "file_content": content}}


SPEC = core.Spec(
    host=auggie.NAME,
    title=auggie.TITLE,
    dirname=".augment",
    settings_name="settings.json",
    hooks=(("PreToolUse", auggie.EDIT_MATCHER),),
    handler=core.command_handler(TIMEOUT_MS),
    seconds=core.timeout_seconds(60_000, 1000),
    tools={"PreToolUse": tuple(auggie.TOOLS)},
    note="Auggie reads settings.json when a session starts: start a new one for the hook to apply.",
    or_true=False,
    smoke_deny=smoke_payload,
    denies=denied_by_exit,
)


install, uninstall, check = core.verbs(SPEC)
