#!/usr/bin/env python3
"""Codex CLI PreToolUse hook (matcher apply_patch|Bash): deny an apply_patch (or a shell apply_patch heredoc) that would grow a memory index past its hard cap, in the one shape Codex honours; print nothing otherwise.

Runs from any copy of the bundle as `python3 -I -S <this file>`: it puts the bundle root (the
folder above hooks/) on sys.path itself, by string operations first (importing `os` costs an
eighth of this process). engramory.hosts.run does the rest: bounded stdin, the answer, and
fail open. Exit 0 whatever happens: Codex reads exit 2 as a block of the call.
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
        from engramory.hosts import finish, run
    except ImportError:  # this file is a link from outside the bundle: follow it
        sys.path[0] = _bundle_root(True)
        from engramory.hosts import finish, run
except BaseException as exc:  # noqa: BLE001 - a broken copy must not block the user's tools
    sys.stderr.write("engramory codex hook: cannot load the bundle, call allowed: %r\n" % (exc,))
    raise SystemExit(0) from None

finish(run("codex"))
