"""`engramory log` and `engramory undo [ID]`: read the store's journal, and take one entry back
byte for byte (itself a journal entry, so an undo can be undone too)."""

from __future__ import annotations

import json
import sys

from engramory import journal, notes
from engramory.notes import EX_BUSY, EX_OK, EX_REFUSED, Refusal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


def _change_text(c: journal.FileChange) -> str:
    if c.before is None:
        what = "created (%s bytes)" % notes.n(c.after_size or 0)
    elif c.after is None:
        what = "removed (was %s bytes)" % notes.n(c.before_size or 0)
    else:
        what = "changed %s -> %s bytes" % (notes.n(c.before_size or 0), notes.n(c.after_size or 0))
    kept = "" if c.kept or c.before is None else " [prior bytes not kept: %s]" % (c.why_not or "pruned")
    return "%s %s%s" % (c.path, what, kept)


def entry_dict(e: journal.Entry) -> dict[str, object]:
    d = e.as_dict()
    d.pop("format", None)
    d["undone"] = e.undone
    return d


def log_main(argv: Sequence[str] | None = None) -> int:
    p = notes.parser("log", (
        "List the journal of a memory store, newest first: every write an engramory command made, "
        "with time, command, and per file the sha256 and size before and after. "
        "`engramory undo ID` takes an entry back."))
    p.add_argument("root", nargs="?", metavar="ROOT", help="the store folder (default: the project's auto-memory folder)")
    p.add_argument("--limit", type=int, default=0, help="show only the newest N entries")
    p.add_argument("--json", action="store_true", help="print a JSON array, one object per entry with its id")
    args = p.parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        root, _ = notes.resolve_root(args.root)
    except Refusal as exc:
        return notes.fail(args.json, str(exc), exc.code)
    found = list(reversed(journal.entries(root)))
    if args.limit > 0:
        found = found[: args.limit]
    if args.json:
        sys.stdout.write(json.dumps([entry_dict(e) for e in found], indent=2) + "\n")
        return EX_OK
    if not found:
        sys.stdout.write("no journal entries in %s yet\n" % root)
        return EX_OK
    out = []
    for e in found:
        flags = []
        if e.undone:
            flags.append("undone")
        if e.undoes is not None:
            flags.append("undoes %d" % e.undoes)
        if e.interrupted:
            flags.append("interrupted")
        out.append("%d  %s  %s%s" % (e.id, e.time, e.command, ("  (%s)" % ", ".join(flags)) if flags else ""))
        out.extend("    " + _change_text(c) for c in e.changes)
    sys.stdout.write("\n".join(out) + "\n")
    return EX_OK


def undo_main(argv: Sequence[str] | None = None) -> int:
    p = notes.parser("undo", (
        "Put back the files of one journal entry byte for byte: ID, or with no ID the newest entry not "
        "yet undone. Refused (changing nothing) when a file is no longer what that entry left (undo the "
        "later entry first) or its prior bytes were not kept. The undo is itself journaled."))
    p.add_argument("args", nargs="*", metavar="[ID] [ROOT]", help="an entry id from `engramory log`, and/or the store folder")
    p.add_argument("--dry-run", action="store_true", help="name the entry that would be undone; write nothing")
    p.add_argument("--json", action="store_true", help="print the undo's journal entry as JSON")
    raw = list(sys.argv[1:] if argv is None else argv)
    args = p.parse_args(raw)
    entry_id = None
    root_arg = None
    for a in args.args:
        if a.isdigit() and entry_id is None:
            entry_id = int(a)
        elif root_arg is None:
            root_arg = a
        else:
            p.error("unexpected argument %r" % a[:40])
    try:
        root, _ = notes.resolve_root(root_arg)
        if args.dry_run:
            target = journal.undo_target(journal.entries(root), entry_id)
            notes.emit(args.json, {"ok": True, "dry_run": True, "entry": entry_dict(target)},
                       "would undo entry %d (%s, %s):\n%s" % (target.id, target.command, target.time, "\n".join(
                           "    " + _change_text(c) for c in target.changes)))
            return EX_OK
        done = journal.undo(root, entry_id, raw)
    except Refusal as exc:
        return notes.fail(args.json, str(exc), exc.code)
    except (journal.JournalConflict, journal.LockTimeout) as exc:
        return notes.fail(args.json, str(exc), EX_BUSY if isinstance(exc, journal.LockTimeout) else EX_REFUSED)
    except journal.JournalError as exc:
        return notes.fail(args.json, str(exc), EX_REFUSED)
    lines = ["undid entry %d; the files are back to what they were before it:" % (done.undoes or 0)]
    lines.extend("    " + _change_text(c) for c in done.changes)
    lines.append("journal entry %d: `engramory undo %d` would redo it" % (done.id, done.id))
    notes.emit(args.json, {"ok": True, "entry": entry_dict(done)}, "\n".join(lines))
    return EX_OK
