"""`engramory new [ROOT] --type T --description D [--body B] ...`: save one note and its
index pointer in one journaled step, with a receipt (engramory.curate.operations.new)."""

from __future__ import annotations

import sys

from engramory.commands import parser
from engramory.curate import common, operations
from engramory.store.reader import TYPES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    p = parser.curation("new", (
        "Save one durable fact as a note and add its pointer under the type's heading in MEMORY.md, "
        "in one atomic, journaled step. Refuses (changing nothing) a path-like or malformed name, a "
        "feedback/project note without --why and --how, a relative date in a project note, a secret, "
        "a note over its size cap, an index that would pass its hard cap, and a near-duplicate of an "
        "existing note of the same type (update that one instead, or --force). Prints a receipt: the "
        "note's path and sha256, and the pointer's line in MEMORY.md."))
    p.add_root("the store folder holding MEMORY.md (default: this project's Claude Code auto-memory folder)")
    p.add_argument("--type", required=True, choices=TYPES, help="user, feedback, project or reference")
    p.add_argument("--description", required=True,
                   help="one line: the recall key a future session reads in the index")
    p.add_argument("--name", help="file name without .md: lowercase letters, digits, single hyphens "
                                  "(default: made from the description)")
    p.add_argument("--body", help="the note's text (default: read from stdin when it is not a terminal; '-' forces stdin)")
    p.add_argument("--why", help="the reason (required for feedback and project notes)")
    p.add_argument("--how", help="how to apply it next time (required for feedback and project notes)")
    p.add_argument("--title", help="the pointer's label in MEMORY.md (default: the description)")
    p.add_argument("--hook", help="a few words after the pointer's link")
    p.add_argument("--force", action="store_true", help="save even when a near-duplicate exists or a project note has a relative date")
    p.add_argument("--no-undo", action="store_true", help=common.NO_UNDO_HELP)
    p.add_argument("--dry-run", action="store_true", help="check and show what would be written; write nothing")
    p.add_argument("--json", action="store_true", help="print the receipt as JSON")
    raw = list(sys.argv[1:] if argv is None else argv)
    args = p.parse_args(raw)
    return common.run(args.json, common.dry_run_or(lambda: operations.new(args, raw)))


if __name__ == "__main__":
    raise SystemExit(main())
