"""One index against the window of the host that loads it: its verdict (OK, WARN, OVER), its
numbers in the host's unit, its caps and the entries that fall outside, as `engramory check`
reports them (engramory.commands.check). The file size is looked at before reading: an index
larger than the read limit is judged from its size alone."""

from __future__ import annotations

from engramory.config import window_problems
from engramory.describe import read_index
from engramory.exitcodes import EX_OK, EX_OVER, EX_WARN
from engramory.size import OK, OVER, WARN
from engramory.size import n as _n
from engramory.store.secrets import quote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from engramory.size import Window

EXIT = {OK: EX_OK, WARN: EX_WARN, OVER: EX_OVER}


def check_file(path: str, env: Mapping[str, str] | None = None, window: Window | None = None) -> dict[str, Any]:
    """The result for one index, counted as its host counts it (`window`; default Claude
    Code's). Raises OSError when it cannot be read."""
    r = read_index(path, env, window, show=5, strict=True)
    assert r is not None
    status = r.status
    if status == OK and window_problems(r.caps):  # a cap above the window no longer protects (config.py)
        status = WARN
    if status == OK and r.not_utf8 is not None:  # the host reads U+FFFD: the entry is garbled
        status = WARN
    return {
        "path": path,
        "status": status,
        "lines": r.lines,
        "units": r.units,
        "unit": r.unit,
        "bytes": r.nbytes,
        "caps": r.caps.as_dict(),
        "outside_window": [{"line": n, "text": quote(t)} for n, t in r.outside],
        "notes": r.notes,
        "not_utf8": None if r.not_utf8 is None else {"byte": r.not_utf8[0], "line": r.not_utf8[1]},
    }



def describe(r: dict[str, Any]) -> str:
    c = r["caps"]
    unit = r["unit"]
    lines = "lines not counted (too large to read whole)" if r["lines"] is None else "%s lines" % _n(r["lines"])
    size = "%s%s %s" % ("at least " if r["lines"] is None and unit != "bytes" else "", _n(r["units"]), unit)
    if unit != "bytes":
        size += " (%s bytes)" % _n(r["bytes"])
    text = "%s: %s: %s, %s (warn %s lines / %s %s, hard %s / %s)" % (
        r["status"], r["path"], lines, size,
        _n(c["warn_lines"]), _n(c["warn_bytes"]), unit, _n(c["hard_lines"]), _n(c["hard_bytes"]),
    )
    if r["status"] == OVER:
        text += "; the host does not load what is past the window: compact it now"
        if r["outside_window"]:
            first = r["outside_window"][0]
            text += " (first entry outside: line %d %s)" % (first["line"], first["text"])
    elif r["status"] == WARN and (r["units"] > c["warn_bytes"] or (r["lines"] or 0) > c["warn_lines"]):
        text += "; plan a compaction pass soon"
    bad = r.get("not_utf8")
    if bad:
        text += ("; byte %s (line %d) is not UTF-8: the host reads U+FFFD there, so that entry is garbled; "
                 "save the file as UTF-8 (`engramory doctor` lists every such byte)" % (_n(bad["byte"]), bad["line"]))
    return text

