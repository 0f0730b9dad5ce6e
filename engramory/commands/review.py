"""`engramory review [ROOT] [--all] [--keep] [--json]`: the notes something other than engramory
added, changed or deleted since the last review, each with the journal entry `engramory undo
ID` takes back (engramory.store.review reconciles the store first)."""

from __future__ import annotations

import json
import os
import sys

from engramory import automemory, scope
from engramory.commands.parser import Parser
from engramory.exitcodes import EX_NOINPUT, EX_OK, EX_REFUSED
from engramory.store import journal, journalfile
from engramory.store.review import kinds, mark_reviewed, reconcile, render, unreviewed
from engramory.store.secrets import redact

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    parser = Parser(
        prog="engramory review",
        description="List the notes that something other than engramory added, changed or deleted in a memory "
        "store since the last review (the host's own consolidation, shell commands, editors, sync), each "
        "with the journal entry that `engramory undo ID` takes back. Reconciles the store first; marks "
        "what it listed as reviewed.",
        epilog="Exit status: 0 nothing new, 1 changes listed, 64 usage error, 66 the store cannot be read. "
        "With no ROOT: this project's Claude Code auto-memory folder.",
    )
    parser.add_root("the folder holding MEMORY.md (or the index ENGRAMORY_INDEX_NAME names)")
    parser.add_argument("--all", action="store_true", help="list every change ever found, not only the unreviewed")
    parser.add_argument("--keep", action="store_true", help="do not mark the listed changes as reviewed")
    parser.add_argument("--json", action="store_true", help="print the changes as JSON")
    args = parser.parse_args(argv)
    root = args.root
    if root is None:
        root = automemory.memory_dir(os.getcwd(), None)
        if root is None:
            parser.error("cannot tell this project's memory folder; pass ROOT")
        sys.stderr.write("engramory review: no ROOT given; using this project's Claude Code auto memory: %s\n" % root)
    if not os.path.isdir(root):
        sys.stderr.write("engramory review: %s is not a folder; pass the folder that holds %s\n"
                         % (root, scope.index_name_for(root)))
        return EX_NOINPUT
    try:
        result = reconcile(root, "review")
        upto = journalfile.last_id(root)
        found = [e for e in unreviewed(root, args.all) if e.id <= upto]
    except (OSError, journal.JournalError) as exc:
        sys.stderr.write("engramory review: cannot read the store %s: %s\n" % (root, exc))
        return EX_NOINPUT
    for warning in result.warnings:
        sys.stderr.write("engramory review: warning: %s\n" % warning)
    if args.json:
        rows = [{"id": e.id, "time": e.time, "undone": e.undone, "argv": journalfile.slim_argv(e.argv),
                 "changes": [{"kind": k, "path": redact(p)} for k, p in kinds(e)]} for e in found]
        sys.stdout.write(json.dumps({"root": os.path.abspath(root), "entries": rows}, indent=2) + "\n")
    else:
        sys.stdout.write(redact(render(root, found)))
    if not args.keep:
        try:
            mark_reviewed(root, upto)
        except journal.LockTimeout:
            sys.stderr.write("engramory review: another engramory command holds the store; what was listed stays "
                             "unreviewed (run `engramory review` again)\n")
        except journal.JournalError as exc:
            sys.stderr.write("engramory review: cannot mark what was listed as reviewed: %s\n" % exc)
            return EX_NOINPUT
    return EX_REFUSED if found else EX_OK


if __name__ == "__main__":
    raise SystemExit(main())
