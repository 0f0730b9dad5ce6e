#!/usr/bin/env python3
"""Factory droid hook (PreToolUse on Create|Edit, PostToolUse on Execute,
SessionStart): `python3 -I -S <this file> <event>`. The guard denies an edit that would grow
a memory index past its hard cap; the notices tell the model when an index is over it.

Runs from any copy of the bundle: it puts the bundle root (the folder above hooks/) on
sys.path itself. Exit 0 whatever happens: a broken copy must not block the user's edits.
"""

import sys

try:
    sys.path.insert(0, __file__.rsplit("/", 2)[0] if __file__.count("/") >= 2 else "..")
    from engramory.hosts.claudelike import main
except BaseException as exc:  # noqa: BLE001
    sys.stderr.write("engramory guard: cannot load the bundle, tool call allowed: %r\n" % (exc,))
    raise SystemExit(0) from None

raise SystemExit(main("engramory.hosts.droid"))
