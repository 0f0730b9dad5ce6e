"""`engramory undo [ID] [ROOT]`: put back one journal entry byte for byte (itself a journal
entry, so an undo can be undone too; engramory.store.journal.undo)."""

from __future__ import annotations

import sys

from engramory import scope
from engramory.commands import parser
from engramory.curate import index as curate_index
from engramory.curate import notes
from engramory.curate.history import change_text, entry_dict
from engramory.curate.notes import Refusal
from engramory.exitcodes import EX_BUSY, EX_NOINPUT, EX_OK, EX_REFUSED
from engramory.store import journal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


UNDO_HELP = (
    "Put back the files of one journal entry byte for byte. With no ID: engramory's own newest write not yet "
    "undone (new, update, archive, restore, compact; never an undo, and never a change made outside engramory "
    "that `engramory review` journaled: those are taken back only by their ID). Refused (changing nothing) "
    "when a file is no longer what that entry left (undo the later entry first), or the entry cannot be "
    "undone (written with --no-undo, or older than what the journal keeps). The undo is itself journaled, "
    "so `engramory undo ID` of the undo redoes it.")


def _parse_undo(raw: list[str]) -> tuple[object, int | None, str | None]:
    p = parser.curation("undo", UNDO_HELP)
    p.add_argument("args", nargs="*", metavar="[ID] [ROOT]", help="an entry id from `engramory log`, and/or the store folder")
    p.add_argument("--dry-run", action="store_true", help="name the entry that would be undone; write nothing")
    p.add_argument("--no-undo", action="store_true",
                   help="undo even when this undo itself could not be undone (its prior bytes too large to keep)")
    p.add_argument("--json", action="store_true", help="print the undo's journal entry as JSON")
    p.add_root_flag()
    args = p.parse_args(raw)
    entry_id = None
    root_arg = getattr(args, "root", None)
    flagged = root_arg is not None
    for a in args.args:
        if a.isdigit() and entry_id is None:
            entry_id = int(a)
        elif root_arg is None:
            root_arg = a
        elif flagged:
            if a != root_arg:
                p.error("the store folder is given twice (ROOT %r and --root %r): give one" % (a[:80], root_arg[:80]))
            flagged = False
        else:
            p.error("unexpected argument %r" % a[:40])
    return args, entry_id, root_arg


def main(argv: Sequence[str] | None = None) -> int:
    raw = list(sys.argv[1:] if argv is None else argv)
    args, entry_id, root_arg = _parse_undo(raw)
    as_json = bool(getattr(args, "json", False))

    try:
        root, _ = notes.resolve_root(root_arg)
        if getattr(args, "dry_run", False):
            target, _later = journal.find_undo_target(root, entry_id)
            blocker = target.undo_blocker()
            notes.emit(as_json, {"ok": True, "dry_run": True, "entry": entry_dict(target)},
                       "would undo entry %d (%s, %s):\n%s%s" % (target.id, target.command, target.time, "\n".join(
                           "    " + change_text(c) for c in target.changes),
                           "\nbut it cannot be undone: %s" % blocker if blocker else ""))
            return EX_OK
        irel = scope.index_name_for(root)
        prior = curate_index.read_quietly(root, irel)
        done = journal.undo(root, entry_id, raw, no_undo=bool(getattr(args, "no_undo", False)))
    except Refusal as exc:
        return notes.fail(as_json, str(exc), exc.code)
    except journal.StoreDamaged as exc:
        return notes.fail(as_json, str(exc), EX_NOINPUT)
    except (journal.JournalConflict, journal.LockTimeout) as exc:
        return notes.fail(as_json, str(exc), EX_BUSY if isinstance(exc, journal.LockTimeout) else EX_REFUSED)
    except journal.JournalError as exc:
        return notes.fail(as_json, str(exc), EX_REFUSED)
    except OSError as exc:
        return notes.fail(as_json, "%s: %s; nothing was undone" % (exc.filename or "the store", exc.strerror or exc),
                          EX_REFUSED)
    # an undo puts back earlier bytes: done even when the host then loads less, and said
    came_back = [c.path for c in done.changes if c.before is None and c.after is not None
                 and c.path.endswith(".md") and "/" not in c.path and c.path != irel]
    warnings = curate_index.unloaded(root, irel, prior, curate_index.read_quietly(root, irel), came_back) \
        if irel in done.paths or came_back else []
    lines = ["undid entry %d; the files are back to what they were before it:" % (done.undoes or 0)]
    lines.extend("    " + change_text(c) for c in done.changes)
    if done.undoable:
        lines.append("journal entry %d: `engramory undo %d` would redo it" % (done.id, done.id))
    else:
        lines.append("journal entry %d: this undo cannot itself be undone (%s)" % (done.id, done.undo_blocker()))
    lines.extend("warning: " + w for w in warnings)
    notes.emit(as_json, {"ok": True, "entry": entry_dict(done), "warnings": warnings}, "\n".join(lines))
    return EX_OK


if __name__ == "__main__":
    raise SystemExit(main())
