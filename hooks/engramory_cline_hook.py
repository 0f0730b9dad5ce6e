#!/usr/bin/env python3
"""Cline guard: the plugin engramory.js runs `python3 -I -S <this file>` with its question as
JSON on stdin (before editor and apply_patch; after run_commands; when a run starts) and
reads one JSON answer: `{"deny": reason}` denies, anything else lets the tool run.

A shim of hooks/engramory_hook.py, kept because installs and settings name this file
(rendered from tests/hookshims.py). Runs from any copy of the bundle as `python3 -I -S
<this file> [event]` and fails open: exit 0 whatever happens of ours.
"""

import sys


def _bundle_root(resolve: bool) -> str:
    if resolve or sys.platform == "win32" or "/" not in __file__:
        import os.path

        return os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    parts = __file__.rsplit("/", 2)
    return (parts[0] or "/") if len(parts) == 3 else "."


try:
    sys.path.insert(0, _bundle_root(False))
    try:
        from engramory.hosts import finish, main
    except ImportError:  # this file is a link from outside the bundle: follow it
        sys.path[0] = _bundle_root(True)
        from engramory.hosts import finish, main
except BaseException as exc:  # noqa: BLE001 - a broken copy must not block the user
    sys.stdout.write("{}\n")
    sys.stderr.write("engramory cline hook: cannot load the bundle, allowed: %r\n" % (exc,))
    raise SystemExit(0) from None

finish(main(["cline"] + (sys.argv[2:] if sys.argv[0] == "-c" else sys.argv[1:])))
