#!/usr/bin/env python3
"""Claude Code PostToolUse hook (matcher: Bash, PowerShell, MCP tools): after a tool that can
write files without Edit/Write ran, tell the model when a known memory index is now over its
hard cap. Silent otherwise, and cheap when nothing changed (one stat per index).

Runs from any copy of the bundle, installed or not, as `python3 -I -S <this file>`: it puts
the bundle root (the folder above hooks/) on sys.path itself, found by string operations
first because importing `os` costs an eighth of this process (engramory/scope.py); only a
link to this file from elsewhere needs it. engramory.hosts.run does the rest: bounded stdin,
the host's answer, and fail open (exit 0 whatever happens).
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
        from engramory.hosts import finish
        from engramory.notices import post_tool_main
    except ImportError:  # this file is a link from outside the bundle: follow it
        sys.path[0] = _bundle_root(True)
        from engramory.hosts import finish
        from engramory.notices import post_tool_main
except BaseException as exc:  # noqa: BLE001 - a broken copy must not block the user
    sys.stderr.write("engramory PostToolUse hook: cannot load the bundle, skipped: %r\n" % (exc,))
    raise SystemExit(0) from None

finish(post_tool_main())
