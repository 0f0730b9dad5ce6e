"""`engramory <command> [...]`: one entry point for every command; each command lives in
its own module with a `main(argv) -> int`, imported only when it is asked for."""

from __future__ import annotations

import importlib
import sys

from engramory import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

# command -> (module, function, one-line help). Each module is imported only when asked for.
COMMANDS = {
    "check": ("engramory.check", "main", "check index files against their host's load window"),
    "doctor": ("engramory.doctor", "main", "audit a whole memory store and report every problem"),
    "install": ("engramory.install", "main", "wire the guard and the skill into a host"),
    "uninstall": ("engramory.install", "uninstall_main", "take out exactly what install put in"),
    "hosts": ("engramory.hostlist", "main", "list the hosts engramory guards and their verified versions"),
    # curation: every write is one locked, atomic, journaled step (engramory.journal)
    "new": ("engramory.curate", "new_main", "save a note and its index pointer in one step, with a receipt"),
    "update": ("engramory.curate", "update_main", "change a note; bump its date and keep its pointer in step"),
    "archive": ("engramory.curate", "archive_main", "move notes into archive/ and drop their pointers"),
    "restore": ("engramory.curate", "restore_main", "move archived notes back and re-add their pointers"),
    "search": ("engramory.search", "main", "ranked search over notes, live and archived, when the index has no fit"),
    "log": ("engramory.history", "log_main", "list the store's journal: every write engramory made"),
    "undo": ("engramory.history", "undo_main", "put back one journal entry byte for byte (newest by default)"),
    # compaction and review of what others changed (engramory.compact, engramory.review)
    "compact": ("engramory.compact", "main", "plan (and apply) a compaction of the index that cannot lose a fact"),
    "review": ("engramory.review", "main", "list notes changed or deleted outside engramory since the last review"),
    # sharing a store through git (engramory.sync)
    "sync": ("engramory.commands.sync", "main", "share the store through git: commit, fetch, merge by key, check, push"),
    "merge-index": ("engramory.commands.merge_index", "main", "git's merge driver for an index, keyed by note; --resolve repairs one"),
    "verify": ("engramory.commands.verify", "main", "check the paths, symbols and commands notes name against the code"),
}


def usage() -> str:
    width = max(len(c) for c in COMMANDS)
    rows = "\n".join("  %s  %s" % (c.ljust(width), h) for c, (_, _, h) in COMMANDS.items())
    return (
        "usage: engramory <command> [options]\n\n"
        "Curated, file-based long-term memory for AI coding agents.\n\n"
        "commands:\n%s\n\n"
        "Run `engramory <command> --help` for a command's options.\n" % rows
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        sys.stdout.write(usage())
        return 0 if args else 64
    if args[0] in ("-V", "--version"):
        print("engramory %s" % __version__)
        return 0
    command = args[0]
    if command not in COMMANDS:
        sys.stderr.write("engramory: unknown command %r\n\n%s" % (command[:40], usage()))
        return 64
    module_name, function, _ = COMMANDS[command]
    entry = getattr(importlib.import_module(module_name), function)
    try:
        return int(entry(args[1:]))
    except BrokenPipeError:  # `engramory ... | head`: the reader left; not an error of ours
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
