#!/usr/bin/env python3
"""Claude Code PreToolUse hook (matcher Edit|Write|MultiEdit): deny an edit that would grow
the memory index past its hard cap; always allow one that shrinks it.

Runs from any copy of the bundle, installed or not, as `python3 -I -S <this file>`: it puts
the bundle root (the folder above hooks/) on sys.path itself. Exit 0 whatever happens.
"""

import os
import sys

try:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    from engramory.hosts.claude import main
except BaseException as exc:  # noqa: BLE001 - a broken copy must not block the user's edits
    sys.stderr.write("engramory guard: cannot load the bundle, edit allowed: %r\n" % (exc,))
    raise SystemExit(0) from None

raise SystemExit(main())
