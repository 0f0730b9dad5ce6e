"""What every memory_edit shares: the journal transaction it runs in (the store lock, a
shorter wait than the CLI's: a model call must not hang), what a refusal over the caps says to
do through the tools, and the receipt (path, sha256, the index line and the index size, the
journal entry and how to undo it)."""

from __future__ import annotations

import os

from engramory import guard
from engramory.curate import index as curate_index
from engramory.curate import notes
from engramory.mcp import paths
from engramory.mcp.result import Answer
from engramory.size import n as _n
from engramory.store import journal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

LOCK_TIMEOUT = 10.0  # seconds to wait for another writer of the store; then "busy, call again"
ROOM = ("through this server, make room first: memory_edit delete of a note no longer needed archives it and "
        "drops its index line (undoable), or memory_edit str_replace of a long /memories/MEMORY.md line with a "
        "shorter one; then")
RETRY = ROOM + " call memory_edit again"


def transaction(root: str, command: str, *shown: str) -> journal.Transaction:
    return journal.transaction(root, "mcp", [command, *shown], timeout=LOCK_TIMEOUT)



def index_facts(root: str, irel: str, data: bytes | None, rel: str | None = None) -> dict[str, Any]:
    """The index as the receipt tells it: size in the host's unit against its caps, sha256,
    and (for `rel`) the line that is the note's pointer."""
    win = curate_index.window()
    caps, _ = guard.caps_for(os.path.join(root, irel), None, win)
    lines, units = win.measure(data or b"")
    out: dict[str, Any] = {"path": paths.shown(irel), "lines": lines, "units": units, "unit": win.unit,
                           "hard_lines": caps.hard_lines, "hard_units": caps.hard_bytes,
                           "sha256": journal.sha256(data) if data is not None else None}
    if rel is not None and data is not None:
        index = notes.IndexLines(data)
        found = index.pointer_lines(rel)
        out["line"] = found[0] + 1 if found else None
        out["text"] = index.lines[found[0]].rstrip("\r\n") if found else None
    return out


def answer(command: str, lines: list[str], data: dict[str, Any], index: dict[str, Any],
           entry: journal.Entry | None, warnings: list[str]) -> Answer:
    text = list(lines)
    if index.get("line"):
        text.append("pointer: %s:%d: %s" % (index["path"], index["line"], index["text"]))
    text.append("index %s: %s lines / %s %s (hard cap %s / %s)" % (
        index["path"], _n(index["lines"]), _n(index["units"]), index["unit"], _n(index["hard_lines"]),
        _n(index["hard_units"])))
    if entry is None:
        text.append("nothing changed on disk")
    elif entry.undoable:
        text.append("journal entry %d: `engramory undo %d` (from a shell) takes it back byte for byte"
                    % (entry.id, entry.id))
    else:
        text.append("journal entry %d: it cannot be undone (%s)" % (entry.id, entry.undo_blocker()))
    text.extend("warning: " + w for w in warnings)
    out = dict(data, ok=True, command=command, index=index, warnings=warnings,
               entry=entry.id if entry else None, undoable=bool(entry and entry.undoable),
               undo="engramory undo %d" % entry.id if entry and entry.undoable else None)
    return Answer("\n".join(text), out)
