#!/usr/bin/env python3
"""Kilo Code CLI guard: the plugin engramory.js runs `python3 -I -S <this file>` with its question
as JSON on stdin (before write, edit and apply_patch; after bash; at session start) and
reads one JSON answer: `{"deny": reason}` denies, anything else lets the tool run.

Runs from any copy of the bundle as `python3 -I -S <this file> <event>`: it puts the bundle
root (the folder above hooks/) on sys.path itself; engramory.hosts.run does the rest (bounded
stdin, the host's answer, and fail open: exit 0 whatever happens).
"""

import sys

ENTRY = {}

try:
    sys.path.insert(0, __file__.rsplit("/", 2)[0] if __file__.count("/") >= 2 else "..")
    from engramory.hosts import finish, run
except BaseException as exc:  # noqa: BLE001 - a broken copy must not block the user
    sys.stdout.write("{}\n")
    sys.stderr.write("engramory kilo hook: cannot load the bundle, allowed: %r\n" % (exc,))
    raise SystemExit(0) from None

finish(run("kilo", ENTRY.get(sys.argv[1] if len(sys.argv) > 1 else "", "respond")))
