"""`engramory log [ROOT] [--limit N] [--json]`: the store's journal, newest first: every write
an engramory command made. It reads the journal from its end (engramory.store.journalfile):
`--limit N` reads the newest N entries and nothing before them."""

from __future__ import annotations

import json
import sys

from engramory.commands import parser
from engramory.curate import notes
from engramory.curate.history import change_text, entry_dict, flags
from engramory.curate.notes import Refusal
from engramory.exitcodes import EX_NOINPUT, EX_OK
from engramory.store import journal, journalfile, metadir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


def _damaged_note(reader: journalfile.Reader) -> None:
    if reader.damaged:
        sys.stderr.write("engramory log: %d line%s of the journal %s not an entry (a torn line after a crash, or a "
                         "hand edit): skipped\n" % (reader.damaged, "" if reader.damaged == 1 else "s",
                                                    "is" if reader.damaged == 1 else "are"))


def main(argv: Sequence[str] | None = None) -> int:
    p = parser.curation("log", (
        "List the journal of a memory store, newest first: every write an engramory command made, "
        "with time, command, and per file the sha256 and size before and after. "
        "`engramory undo ID` takes an entry back; entries older than what undo reaches (the live journal "
        "keeps about 1 MiB of entries) are listed from the history, without their arguments."))
    p.add_root("the store folder (default: the project's auto-memory folder)")
    p.add_argument("--limit", type=int, default=0, help="show only the newest N entries (reads only those)")
    p.add_argument("--json", action="store_true", help="print a JSON array, one object per entry with its id")
    args = p.parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        root, _ = notes.resolve_root(args.root)
        metadir.check(root)
        reader = journalfile.Reader(root)
        found = reader.newest(args.limit) if args.limit > 0 else list(reader.back())
    except Refusal as exc:
        return notes.fail(args.json, str(exc), exc.code)
    except journal.JournalError as exc:
        return notes.fail(args.json, "cannot read the journal: %s" % exc, EX_NOINPUT)
    _damaged_note(reader)
    if args.json:
        sys.stdout.write(json.dumps([entry_dict(e) for e in found], indent=2) + "\n")
        return EX_OK
    if not found:
        sys.stdout.write("no journal entries in %s yet\n" % root)
        return EX_OK
    out = []
    for e in found:
        shown = flags(e)
        out.append("%d  %s  %s%s" % (e.id, e.time, e.command, ("  (%s)" % ", ".join(shown)) if shown else ""))
        out.extend("    " + change_text(c) for c in e.changes)
    sys.stdout.write("\n".join(out) + "\n")
    return EX_OK


if __name__ == "__main__":
    raise SystemExit(main())
