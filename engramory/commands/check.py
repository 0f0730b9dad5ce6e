"""`engramory check [INDEX...]`: is this index inside its caps? A folder stands for its index;
with none given, this project's Claude Code auto-memory index is checked.

One line per file on stdout, starting with OK:, WARN: or OVER:, with lines, size (in the
host's unit: UTF-16 units for Claude Code) and the
caps. Exit 0 (all OK), 1 (some WARN), 2 (some OVER); 64 for a usage error and 66 when a file
cannot be read, so "could not check" is never mistaken for "fine". The file size is looked at
before reading: an index larger than the read limit is judged from its size alone.
"""

from __future__ import annotations

import os
import sys

from engramory import hosts, scope
from engramory.commands.parser import Parser
from engramory.doctor.check import EXIT, check_file, describe
from engramory.doctor.run import claude_memory_dir
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
    parser.add_argument("paths", nargs="*", metavar="INDEX",
                        help="path to a MEMORY.md index, or a store folder (its index is checked); "
                        "default: this project's Claude Code auto-memory index")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    parser.add_argument(
        "--host", default="claude", choices=hosts.names(),
        help="the host whose load window to count by (default: claude; `engramory hosts` lists them)",
    )
    args = parser.parse_args(argv)
    window = hosts.load(args.host).window()
    paths = _paths(args.paths)
    if paths is None:
        return EX_NOINPUT

    results = []
    errors = []
    for path in paths:
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


def _paths(given: list[str]) -> list[str] | None:
    """The index files to check: a folder stands for its index; none given, this project's
    Claude Code auto-memory index (said on stderr, as the doctor does). None: no default exists."""
    if not given:
        try:
            root = claude_memory_dir()
        except ValueError as exc:
            emit("engramory check: cannot tell this project's memory folder: %s; pass INDEX\n" % exc, sys.stderr)
            return None
        path = os.path.join(root, scope.index_name_for(root))
        emit("engramory check: no INDEX given; checking this project's Claude Code auto-memory index: %s\n" % path,
             sys.stderr)
        return [path]
    return [os.path.join(p, scope.index_name_for(p)) if os.path.isdir(p) else p for p in given]


if __name__ == "__main__":
    raise SystemExit(main())
