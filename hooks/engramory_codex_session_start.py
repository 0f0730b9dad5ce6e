#!/usr/bin/env python3
"""Codex CLI SessionStart hook: one short notice when a known memory index starts the session past its caps; nothing otherwise.

Runs from any copy of the bundle as `python3 -I -S <this file>`: it puts the bundle root (the
folder above hooks/) on sys.path itself. Exit 0 whatever happens: Codex reads exit 2 as a
block, and a broken copy must not block the user's tools.
"""

import os
import sys

try:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    from engramory.hosts.codex import session_start_main
except BaseException as exc:  # noqa: BLE001 - a broken copy must not block the user's tools
    sys.stderr.write("engramory codex hook: cannot load the bundle, call allowed: %r\n" % (exc,))
    raise SystemExit(0) from None

raise SystemExit(session_start_main())
