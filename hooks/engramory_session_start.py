#!/usr/bin/env python3
"""Claude Code SessionStart hook: one short notice when a known memory index starts the
session past its caps; nothing otherwise.

Runs from any copy of the bundle as `python3 -I -S <this file>`: it puts the bundle root (the
folder above hooks/) on sys.path itself. Exit 0 whatever happens.
"""

import os
import sys

try:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    from engramory.backstop import session_start_main
except BaseException as exc:  # noqa: BLE001 - a broken copy must not get in the user's way
    sys.stderr.write("engramory SessionStart hook: cannot load the bundle, skipped: %r\n" % (exc,))
    raise SystemExit(0) from None

raise SystemExit(session_start_main())
