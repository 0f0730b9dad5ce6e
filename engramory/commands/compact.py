"""`engramory compact [ROOT] [--target LINES/BYTES] [--apply PLAN] [--json]`: bring a memory
index inside its caps without losing a fact, as a plan first.

The plan (the default) writes nothing: it prints the ordered, typed operations
(`engramory.compact.plan` says which and why), each with its effect on the index's lines,
bytes and the host's size unit, the invariants checked on the result, the proposals only a
person may settle, and the unified diff of every file it would change. Re-running it on the
same store prints the same bytes.

`--apply PLAN` applies a plan saved with `--json` (`--apply -` plans and applies in one go):
under the store lock it re-reads the store, refuses when it changed since the plan (the
digest), writes every file atomically and records one journal entry holding everything it
replaced, so `engramory undo` puts the store back byte for byte.

Exit status: 0 nothing to do (already within the target), 1 operations planned or applied,
2 the target cannot be reached without a decision (the decisions are printed) or the plan
was refused because an invariant failed, 64 usage error, 65 the plan does not match the
store (it changed since the plan, or PLAN is not a compact plan), 66 the store, its index or
PLAN cannot be read, or a file of the store cannot be read whole (its config, a note, a `.md`
that is a FIFO or a device, a note past the store reader's limit, a folder that cannot be listed):
a plan over part of a store could drop a pointer to a note it never read, so none is made.
"""

from __future__ import annotations

import os
import sys

from engramory import automemory
from engramory.commands.parser import Parser
from engramory.compact.apply import (
    JSON_STYLE,
    CompactError,
    apply,
    host_unit,
    parse_target,
    plan_dict,
    plan_for,
    read_plan,
    render_text,
)
from engramory.exitcodes import EX_DATAERR, EX_OK, EX_USAGE
from engramory.size import n as _n
from engramory.store import reader as store_mod
from engramory.store.secrets import emit, emit_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from engramory.compact.work import Plan


def default_root() -> str:
    found = automemory.memory_dir(os.getcwd(), None)
    if found is None:
        raise CompactError(EX_USAGE, "cannot tell this project's memory folder (CLAUDE_CODE_PROJECT_DIR_NAME is not a "
                           "plain folder name); pass ROOT")
    return found


def _parser() -> Parser:
    parser = Parser(
        prog="engramory compact",
        description="Plan, and on request apply, a compaction of a memory index that cannot lose a fact: "
        "pointer-ify long lines (their text moves into the note), drop duplicate and dead pointers, "
        "archive notes with identical bodies, archive the coldest notes, group by type; stopping as soon "
        "as the target is met. Near-duplicates are only proposed. The plan writes nothing.",
        epilog="Exit status: 0 nothing to do, 1 operations planned or applied, 2 the target cannot be "
        "reached without a decision (listed) or an invariant failed, 64 usage error, 65 the plan does not "
        "match the store (changed since), 66 the store, its index or PLAN cannot be read, or a file of the store "
        "cannot be read whole (a FIFO, a device, a note past %s bytes: compact never plans over what it did not "
        "read). " % _n(store_mod.READ_MAX) +
        "With no ROOT: this project's Claude Code auto-memory folder.",
    )
    parser.add_root("the folder holding MEMORY.md")
    parser.add_argument("--target", metavar="LINES/BYTES",
                        help="size to bring the index to, in lines and in the unit the caps count (Claude "
                        "Code: UTF-16 units of the trimmed text, bytes for ASCII), e.g. 140/17500 "
                        "(default: the warn caps)")
    parser.add_argument("--apply", metavar="PLAN",
                        help="apply a plan saved with --json ('-' : plan now and apply it)")
    parser.add_argument("--no-undo", action="store_true",
                        help="with --apply: apply even when its undo cannot be kept (a prior version over the blob "
                        "store's caps); the output and `engramory log` then say it cannot be undone")
    parser.add_argument("--json", action="store_true", help="print the plan (or the applied plan) as JSON")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    lines = nbytes = None
    if args.target is not None:
        try:
            lines, nbytes = parse_target(args.target)
        except ValueError as exc:
            parser.error(str(exc))
    try:
        root, saved = _root_and_saved(args, parser)
        if args.apply is None:
            plan = plan_for(root, lines, nbytes)
            _render_plan(plan, root, args.json)
            return plan.exit_code
        plan, entry = apply(root, saved, lines, nbytes, ["compact"] + list(argv if argv is not None else sys.argv[2:]),
                            no_undo=args.no_undo)
    except CompactError as exc:
        emit("engramory compact: %s\n" % exc.message, sys.stderr)
        return exc.code
    _render_applied(plan, entry, root, args.json)
    return plan.exit_code if entry is not None or plan.exit_code != 1 else EX_OK


def _root_and_saved(args: Any, parser: Parser) -> tuple[str, dict[str, Any] | None]:
    """The store's folder and the saved plan --apply PLAN names (None: plan now)."""
    root = args.root
    saved = None
    if args.apply is not None and args.apply != "-":
        if args.target is not None:
            parser.error("--target cannot be combined with --apply PLAN (the plan carries its target)")
        saved = read_plan(args.apply)
        if root is None:
            root = str(saved.get("root") or "")
        elif os.path.realpath(root) != os.path.realpath(str(saved.get("root") or "")):
            raise CompactError(EX_DATAERR, "the plan was made for %s, not %s" % (saved.get("root"), root))
    if root is None:
        root = default_root()
        emit("engramory compact: no ROOT given; using this project's Claude Code auto memory: %s\n" % root, sys.stderr)
    return root, saved


def _render_plan(plan: Plan, root: str, as_json: bool) -> None:
    _, title = host_unit()
    if as_json:
        emit_json(plan_dict(plan, root), **JSON_STYLE)
    else:
        emit(render_text(plan, root, title))


def _render_applied(plan: Plan, entry: Any, root: str, as_json: bool) -> None:
    _, title = host_unit()
    if as_json:
        d = plan_dict(plan, root)
        d["applied"] = entry is not None
        d["journal_id"] = getattr(entry, "id", None)
        d["undoable"] = bool(entry is not None and entry.undoable)
        emit_json(d, **JSON_STYLE)
    else:
        emit(render_text(plan, root, title, _outcome(plan, entry)))


def _outcome(plan: Plan, entry: Any) -> str:
    """What --apply did, in the words that close the plan's text."""
    if entry is None:
        return "Nothing was written: %s." % (
            "the index is already within the target" if plan.within_target else "no safe operation applies")
    return ("Applied %d file change%s as journal entry %s; %s.%s" % (
        len(plan.changes), "" if len(plan.changes) == 1 else "s", entry.id,
        "`engramory undo %s` restores the store byte for byte" % entry.id if entry.undoable else
        "undo is NOT possible for it (%s)" % entry.undo_blocker(),
        " Then handle the proposals and decisions above by hand." if plan.proposals or plan.decisions else ""))


if __name__ == "__main__":
    raise SystemExit(main())
