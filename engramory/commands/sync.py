"""`engramory sync [ROOT]` and `engramory sync init [ROOT]`: share a memory store through git
(engramory.sync.run, engramory.sync.init)."""

from __future__ import annotations

import json
import os
import sys

from engramory.commands.parser import Parser
from engramory.curate import notes
from engramory.store.secrets import redact
from engramory.sync import gitops, init, run

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

SYNC_HELP = (
    "Share a memory store through git, in one step: register the index merge driver if this clone "
    "lacks it, commit the store's changes (one commit listing engramory's journal entries since the "
    "last sync, and the changes made outside it), fetch, merge the upstream branch with the driver "
    "(pointers merge by note: two machines that each saved notes never conflict), check the merged "
    "store, push. Refuses, changing nothing, a pull or push that deletes more than max(10, 10%) of the "
    "live notes (a move into archive/ is not a deletion); stops before the push on conflicts (listed, "
    "the merge left for you) and on an index over its cap. Never rewrites published history. The store "
    "may be its own repository or a folder of a project's; run `engramory sync init` once first.")
SYNC_EPILOG = (
    "exit codes: 0 synced; 1 refused or stopped (the message says why and what to do next: no git, no "
    "remote, no upstream, a detached HEAD, a mass deletion, conflicts, an index over its cap); 3 the "
    "remote moved on or the store was busy (run it again); 64 usage error; 66 the store cannot be read. "
    "Set a store up once with `engramory sync init [ROOT] [--dry-run] [--undo] [--json]` (see "
    "`engramory sync init --help`).")
INIT_HELP = (
    "Make a store git-ready: `.gitattributes` merges MEMORY.md with the engramory-index driver, "
    "`.gitignore` keeps `.engramory/` (this machine's journal) out, and the driver is registered in the "
    "repository's own .git/config with the absolute interpreter and bundle path, so it runs from any "
    "working directory with nothing on PYTHONPATH. Writes, never commits. Idempotent. Refused outside a "
    "git repository (run `git init` first). --undo puts back exactly what it changed.")
INIT_EPILOG = "exit codes: 0 done (or nothing to do); 1 refused (the message says why); 64 usage; 66 no store."


def _init_parser() -> Parser:
    p = Parser(prog="engramory sync init", description=INIT_HELP, epilog=INIT_EPILOG)
    p.add_root("the store folder (default: the project's auto-memory folder)")
    p.add_argument("--dry-run", action="store_true", help="say what it would write; write nothing")
    p.add_argument("--undo", action="store_true", help="put back the files init changed byte for byte and unset the driver")
    p.add_argument("--json", action="store_true", help="print the outcome as one JSON document")
    return p


def init_main(argv: Sequence[str]) -> int:

    args = _init_parser().parse_args(list(argv))
    try:
        root, _ = notes.resolve_root(args.root)
        if args.undo:
            done = init.undo(root, args.dry_run)
            notes.emit(args.json, {"ok": True, "root": root, "undo": True, "dry_run": args.dry_run, "steps": done},
                       "\n".join(("would " if args.dry_run else "") + d for d in done))
            return 0
        plan = init.plan(root)
        steps = _init_steps(plan)
        if not args.dry_run and not plan.empty:
            init.apply(plan)
    except notes.Refusal as exc:
        return notes.fail(args.json, str(exc), exc.code)
    except (init.Refused, gitops.GitError) as exc:
        return notes.fail(args.json, str(exc), 1)
    lines = [("would " if args.dry_run else "") + s for s in steps] or [
        "%s is already set up for sync: nothing to do" % root]
    if plan.tracked_state:
        lines.append("warning: %d file%s of .engramory/ %s committed: `git rm -r --cached .engramory` in %s" % (
            len(plan.tracked_state), "" if len(plan.tracked_state) == 1 else "s",
            "is" if len(plan.tracked_state) == 1 else "are", root))
    if steps and not args.dry_run:
        lines.append("next: commit .gitattributes and .gitignore (`git add` them, `git commit`), then `engramory sync`")
    notes.emit(args.json, {"ok": True, "root": root, "repository": plan.top, "dry_run": args.dry_run, "steps": steps,
                           "tracked_state": plan.tracked_state}, "\n".join(lines))
    return 0


def _init_steps(plan: object) -> list[str]:

    assert isinstance(plan, init.Plan)
    steps = []
    for name, (before, _after) in plan.files.items():
        line = init.ATTRIBUTE if name == ".gitattributes" else init.IGNORE
        steps.append("%s %s with the line %s" % ("create" if before is None else "update", os.path.join(plan.root, name),
                                                 line))
    config = os.path.join(gitops.git_dir(plan.top), "config")
    for key, (_before, value) in plan.config.items():
        steps.append("set %s = %s in %s" % (key, value, config))
    return steps


def _sync_parser() -> Parser:
    p = Parser(prog="engramory sync", description=SYNC_HELP, epilog=SYNC_EPILOG)
    p.add_root("the store folder (default: the project's auto-memory folder); "
                                                          "`engramory sync init [ROOT]` sets it up first")
    p.add_argument("--force", action="store_true", help="go on with a pull or push that deletes many notes (never a "
                                                        "force push: published history is not rewritten)")
    p.add_argument("--json", action="store_true", help="print the outcome as one JSON document")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    raw = list(sys.argv[1:] if argv is None else argv)
    if raw and raw[0] == "init":
        return init_main(raw[1:])
    args = _sync_parser().parse_args(raw)

    try:
        root, _ = notes.resolve_root(args.root)
    except notes.Refusal as exc:
        return notes.fail(args.json, str(exc), exc.code)
    out = run.sync(root, args.force)

    out.lines = [redact(line) for line in out.lines]  # git's own messages may quote a remote URL's token
    if args.json:
        obj = {"ok": out.code == 0, "status": out.status, "exit": out.code, "root": root, "messages": out.lines}
        obj.update(out.data)
        sys.stdout.write(json.dumps(obj, indent=2) + "\n")
    else:
        stream = sys.stdout if out.code == 0 else sys.stderr
        for line in out.lines[:-1] if out.code else out.lines:
            sys.stdout.write(line + "\n")
        if out.code:
            stream.write("engramory sync: %s\n" % out.lines[-1])
        else:
            stream.write("engramory sync: %s is in sync with %s\n" % (root, out.data.get("upstream")))
    return out.code


if __name__ == "__main__":
    raise SystemExit(main())
