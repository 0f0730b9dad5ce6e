"""`engramory install --host qwen` / `uninstall --host qwen`: the guard into Qwen Code's
`settings.json` hooks (user scope `~/.qwen`, project scope `./.qwen`; Qwen Code 0.24.4 runs
project hooks headless with no trust prompt). PreToolUse on `write_file|edit` (the guard),
PostToolUse on `run_shell_command` and SessionStart (notices). Timeouts are milliseconds in
this host's schema; a timed-out or failing hook allows.
"""

from __future__ import annotations

from engramory.install import settingshooks as core

TIMEOUT_MS = 10_000

SPEC = core.Spec(
    host="qwen",
    title="Qwen Code",
    dirname=".qwen",
    settings_name="settings.json",
    script="engramory_qwen_hook.py",
    hooks=(("PreToolUse", "^(write_file|edit)$"), ("PostToolUse", "^run_shell_command$"), ("SessionStart", None)),
    handler=core.command_handler(TIMEOUT_MS),
    seconds=core.timeout_seconds(60_000, 1000),
    note="Qwen Code reads settings.json when a session starts: start a new session for the hooks to apply.",
)


install, uninstall, check = core.verbs(SPEC)
