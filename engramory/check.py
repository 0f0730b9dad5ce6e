"""`engramory check INDEX...`: is this index inside its caps?

One line per file on stdout, starting with OK:, WARN: or OVER:, with lines, bytes and the
caps. Exit 0 (all OK), 1 (some WARN), 2 (some OVER); 64 for a usage error and 66 when a file
cannot be read, so "could not check" is never mistaken for "fine". The file size is looked at
before reading: an index larger than the read limit is judged from its size alone.
"""

from __future__ import annotations

import json
import os
import sys

from engramory.cliutil import EX_NOINPUT, Parser
from engramory.config import caps_for, window_problems
from engramory.excerpt import quote
from engramory.guard import READ_LIMIT
from engramory.size import OK, OVER, WARN, count_lines, lines_outside_window, verdict

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

EXIT = {OK: 0, WARN: 1, OVER: 2}
HEAD_READ = 1 << 20  # an index larger than this (40 times the byte cap) is read this far only


def check_file(path: str, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The result for one index. Raises OSError when it cannot be read."""
    caps, notes = caps_for(path, env)
    st = os.stat(path)
    if not os.path.isfile(path):
        raise IsADirectoryError(21, "not a regular file", path)
    lines: int | None
    outside: list[dict[str, Any]] = []
    if st.st_size > READ_LIMIT:
        lines = None
        nbytes = st.st_size
    elif st.st_size > HEAD_READ:
        # --- doctor (issue 11): far past any cap, the first MiB and the size prove enough ---
        lines = None
        nbytes = st.st_size
        with open(path, "rb") as f:
            data = f.read(HEAD_READ)
        for number, text in lines_outside_window(data, caps):
            if len(outside) == 5:
                break
            outside.append({"line": number, "text": quote(text)})
        # --- end doctor ---
    else:
        with open(path, "rb") as f:
            data = f.read()
        lines, nbytes = count_lines(data), len(data)
        for number, text in lines_outside_window(data, caps):
            if len(outside) == 5:
                break
            outside.append({"line": number, "text": quote(text)})
    status = verdict(lines, nbytes, caps)
    if status == OK and window_problems(caps):  # a cap above the window no longer protects (config.py)
        status = WARN
    return {
        "path": path,
        "status": status,
        "lines": lines,
        "bytes": nbytes,
        "caps": caps.as_dict(),
        "outside_window": outside,
        "notes": notes,
    }


def _n(value: int) -> str:
    return "{:,}".format(value)


def describe(r: dict[str, Any]) -> str:
    c = r["caps"]
    lines = "lines not counted (too large to read whole)" if r["lines"] is None else "%s lines" % _n(r["lines"])
    text = "%s: %s: %s, %s bytes (warn %s lines / %s bytes, hard %s / %s)" % (
        r["status"], r["path"], lines, _n(r["bytes"]),
        _n(c["warn_lines"]), _n(c["warn_bytes"]), _n(c["hard_lines"]), _n(c["hard_bytes"]),
    )
    if r["status"] == OVER:
        text += "; the host does not load what is past the window: compact it now"
        if r["outside_window"]:
            first = r["outside_window"][0]
            text += " (first entry outside: line %d %s)" % (first["line"], first["text"])
    elif r["status"] == WARN:
        text += "; plan a compaction pass soon"
    return text


def main(argv: Sequence[str] | None = None) -> int:
    parser = Parser(
        prog="engramory check",
        description="Check memory index files against their line and byte caps "
        "(the same count and caps the hook uses).",
        epilog="Exit status: 0 all OK, 1 a file is past its warn cap, 2 a file is over its "
        "hard cap, 64 usage error, 66 a file could not be read.",
    )
    parser.add_argument("paths", nargs="+", metavar="INDEX", help="path to a MEMORY.md index")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    args = parser.parse_args(argv)

    results = []
    errors = []
    for path in args.paths:
        try:
            results.append(check_file(path))
        except OSError as exc:
            reason = exc.strerror or exc.__class__.__name__
            errors.append({"path": path, "error": reason})
            sys.stderr.write(
                "engramory check: cannot read %s: %s; check the path and its permissions\n"
                % (path, reason)
            )
    worst = max((EXIT[r["status"]] for r in results), default=0)
    code = EX_NOINPUT if errors else worst
    if args.json:
        status = [OK, WARN, OVER][worst] if not errors else "ERROR"
        print(json.dumps({"status": status, "exit": code, "files": results, "errors": errors}, indent=2))
    else:
        for r in results:
            print(describe(r))
            for note in r["notes"]:
                sys.stderr.write("engramory check: note: %s\n" % note)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
