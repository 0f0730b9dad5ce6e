#!/usr/bin/env python3
"""Claude Code PostToolUse hook (matcher: Bash, PowerShell, MCP tools): after a tool that can
write files without Edit/Write ran, tell the model when a known memory index is now over its
hard cap. Silent otherwise, and cheap when nothing changed (one stat per index).

Runs from any copy of the bundle as `python3 -I -S <this file>`: it puts the bundle root (the
folder above hooks/) on sys.path itself. Exit 0 whatever happens.
"""

import os
import sys

try:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    from engramory.backstop import post_tool_main
except BaseException as exc:  # noqa: BLE001 - a broken copy must not get in the user's way
    sys.stderr.write("engramory PostToolUse hook: cannot load the bundle, skipped: %r\n" % (exc,))
    raise SystemExit(0) from None

raise SystemExit(post_tool_main())
