"""`engramory install --host qwen` / `uninstall --host qwen`: the guard into Qwen Code's
`settings.json` hooks (user scope `~/.qwen`, project scope `./.qwen`; Qwen Code 0.24.4 runs
project hooks headless with no trust prompt). PreToolUse on `write_file|edit` (the guard),
PostToolUse on `run_shell_command` and SessionStart (notices). Timeouts are milliseconds in
this host's schema; a timed-out or failing hook allows.
"""

from __future__ import annotations

from engramory import install_settingshooks as core

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

TIMEOUT_MS = 10_000


def _handler(command: str) -> dict[str, Any]:
    return {"type": "command", "command": command, "timeout": TIMEOUT_MS}


SPEC = core.Spec(
    host="qwen",
    title="Qwen Code",
    dirname=".qwen",
    settings_name="settings.json",
    script="engramory_qwen_hook.py",
    hooks=(("PreToolUse", "^(write_file|edit)$"), ("PostToolUse", "^run_shell_command$"), ("SessionStart", None)),
    handler=_handler,
    seconds=lambda handler: float(handler.get("timeout", 60_000)) / 1000.0,
    note="Qwen Code reads settings.json when a session starts: start a new session for the hooks to apply.",
)


install, uninstall, check = core.verbs(SPEC)
