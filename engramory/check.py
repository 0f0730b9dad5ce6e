"""`engramory check INDEX...`: is this index inside its caps?

One line per file on stdout, starting with OK:, WARN: or OVER:, with lines, size (in the
host's unit: UTF-16 units for Claude Code) and the
caps. Exit 0 (all OK), 1 (some WARN), 2 (some OVER); 64 for a usage error and 66 when a file
cannot be read, so "could not check" is never mistaken for "fine". The file size is looked at
before reading: an index larger than the read limit is judged from its size alone.
"""

from __future__ import annotations

import sys

from engramory.cliutil import EX_NOINPUT, Parser
from engramory.config import window_problems
from engramory.describe import read_index
from engramory.excerpt import emit, emit_json, quote
from engramory.size import OK, OVER, WARN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from engramory.size import Window

EXIT = {OK: 0, WARN: 1, OVER: 2}


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


def _n(value: int) -> str:
    return "{:,}".format(value)


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


def main(argv: Sequence[str] | None = None) -> int:
    parser = Parser(
        prog="engramory check",
        description="Check memory index files against their line and size caps, counted the way "
        "the host that loads them counts (the same count and caps the hook uses): Claude Code "
        "counts UTF-16 units of the trimmed text, without frontmatter or HTML comments.",
        epilog="Exit status: 0 all OK, 1 a file is past its warn cap, 2 a file is over its "
        "hard cap, 64 usage error, 66 a file could not be read.",
    )
    parser.add_argument("paths", nargs="+", metavar="INDEX", help="path to a MEMORY.md index")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    from engramory import hosts

    parser.add_argument(
        "--host", default="claude", choices=hosts.names(),
        help="the host whose load window to count by (default: claude; `engramory hosts` lists them)",
    )
    args = parser.parse_args(argv)
    window = hosts.load(args.host).window()

    results = []
    errors = []
    for path in args.paths:
        try:
            results.append(check_file(path, None, window))
        except OSError as exc:
            reason = exc.strerror or exc.__class__.__name__
            errors.append({"path": path, "error": reason})
            emit("engramory check: cannot read %s: %s; check the path and its permissions\n" % (path, reason),
                 sys.stderr)
    worst = max((EXIT[r["status"]] for r in results), default=0)
    code = EX_NOINPUT if errors else worst
    if args.json:
        status = [OK, WARN, OVER][worst] if not errors else "ERROR"
        emit_json({"status": status, "exit": code, "files": results, "errors": errors}, indent=2)
    else:
        for r in results:
            emit(describe(r) + "\n")
            for note in r["notes"]:
                emit("engramory check: note: %s\n" % note, sys.stderr)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
