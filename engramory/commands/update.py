"""`engramory update NAME [ROOT] ...`: change a live note, bump its date and keep its pointer
in step, in one journaled step (engramory.curate.update)."""

from __future__ import annotations

import sys

from engramory.commands import parser
from engramory.curate import common, update
from engramory.store.reader import TYPES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    p = parser.curation("update", (
        "Change an existing live note: its description, type, body, Why:/How to apply: lines or its "
        "pointer's label. Bumps `updated` to today and keeps the pointer in MEMORY.md in step (label, "
        "heading of the type). Same checks and receipt as `new`; one journaled step."))
    p.add_argument("name", metavar="NAME", help="the note's name (its file name, with or without .md)")
    p.add_root("the store folder (default: the project's auto-memory folder)")
    p.add_argument("--description", help="a new one-line description")
    p.add_argument("--type", choices=TYPES, help="a new type: the pointer moves under that heading")
    p.add_argument("--body", help="a new body, replacing the old one ('-' reads it from stdin)")
    p.add_argument("--why", help="set the Why: line (replaced in place, or added)")
    p.add_argument("--how", help="set the How to apply: line (replaced in place, or added)")
    p.add_argument("--title", help="a new label for the pointer")
    p.add_argument("--force", action="store_true", help="save even when the new description nearly duplicates another note")
    p.add_argument("--no-undo", action="store_true", help=common.NO_UNDO_HELP)
    p.add_argument("--dry-run", action="store_true", help="check and show what would be written; write nothing")
    p.add_argument("--json", action="store_true", help="print the receipt as JSON")
    raw = list(sys.argv[1:] if argv is None else argv)
    # intermixed: ROOT after the options (`update NAME --title T ROOT`) is ROOT, not unrecognized
    args = p.parse_intermixed_args(raw)
    if not any(v is not None for v in (args.description, args.type, args.body, args.why, args.how, args.title)):
        p.error("nothing to change: give --description, --type, --body, --why, --how or --title")

    return common.run(args.json, common.dry_run_or(lambda: update.run(args, raw)))


if __name__ == "__main__":
    raise SystemExit(main())
