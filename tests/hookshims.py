"""The hook entry scripts installs name, as shims of the generic one (issue 20).

Every host now runs hooks/engramory_hook.py <host> [event]. The files that older installs,
users' settings, the Claude Code plugin (hooks/hooks.json) and install manifests name stay,
each rendered from TEMPLATE below: the generic script's loader, then engramory.hosts.main with
the host (and, for a file wired to one event, that event). tests/hosts/test_hook_entry.py holds every
file to its rendering byte for byte. After changing the template or a row:

    python3 -m tests.hookshims --write
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import List, Optional, Tuple

from engramory import hosts

HOOKS = Path(__file__).resolve().parent.parent / "hooks"

# file -> the host, the event it is wired to (None: its command passes the event, or the host
# reads it from the payload), and what it is for
SHIMS: List[Tuple[str, str, Optional[str], str]] = [
    ('engramory_index_guard.py', 'claude', 'PreToolUse',
     'Claude Code PreToolUse hook (matcher Edit|Write|MultiEdit): deny an edit that would grow '
     'the memory index past its hard cap; always allow one that shrinks it.'),
    ('engramory_post_tool.py', 'claude', 'PostToolUse',
     'Claude Code PostToolUse hook (matcher: Bash, PowerShell, MCP tools): after a tool that '
     'can write files without Edit/Write ran, tell the model when a known memory index is now '
     'over its hard cap. Silent otherwise, and cheap when nothing changed (one stat per '
     'index).'),
    ('engramory_session_start.py', 'claude', 'SessionStart',
     'Claude Code SessionStart hook: one short notice when a known memory index starts the '
     'session past its caps; nothing otherwise.'),
    ('engramory_cursor_guard.py', 'cursor', None,
     'Cursor preToolUse hook: deny an edit that would grow the memory index past its hard cap '
     '(JSON `permission: deny` and exit 2); otherwise print `{}` and exit 0.'),
    ('engramory_hermes_shell_hook.py', 'hermes', None,
     'Hermes shell hook (pre_tool_call, matcher "write_file|patch"): print a block directive '
     'for an edit that would grow the memory index past its hard cap; print nothing otherwise.'),
    ('engramory_codex_guard.py', 'codex', 'PreToolUse',
     'Codex CLI PreToolUse hook (matcher apply_patch|Bash): deny an apply_patch (or a shell '
     'apply_patch heredoc) that would grow a memory index past its hard cap, in the one shape '
     'Codex honours; print nothing otherwise.'),
    ('engramory_codex_post_tool.py', 'codex', 'PostToolUse',
     'Codex CLI PostToolUse hook (matcher Bash): after a shell command, tell the model when a '
     'known memory index is now over its hard cap; silent otherwise.'),
    ('engramory_codex_session_start.py', 'codex', 'SessionStart',
     'Codex CLI SessionStart hook: one short notice when a known memory index starts the '
     'session past its caps; nothing otherwise.'),
    ('engramory_gemini_hook.py', 'gemini', None,
     'Gemini CLI hook (BeforeTool on write_file|replace|run_shell_command, AfterTool and '
     'SessionStart; engramory.hosts.gemini dispatches on `hook_event_name`): deny an edit that '
     'would grow a memory index past its hard cap with `{"decision":"deny","reason":...}`; '
     'after a tool or at session start, tell the model when an index is past its caps. Prints '
     'nothing otherwise.'),
    ('engramory_qwen_hook.py', 'qwen', None,
     'Qwen Code hook: PreToolUse on write_file|edit (the guard: deny an edit that would grow a '
     'memory index past its hard cap), PostToolUse on run_shell_command and SessionStart '
     '(notices).'),
    ('engramory_droid_hook.py', 'droid', None,
     'Factory droid hook: PreToolUse on Create|Edit|ApplyPatch (the guard: deny an edit that '
     'would grow a memory index past its hard cap), PostToolUse on Execute and SessionStart '
     '(notices).'),
    ('engramory_copilot_hook.py', 'copilot', None,
     'GitHub Copilot CLI hook (native dialect): preToolUse (the guard, for create, edit and '
     'apply_patch), postToolUse after bash and sessionStart (notices). Copilot reads exit 1 as '
     'a deny and runs this for every tool call, so nothing here ever exits non-zero.'),
    ('engramory_opencode_hook.py', 'opencode', None,
     'opencode guard: the plugin engramory.js runs `python3 -I -S <this file>` with its '
     'question as JSON on stdin (before write, edit and apply_patch; after bash; at session '
     'start) and reads one JSON answer: `{"deny": reason}` denies, anything else lets the tool '
     'run.'),
    ('engramory_kilo_hook.py', 'kilo', None,
     'Kilo Code CLI guard: the plugin engramory.js runs `python3 -I -S <this file>` with its '
     'question as JSON on stdin (before write, edit and apply_patch; after bash; at session '
     'start) and reads one JSON answer: `{"deny": reason}` denies, anything else lets the tool '
     'run.'),
    ('engramory_cline_hook.py', 'cline', None,
     'Cline guard: the plugin engramory.js runs `python3 -I -S <this file>` with its question '
     'as JSON on stdin (before editor and apply_patch; after run_commands; when a run starts) '
     'and reads one JSON answer: `{"deny": reason}` denies, anything else lets the tool run.'),
    ('engramory_openclaw_hook.py', 'openclaw', None,
     'OpenClaw guard: the plugin ~/.openclaw/engramory-plugin/index.mjs runs `python3 -I -S '
     '<this file>` with its question as JSON on stdin (before write, edit and apply_patch) and '
     'reads one JSON answer: `{"deny": reason}` denies, anything else lets the tool run.'),
]

# the hosts whose hook must answer on stdout even when the bundle cannot load: their FAIL_OPEN,
# read from the registry (hooks/engramory_hook.py, which cannot import it, keeps a copy that
# tests/hosts/test_hook_entry.py holds to this)
ANSWER_WHEN_BROKEN = {name: str(hosts.load(name).FAIL_OPEN) for name in hosts.names()
                      if getattr(hosts.load(name), "FAIL_OPEN", "")}

TEMPLATE = '''#!/usr/bin/env python3
"""{doc}

A shim of hooks/engramory_hook.py, kept because installs and settings name this file
(rendered from tests/hookshims.py). Runs from any copy of the bundle as `python3 -I -S
<this file>{usage}` and fails open: exit 0 whatever happens of ours.
"""

import sys


def _bundle_root(resolve: bool) -> str:
    if resolve or sys.platform == "win32" or "/" not in __file__:
        import os.path

        return os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    parts = __file__.rsplit("/", 2)
    return (parts[0] or "/") if len(parts) == 3 else "."


try:
    sys.path.insert(0, _bundle_root(False))
    try:
        from engramory.hosts import finish, main
    except ImportError:  # this file is a link from outside the bundle: follow it
        sys.path[0] = _bundle_root(True)
        from engramory.hosts import finish, main
except BaseException as exc:  # noqa: BLE001 - a broken copy must not block the user
{answer}    sys.stderr.write("engramory {host} hook: cannot load the bundle, allowed: %r\\n" % (exc,))
    raise SystemExit(0) from None

finish(main({args}))
'''


def render(name: str) -> str:
    """The text hooks/<name> must hold."""
    host, event, doc = {file: (h, e, d) for file, h, e, d in SHIMS}[name]
    if event is None:
        args = '["%s"] + (sys.argv[2:] if sys.argv[0] == "-c" else sys.argv[1:])' % host
        usage = " [event]"
    else:
        args = '["%s", "%s"]' % (host, event)
        usage = ""
    answer = '    sys.stdout.write("%s\\n")\n' % ANSWER_WHEN_BROKEN[host] if host in ANSWER_WHEN_BROKEN else ""
    return TEMPLATE.format(doc=textwrap.fill(doc, 92), usage=usage, answer=answer, host=host, args=args)


def main(argv: List[str]) -> int:
    """--write: render every shim into hooks/; --check (default): exit 1 when one differs."""
    stale = [name for name, _, _, _ in SHIMS if (HOOKS / name).read_text(encoding="utf-8") != render(name)]
    if "--write" in argv:
        for name in stale:
            (HOOKS / name).write_text(render(name), encoding="utf-8")
        print("rendered %d of %d shims" % (len(stale), len(SHIMS)))
        return 0
    for name in stale:
        print("hooks/%s differs from its rendering: python3 -m tests.hookshims --write" % name)
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
