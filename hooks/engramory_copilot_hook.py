#!/usr/bin/env python3
"""GitHub Copilot CLI hook (preToolUse, postToolUse, sessionStart; native dialect):
`python3 -I -S <this file> <event>`. The guard denies a `create`, `edit` or `apply_patch`
that would grow a memory index past its hard cap; the notices tell the model when an index is
over it.

Exit 0 whatever happens: Copilot reads exit 1 as a deny and runs this hook for every tool
call, so a broken copy must let everything through.
"""

import sys

try:
    sys.path.insert(0, __file__.rsplit("/", 2)[0] if __file__.count("/") >= 2 else "..")
    from engramory.hosts.copilot import main
except BaseException as exc:  # noqa: BLE001
    sys.stderr.write("engramory guard: cannot load the bundle, tool call allowed: %r\n" % (exc,))
    raise SystemExit(0) from None

raise SystemExit(main())
