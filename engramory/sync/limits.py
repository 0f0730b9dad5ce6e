"""Whether a merged index still fits the window of the host that loads it.

The caps are the guard's own (guard.caps_for: the store's `.engramory.json`, then the
environment, then the window's limits), counted in Claude Code's window, whose auto-memory
folder is the default store: the same rule `engramory new` is held to."""

from __future__ import annotations

import os
import shlex

from engramory import guard
from engramory.size import claude_code_window
from engramory.size import n as _n


def over_cap(index_path: str, data: bytes) -> str | None:
    """A sentence with the numbers when `data`, as the index at `index_path`, is over its hard
    cap (what to do included), else None."""
    window = claude_code_window()
    caps, _ = guard.caps_for(index_path, None, window)
    lines, units = window.measure(data)
    over_lines = lines - caps.hard_lines
    over_units = units - caps.hard_bytes
    if over_lines <= 0 and over_units <= 0:
        return None
    by = []
    if over_lines > 0:
        by.append("%s line%s" % (_n(over_lines), "" if over_lines == 1 else "s"))
    if over_units > 0:
        by.append("%s %s" % (_n(over_units), window.unit))
    root = shlex.quote(os.path.dirname(index_path) or ".")
    return ("the merged index is %s lines and %s %s, over its hard cap of %s lines / %s %s by %s: the host "
            "would not load its tail. Nothing was dropped; make room with `engramory compact %s` (then "
            "`engramory compact %s --apply -`)" % (
                _n(lines), _n(units), window.unit, _n(caps.hard_lines), _n(caps.hard_bytes), window.unit,
                " and ".join(by), root, root))
