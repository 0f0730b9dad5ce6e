#!/usr/bin/env python3
"""opencode guard: the plugin hooks/opencode/engramory.js runs `python3 -I -S <this file>` with
its question as JSON on stdin (before write, edit and apply_patch; after bash; at session
start) and reads one JSON answer on stdout. A deny is `{"deny": reason}`; anything else lets
the tool run.

Runs from any copy of the bundle: it puts the bundle root (the folder above hooks/) on
sys.path itself. Exit 0 and `{}` whatever happens: a broken copy must not block the user.
"""

import sys

try:
    sys.path.insert(0, __file__.rsplit("/", 2)[0] if __file__.count("/") >= 2 else "..")
    from engramory.hosts.opencode import main
except BaseException as exc:  # noqa: BLE001
    sys.stdout.write("{}\n")
    sys.stderr.write("engramory guard: cannot load the bundle, edit allowed: %r\n" % (exc,))
    raise SystemExit(0) from None

raise SystemExit(main())
