#!/usr/bin/env python3
"""Factory droid hook: PreToolUse on Create|Edit|ApplyPatch (the guard: deny an edit that
would grow a memory index past its hard cap), PostToolUse on Execute and SessionStart
(notices).

Runs from any copy of the bundle as `python3 -I -S <this file> <event>`: it puts the bundle
root (the folder above hooks/) on sys.path itself; engramory.hosts.run does the rest (bounded
stdin, the host's answer, and fail open: exit 0 whatever happens).
"""

import sys

ENTRY = {"PreToolUse": "respond", "PostToolUse": "post", "SessionStart": "start"}

try:
    sys.path.insert(0, __file__.rsplit("/", 2)[0] if __file__.count("/") >= 2 else "..")
    from engramory.hosts import finish, run
except BaseException as exc:  # noqa: BLE001 - a broken copy must not block the user
    sys.stderr.write("engramory droid hook: cannot load the bundle, allowed: %r\n" % (exc,))
    raise SystemExit(0) from None

finish(run("droid", ENTRY.get(sys.argv[1] if len(sys.argv) > 1 else "", "respond")))
