"""Finding the store a command works on, and how a command refuses: the store folder from the
command line (ROOT, `--root`, or the project's Claude Code auto-memory folder by default) and the
Refusal every curation command raises. Kept apart from engramory.curate.notes, which re-exports
it, so that `engramory search` finds its store without loading what the writing commands need
(a warm search costs little more than the interpreter's start: issue 21)."""

from __future__ import annotations

import os
import sys

from engramory import automemory, scope
from engramory.exitcodes import EX_NOINPUT, EX_REFUSED, EX_USAGE
from engramory.store import secrets


class Refusal(Exception):
    """A command declines: nothing is written. `code` is the exit code."""

    def __init__(self, message: str, code: int = EX_REFUSED) -> None:
        super().__init__(message)
        self.code = code


def default_root() -> str:
    found = automemory.memory_dir(os.getcwd())
    if found is None:
        raise Refusal("CLAUDE_CODE_PROJECT_DIR_NAME is not a plain folder name; pass the store folder as ROOT",
                      EX_USAGE)
    return found


def resolve_root(given: str | None, create: bool = False) -> tuple[str, bool]:
    """(root, chosen by default). The default is the project's Claude Code auto-memory folder;
    `create` makes that default folder when it does not exist yet (the host would too)."""
    if given:
        root = os.path.expanduser(given)
        if os.path.basename(root.rstrip("/")) in _index_names() and os.path.isfile(root):
            root = os.path.dirname(root) or "."
        if not os.path.isdir(root):
            raise Refusal("%s is not a folder; pass the folder that holds MEMORY.md" % given, EX_NOINPUT)
        return root, False
    root = default_root()
    if not os.path.isdir(root):
        if not create:
            raise Refusal("this project has no memory folder yet (%s); pass ROOT, or save a first note with "
                          "`engramory new`" % root, EX_NOINPUT)
        os.makedirs(root, exist_ok=True)
    return root, True


def _index_names() -> set[str]:
    """MEMORY.md and the index name the environment sets (ENGRAMORY_INDEX_NAME)."""
    return {scope.INDEX_NAME, scope.index_name(os.environ)[0]}


def is_path_like(arg: str) -> bool:
    """Whether a trailing argument names the store: it has a '/', is '.' or '..', starts
    with '~', or is a folder holding an index (MEMORY.md, or the name the environment sets)."""
    return ("/" in arg or os.sep in arg or arg in (".", "..") or arg.startswith("~")
            or any(os.path.isfile(os.path.join(arg, name)) for name in _index_names()))


def fail(as_json: bool, message: str, code: int) -> int:
    if as_json:
        secrets.emit_json({"ok": False, "error": message, "exit": code})
    secrets.emit("engramory: %s\n" % message, sys.stderr)
    return code
