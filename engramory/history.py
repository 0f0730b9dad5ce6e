"""`engramory log` and `engramory undo [ID]`: read the store's journal, and take one entry back
byte for byte (itself a journal entry, so an undo can be undone too).

Both read the journal from its end (engramory.journalfile): `log --limit N` reads the newest N
entries and nothing before them. Nothing either prints shows a secret: the journal keeps a
command's arguments masked and without bodies, and what is printed is masked again
(engramory.secretscan.redact, the one masker), for journals written before that.
"""

from __future__ import annotations

import json
import sys

from engramory import journal, journalfile, metadir, notes
from engramory.cliutil import EX_NOINPUT
from engramory.notes import EX_BUSY, EX_OK, EX_REFUSED, Refusal
from engramory.secretscan import redact

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
    return redact("%s %s%s" % (c.path, what, kept))


def entry_dict(e: journal.Entry) -> dict[str, object]:
    d = e.as_dict()
    d.pop("format", None)
    d["argv"] = journalfile.slim_argv(e.argv)
    for c in d["changes"]:  # type: ignore[attr-defined]
        c["path"] = redact(c["path"])
    d["undone"] = e.undone
    d["undoable"] = e.undoable and not e.undone
    if e.rotated:
        d["rotated"] = True
    blocker = e.undo_blocker()
    if blocker is not None:
        d["why_no_undo"] = blocker
    return d


def _flags(e: journal.Entry) -> list[str]:
    flags = []
    if e.undone:
        flags.append("undone")
    if e.undoes is not None:
        flags.append("undoes %d" % e.undoes)
    if e.interrupted:
        flags.append("interrupted")
    if e.command == journal.EXTERNAL:
        flags.append("made outside engramory; `engramory undo %d` takes it back" % e.id
                     if e.undoable and not e.undone else "made outside engramory")
    if e.rotated:
        flags.append("history: older than undo reaches")
    elif not e.undoable:
        flags.append("cannot be undone: %s" % e.undo_blocker())
    return flags


def _damaged_note(reader: journalfile.Reader) -> None:
    if reader.damaged:
        sys.stderr.write("engramory log: %d line%s of the journal %s not an entry (a torn line after a crash, or a "
                         "hand edit): skipped\n" % (reader.damaged, "" if reader.damaged == 1 else "s",
                                                    "is" if reader.damaged == 1 else "are"))


def log_main(argv: Sequence[str] | None = None) -> int:
    p = notes.parser("log", (
        "List the journal of a memory store, newest first: every write an engramory command made, "
        "with time, command, and per file the sha256 and size before and after. "
        "`engramory undo ID` takes an entry back; entries older than what undo reaches (the live journal "
        "keeps about 1 MiB of entries) are listed from the history, without their arguments."))
    p.add_argument("root", nargs="?", metavar="ROOT", help="the store folder (default: the project's auto-memory folder)")
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
        flags = _flags(e)
        out.append("%d  %s  %s%s" % (e.id, e.time, e.command, ("  (%s)" % ", ".join(flags)) if flags else ""))
        out.extend("    " + _change_text(c) for c in e.changes)
    sys.stdout.write("\n".join(out) + "\n")
    return EX_OK


UNDO_HELP = (
    "Put back the files of one journal entry byte for byte. With no ID: engramory's own newest write not yet "
    "undone (new, update, archive, restore, compact; never an undo, and never a change made outside engramory "
    "that `engramory review` journaled: those are taken back only by their ID). Refused (changing nothing) "
    "when a file is no longer what that entry left (undo the later entry first), or the entry cannot be "
    "undone (written with --no-undo, or older than what the journal keeps). The undo is itself journaled, "
    "so `engramory undo ID` of the undo redoes it.")


def _parse_undo(raw: list[str]) -> tuple[object, int | None, str | None]:
    p = notes.parser("undo", UNDO_HELP)
    p.add_argument("args", nargs="*", metavar="[ID] [ROOT]", help="an entry id from `engramory log`, and/or the store folder")
    p.add_argument("--dry-run", action="store_true", help="name the entry that would be undone; write nothing")
    p.add_argument("--no-undo", action="store_true",
                   help="undo even when this undo itself could not be undone (its prior bytes too large to keep)")
    p.add_argument("--json", action="store_true", help="print the undo's journal entry as JSON")
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
    return args, entry_id, root_arg


def undo_main(argv: Sequence[str] | None = None) -> int:
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
                           "    " + _change_text(c) for c in target.changes),
                           "\nbut it cannot be undone: %s" % blocker if blocker else ""))
            return EX_OK
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
    lines = ["undid entry %d; the files are back to what they were before it:" % (done.undoes or 0)]
    lines.extend("    " + _change_text(c) for c in done.changes)
    if done.undoable:
        lines.append("journal entry %d: `engramory undo %d` would redo it" % (done.id, done.id))
    else:
        lines.append("journal entry %d: this undo cannot itself be undone (%s)" % (done.id, done.undo_blocker()))
    notes.emit(as_json, {"ok": True, "entry": entry_dict(done)}, "\n".join(lines))
    return EX_OK
