#!/usr/bin/env python3
"""Gemini CLI hook (BeforeTool on write_file|replace|run_shell_command, AfterTool, SessionStart):
deny an edit that would grow a memory index past its hard cap with
`{"decision":"deny","reason":...}`; after a tool or at session start, tell the model when an
index is past its caps. Prints nothing otherwise.

Runs from any copy of the bundle as `python3 -I -S <this file>`: it puts the bundle root (the
folder above hooks/) on sys.path itself. Exit 0 whatever happens: Gemini reads any other
exit code with text as a deny of every call.
"""

import os
import sys

try:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    from engramory.hosts.gemini import main
except BaseException as exc:  # noqa: BLE001 - a broken copy must not block the user's tools
    sys.stderr.write("engramory gemini hook: cannot load the bundle, call allowed: %r\n" % (exc,))
    raise SystemExit(0) from None

raise SystemExit(main())
