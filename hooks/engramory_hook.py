#!/usr/bin/env python3
"""The engramory hook, for every host: `python3 -I -S <this file> <host> [event]`.

`<host>` is a name of the registry (`engramory hosts` lists them) and `[event]` the host's own
event name (PreToolUse, postToolUse, ...), which the host module's ENTRIES table maps to an
entry point (engramory.hosts.main, on engramory.hosts.run: bounded stdin, fail open).

Runs from any copy of the bundle: it puts the bundle root (the folder above hooks/) on
sys.path itself, found by string operations first because importing `os` costs an eighth of
this process; only a link to this file from elsewhere needs it. Run directly, or through an
installer's `-c` launcher (which leaves `-c` and this file's path in front of the arguments).
"""

import sys

# The hosts that need an answer on stdout even when the bundle cannot load (the module's
# FAIL_OPEN, which cannot be read then); tests/hosts/test_hook_entry.py holds this to the registry.
ANSWER_WHEN_BROKEN = {"cline": "{}", "cursor": "{}", "kilo": "{}", "openclaw": "{}", "opencode": "{}"}


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
    _args = sys.argv[2:] if sys.argv[0] == "-c" else sys.argv[1:]
    if _args and _args[0] in ANSWER_WHEN_BROKEN:
        sys.stdout.write(ANSWER_WHEN_BROKEN[_args[0]] + "\n")
    sys.stderr.write("engramory hook: cannot load the bundle, allowed: %r\n" % (exc,))
    raise SystemExit(0) from None

finish(main(sys.argv[2:] if sys.argv[0] == "-c" else sys.argv[1:]))
