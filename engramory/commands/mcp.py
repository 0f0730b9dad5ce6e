"""`engramory mcp [--root DIR]`: the MCP server over stdio (engramory.mcp).

Before the first message: the store root is resolved (an explicit --root must be an absolute,
existing folder; without it, the project's Claude Code auto-memory folder, made when missing as
Claude Code itself would), and a write that a crash interrupted is rolled back (the journal
records what the crash left, then its undo puts the prior bytes back), so a half-made change
is never what the next session sees. stdout then belongs to the protocol alone: file
descriptor 1 is pointed at stderr for everything else in the process (a print, a warning, a
library), and the protocol writes to a private copy of the original.
"""

from __future__ import annotations

import os
import sys

from engramory.commands.parser import Parser
from engramory.curate import notes
from engramory.exitcodes import EX_NOINPUT, EX_USAGE
from engramory.mcp import protocol, tools
from engramory.store import journal, journalfile, metadir
from engramory.store.secrets import redact

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

DESCRIPTION = (
    "Serve a memory store to an MCP client (Claude Desktop, Zed, Claude Code, Gemini CLI, Codex, ...) over "
    "stdio: three tools, memory_view, memory_edit and memory_search, with paths under /memories (the "
    "store root). Every write is held to the rules of `engramory new` and the index's caps, locked and "
    "journaled (`engramory log`, `engramory undo ID`). stdout carries only JSON-RPC; logs go to stderr.")
EPILOG = ("exit codes: 0 the client closed the connection; 64 usage error; 66 the store folder does not exist "
          "or cannot be used. Wire it into a client with `engramory install --host claude-desktop --root DIR`, "
          "`--host zed --root DIR`, or `engramory install --mcp` for Claude Code.")


class _FdOut:
    """Bytes to one file descriptor, unbuffered (the protocol's own copy of stdout)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def write(self, data: bytes) -> int:
        view = memoryview(data)
        while view:
            n = os.write(self.fd, view)
            view = view[n:]
        return len(data)

    def flush(self) -> None:
        pass


def protocol_stdout() -> _FdOut:
    """Keep fd 1 for the protocol and send everything else that writes to stdout to stderr."""
    sys.stdout.flush()
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return _FdOut(fd)


def resolve(given: str | None) -> str:
    """The store root, or SystemExit(66/64) with the reason on stderr."""

    if given is not None:
        path = os.path.expanduser(given)
        if not os.path.isabs(path):
            _fail("--root %s is relative: give the absolute path of the store folder (a relative one would "
                  "depend on the folder the client starts the server in)" % given, EX_USAGE)
        if not os.path.isdir(path):
            _fail("--root %s is not an existing folder: create it (mkdir -p %s) or pass the folder that holds "
                  "MEMORY.md" % (given, given), EX_NOINPUT)
        return os.path.normpath(path)
    try:
        root, _ = notes.resolve_root(None, create=True)
    except notes.Refusal as exc:
        _fail(str(exc), exc.code)
    except OSError as exc:
        _fail("the project's auto-memory folder cannot be made (%s); pass --root DIR" % (exc.strerror or exc),
              EX_NOINPUT)
    return root


def _fail(message: str, code: int) -> None:

    sys.stderr.write("engramory mcp: %s\n" % redact(message))
    raise SystemExit(code)


def recover(root: str, log: object = None) -> int | None:
    """Roll back a write a crash interrupted; the id of the undo entry, or None."""

    if not os.path.exists(metadir.path(root, journal.PENDING)):
        return None
    last = journalfile.last_id(root)
    with journal.transaction(root, "mcp", ["recover"]):
        pass  # entering journals what the crash left on disk, as an "interrupted" entry
    newest = next(iter(journalfile.Reader(root).back()), None)
    if newest is None or newest.id <= last or not newest.interrupted:
        return None
    done = journal.undo(root, newest.id, ["mcp", "recover"])
    return done.id


def main(argv: Sequence[str] | None = None) -> int:
    p = Parser(prog="engramory mcp", description=DESCRIPTION, epilog=EPILOG)
    p.add_argument("--root", metavar="DIR",
                   help="the store folder, absolute (default: this project's Claude Code auto-memory folder); "
                        "memory_view of /memories names it")
    args = p.parse_args(list(sys.argv[1:] if argv is None else argv))
    out = protocol_stdout()

    root = resolve(args.root)
    try:
        undo = recover(root)
        if undo is not None:
            protocol.stderr_log("rolled back a write a crash interrupted (journal entry %d)" % undo)
    except Exception as exc:  # noqa: BLE001 - serve anyway; each write checks the store again
        protocol.stderr_log("could not roll back an interrupted write: %s" % exc)
    protocol.stderr_log("serving %s" % root)
    session = protocol.Session(tools.definitions, tools.Tools(root).call, protocol.stderr_log)
    return protocol.serve(session, sys.stdin.buffer, out)  # type: ignore[arg-type]


if __name__ == "__main__":
    raise SystemExit(main())
