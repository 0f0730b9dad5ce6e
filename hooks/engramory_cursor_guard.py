#!/usr/bin/env python3
"""Cursor preToolUse hook: deny an edit that would grow the memory index past its hard cap
(JSON `permission: deny` and exit 2); otherwise print `{}` and exit 0.

Runs from any copy of the bundle as `python3 -I -S <this file>`: it puts the bundle root
(the folder above hooks/) on sys.path itself. A broken copy allows the edit.
"""

import os
import sys

try:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    from engramory.hosts.cursor import main
except BaseException as exc:  # noqa: BLE001 - a broken copy must not block the user's edits
    sys.stderr.write("engramory cursor guard: cannot load the bundle, edit allowed: %r\n" % (exc,))
    sys.stdout.write("{}\n")
    raise SystemExit(0) from None

raise SystemExit(main())
