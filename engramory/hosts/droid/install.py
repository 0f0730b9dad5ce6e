"""`engramory install --host droid` / `uninstall --host droid`: the guard into Factory droid's
`settings.json` hooks (user scope `~/.factory`, project scope `./.factory`; droid 0.225.2 runs
project hooks in `droid exec` with no prompt). PreToolUse on `Create|Edit|ApplyPatch` (the
guard: ApplyPatch is the edit tool of droid's "apply-patch" profile, its default for
OpenAI-provider models; `--check` fails an older install whose matcher misses it),
PostToolUse on `Execute|Read` (notices, and what the agent read for the stale-write rule:
`--check` fails an install whose matcher misses Read) and SessionStart. Timeouts are seconds in this host's
schema; a failing hook allows.
"""

from __future__ import annotations

from engramory.install import settingshooks as core

TIMEOUT = 10

SPEC = core.Spec(
    host="droid",
    title="Factory droid",
    dirname=".factory",
    settings_name="settings.json",
    script="engramory_droid_hook.py",
    hooks=(("PreToolUse", "Create|Edit|ApplyPatch"), ("PostToolUse", "Execute|Read"), ("SessionStart", None)),
    tools={"PreToolUse": ("Create", "Edit", "ApplyPatch"), "PostToolUse": ("Execute", "Read")},
    handler=core.command_handler(TIMEOUT),
    seconds=core.timeout_seconds(60),
    note="droid reads settings.json when a session starts: start a new session for the hooks to apply.",
)


install, uninstall, check = core.verbs(SPEC)
