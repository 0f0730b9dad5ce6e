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
    "check": ("engramory.commands.check", "main", "check index files against their host's load window"),
    "doctor": ("engramory.commands.doctor", "main", "audit a whole memory store and report every problem"),
    "install": ("engramory.commands.install", "main", "wire the guard and the skill into a host"),
    "uninstall": ("engramory.commands.uninstall", "main", "take out exactly what install put in"),
    "hosts": ("engramory.commands.hosts", "main", "list the hosts engramory guards and their verified versions"),
    # curation: every write is one locked, atomic, journaled step (engramory.store.journal)
    "new": ("engramory.commands.new", "main", "save a note and its index pointer in one step, with a receipt"),
    "update": ("engramory.commands.update", "main", "change a note; bump its date and keep its pointer in step"),
    "archive": ("engramory.commands.archive", "main", "move notes into archive/ and drop their pointers"),
    "restore": ("engramory.commands.restore", "main", "move archived notes back and re-add their pointers"),
    "search": ("engramory.commands.search", "main", "ranked search over notes, live and archived, when the index has no fit"),
    "log": ("engramory.commands.log", "main", "list the store's journal: every write engramory made"),
    "undo": ("engramory.commands.undo", "main", "put back one journal entry byte for byte (newest by default)"),
    # compaction and review of what others changed (engramory.compact.apply, engramory.store.review)
    "compact": ("engramory.commands.compact", "main", "plan (and apply) a compaction of the index that cannot lose a fact"),
    "review": ("engramory.commands.review", "main", "list notes changed or deleted outside engramory since the last review"),
    # sharing a store through git (engramory.sync)
    "sync": ("engramory.commands.sync", "main", "share the store through git: commit, fetch, merge by key, check, push"),
    "merge-index": ("engramory.commands.merge_index", "main", "git's merge driver for an index, keyed by note; --resolve repairs one"),
    "verify": ("engramory.commands.verify", "main", "check the paths, symbols and commands notes name against the code"),
    # hosts without a pre-write hook reach the store through an MCP server (engramory.mcp)
    "mcp": ("engramory.commands.mcp", "main", "serve the store to an MCP client over stdio: view, edit, search"),
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
