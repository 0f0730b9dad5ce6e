#!/usr/bin/env python3
"""Codex CLI PreToolUse hook (matcher apply_patch|Bash): deny an apply_patch (or a shell
apply_patch heredoc) that would grow a memory index past its hard cap, in the one shape
Codex honours; print nothing otherwise.

A shim of hooks/engramory_hook.py, kept because installs and settings name this file
(rendered from tests/hookshims.py). Runs from any copy of the bundle as `python3 -I -S
<this file>` and fails open: exit 0 whatever happens of ours.
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
    sys.stderr.write("engramory codex hook: cannot load the bundle, allowed: %r\n" % (exc,))
    raise SystemExit(0) from None

finish(main(["codex", "PreToolUse"]))
