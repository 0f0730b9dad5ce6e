#!/usr/bin/env python3
"""Hermes shell hook (pre_tool_call, matcher "write_file|patch"): print a block directive
for an edit that would grow the memory index past its hard cap; print nothing otherwise.

Runs from any copy of the bundle as `python3 -I -S <this file>`: it puts the bundle root
(the folder above hooks/) on sys.path itself. Exit 0 whatever happens: Hermes reads only
stdout, and a broken copy must not block the user's tools.
"""

import os
import sys

try:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    from engramory.hosts.hermes import main
except BaseException as exc:  # noqa: BLE001 - a broken copy must not block the user's edits
    sys.stderr.write("engramory hermes guard: cannot load the bundle, tool allowed: %r\n" % (exc,))
    raise SystemExit(0) from None

raise SystemExit(main())
