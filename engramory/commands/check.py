"""`engramory check INDEX...`: is this index inside its caps?

One line per file on stdout, starting with OK:, WARN: or OVER:, with lines, size (in the
host's unit: UTF-16 units for Claude Code) and the
caps. Exit 0 (all OK), 1 (some WARN), 2 (some OVER); 64 for a usage error and 66 when a file
cannot be read, so "could not check" is never mistaken for "fine". The file size is looked at
before reading: an index larger than the read limit is judged from its size alone.
"""

from __future__ import annotations

import sys

from engramory import hosts
from engramory.commands.parser import Parser
from engramory.doctor.check import EXIT, check_file, describe
from engramory.exitcodes import EX_NOINPUT
from engramory.size import OK, OVER, WARN
from engramory.store.secrets import emit, emit_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


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
