"""`engramory merge-index %O %A %B %L %P`: git's merge driver for a memory index, and
`engramory merge-index --resolve [INDEX]`: the repair of an index that went through another
merge (conflict markers, duplicate pointers)."""

from __future__ import annotations

import os
import sys

from engramory import fsutil, scope
from engramory.commands.parser import Parser
from engramory.exitcodes import EX_CONFLICT, EX_NOINPUT, EX_OK, EX_USAGE
from engramory.sync import indexmerge, limits, resolve

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from engramory.commands.parser import Parser

READ_LIMIT = 16 << 20  # an index past this is not one a host loads: merged by hand

DESCRIPTION = (
    "Three-way merge of a memory index keyed by the note each line points at, as git's merge "
    "driver: `engramory sync init` registers it as `merge-index %O %A %B %L %P` (base, ours - "
    "where the result is written -, theirs, conflict marker size, the path in the repository). "
    "Notes added on both sides are all kept, each pointer once; a note changed on both sides "
    "(or deleted on one and changed on the other) is a conflict, and all conflicts go into one "
    "marked block after the title line. Nothing is dropped: a result over the index's hard cap "
    "exits 1 with the numbers and the `engramory compact` that makes room. With --resolve, "
    "repairs an index that did not go through the driver.")
EPILOG = (
    "exit codes: 0 merged (or repaired) cleanly; 1 conflicts, or the result is over the cap (the "
    "message says what to do; the result holds every line); 64 usage error; 66 a file cannot be "
    "read (ours is left as it was).")


def _parser() -> Parser:

    p = Parser(prog="engramory merge-index", description=DESCRIPTION, epilog=EPILOG)
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="BASE OURS THEIRS [MARKER_SIZE] [PATH] as git passes them (%%O %%A %%B %%L %%P); "
                        "with --resolve: the index to repair (default: the project's auto-memory MEMORY.md)")
    p.add_argument("--resolve", action="store_true",
                   help="repair an index with conflict markers or duplicate pointers: the three-way result "
                        "where git still knows the two sides and their base, else the deduplicated union; "
                        "written through the journal (`engramory undo` takes it back)")
    p.add_argument("--dry-run", action="store_true", help="with --resolve: say what it would do, write nothing")
    p.add_argument("--json", action="store_true", help="print the outcome as one JSON document")
    return p


def _read(path: str) -> bytes:
    data, _ = scope.read_bounded(path, READ_LIMIT)
    if len(data) > READ_LIMIT:
        raise OSError(27, "larger than %s bytes: not an index a host loads; merge it by hand" % "{:,}".format(
            READ_LIMIT), path)
    return data


def _report(as_json: bool, obj: dict[str, object], lines: list[str]) -> None:
    if as_json:
        import json

        sys.stdout.write(json.dumps(obj, indent=2) + "\n")
    for line in lines:
        sys.stderr.write("engramory merge-index: %s\n" % line)


def drive(files: Sequence[str], as_json: bool) -> int:

    if len(files) < 3 or len(files) > 5:
        sys.stderr.write("engramory merge-index: give BASE OURS THEIRS [MARKER_SIZE] [PATH] (%d given); "
                         "see --help\n" % len(files))
        return EX_USAGE
    base_path, ours_path, theirs_path = files[:3]
    marker = files[3] if len(files) > 3 else "7"
    if not marker.isdigit() or not 1 <= int(marker) <= 200:
        sys.stderr.write("engramory merge-index: the marker size %r is not a number from 1 to 200\n" % marker[:20])
        return EX_USAGE
    name = files[4] if len(files) > 4 else "MEMORY.md"
    try:
        base, ours, theirs = _read(base_path), _read(ours_path), _read(theirs_path)
    except OSError as exc:
        _report(as_json, {"ok": False, "path": name, "error": str(exc)},
                ["%s: %s (%s); ours is left as it was: finish the merge by hand" % (
                    name, exc.strerror or exc, exc.filename)])
        return EX_NOINPUT
    result = indexmerge.merge(base, ours, theirs, int(marker))
    if result.data != ours:
        fsutil.write_atomic(ours_path, result.data)
    over = limits.over_cap(os.path.abspath(name), result.data)
    obj: dict[str, object] = {"ok": result.clean and over is None, "path": name, "entries": result.entries,
                              "conflicts": result.names(), "over_cap": over}
    lines = []
    if not result.clean:
        names = result.names()
        lines.append("%s: %d conflict%s (%s), all in one block after the title line: keep one version of "
                     "each, delete the markers and comment lines, then `git add %s`" % (
                         name, len(names), "" if len(names) == 1 else "s", ", ".join(names), name))
    if over is not None:
        lines.append("%s: %s" % (name, over))
    _report(as_json, obj, lines)
    return EX_OK if obj["ok"] else EX_CONFLICT


def main(argv: Sequence[str] | None = None) -> int:
    raw = list(sys.argv[1:] if argv is None else argv)
    if raw and not any(a.startswith("-") for a in raw):
        return drive(raw, False)  # as git runs it: no option parser to load, one process per merge
    args = _parser().parse_args(raw)
    if args.resolve:

        return resolve.main(args.files, args.dry_run, args.json)
    if args.dry_run:
        sys.stderr.write("engramory merge-index: --dry-run goes with --resolve\n")
        return EX_USAGE
    return drive(args.files, args.json)


if __name__ == "__main__":
    raise SystemExit(main())
