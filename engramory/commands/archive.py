"""`engramory archive NAME... [--root ROOT]`: move notes into archive/ and drop their pointers,
in one journaled step; `move_main` is `engramory restore`'s too (engramory.curate.operations.move)."""

from __future__ import annotations

import sys

from engramory.commands import parser
from engramory.curate import common, notes, operations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


def move_main(argv: Sequence[str] | None, restoring: bool) -> int:
    cmd = "restore" if restoring else "archive"
    p = parser.curation(cmd, (
        "Move notes back from archive/ and add their pointers under their type's heading in MEMORY.md "
        "(refused when the index would pass its hard cap)." if restoring else
        "Move notes into archive/ (kept on disk, searchable, out of the index) and drop their pointers "
        "from MEMORY.md.") + " The notes' bytes are not changed. [[links]] in other notes that point at "
        "them are reported. One journaled step for all the names.")
    p.add_argument("names", nargs="+", metavar="NAME",
                   help="note names (file names, with or without .md); a last argument containing '/' is ROOT")
    p.add_argument("--root", help="the store folder (default: the project's auto-memory folder)")
    p.add_argument("--no-undo", action="store_true", help=common.NO_UNDO_HELP)
    p.add_argument("--dry-run", action="store_true", help="show what would move; write nothing")
    p.add_argument("--json", action="store_true", help="print the receipt as JSON")
    raw = list(sys.argv[1:] if argv is None else argv)
    args = p.parse_args(raw)
    names_in, root_arg = notes.split_names(args.names)
    if not names_in:
        p.error("name at least one note")

    return common.run(args.json, common.dry_run_or(lambda: operations.move(args, raw, names_in, root_arg, restoring)))


def main(argv: Sequence[str] | None = None) -> int:
    return move_main(argv, restoring=False)


if __name__ == "__main__":
    raise SystemExit(main())
