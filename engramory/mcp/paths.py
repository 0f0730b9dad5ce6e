"""`/memories/...` as the model writes it, and the file of the store it names.

`/memories` is the store root (the folder given as `--root`). A path is refused, with what
to write instead, when it is not under `/memories`, holds `..`, `.`, an empty part, a
backslash or a control character, names a hidden file (`.engramory/`, the journal; the store
config `.engramory.json`; `.git`), or leads outside the root through a symlink. Live notes sit
directly in the root, retired ones in `archive/`; nothing else is a note.
"""

from __future__ import annotations

import os

from engramory import config
from engramory.store import reader as store
from engramory.store.secrets import quote

PREFIX = "/memories"

ROOT = "root"  # /memories itself
INDEX = "index"  # /memories/MEMORY.md (or the name the environment gives the index)
NOTE = "note"  # /memories/<name>.md
ARCHIVE_DIR = "archive-dir"  # /memories/archive
ARCHIVED = "archived"  # /memories/archive/<name>.md
OTHER = "other"  # anything else inside the root (a folder, a file that is not a note)


class PathRefused(Exception):
    """The path cannot be used; the message says why and what to pass instead."""


class Target:
    """One resolved path: `rel` inside the root ("" for the root, "/"-separated), its
    `kind`, `shown` (the path as the model wrote it, normalised) and `full` (on disk)."""

    __slots__ = ("rel", "kind", "shown", "full")

    def __init__(self, rel: str, kind: str, shown: str, full: str) -> None:
        self.rel = rel
        self.kind = kind
        self.shown = shown
        self.full = full

    @property
    def slug(self) -> str:
        return self.rel.rsplit("/", 1)[-1][:-3] if self.rel.endswith(".md") else ""


def shown(rel: str) -> str:
    """The /memories path of a store path."""
    return PREFIX + ("/" + rel if rel else "")


def resolve(root: str, path: object, index_rel: str) -> Target:
    """The Target `path` names, or PathRefused."""
    if not isinstance(path, str) or not path:
        raise PathRefused("give a path under /memories, e.g. /memories or /memories/MEMORY.md")
    if any(ord(c) < 0x20 or ord(c) == 0x7F or 0xD800 <= ord(c) < 0xE000 for c in path) or "\\" in path:
        raise PathRefused("the path holds a control character or a backslash; write it as /memories/<name>.md")
    if path == "/":
        path = PREFIX  # the model's "the top": the store root, as /memories
    if path != PREFIX and not path.startswith(PREFIX + "/"):
        raise PathRefused("%s is outside the memory store: every path starts with /memories (the store root), "
                          "e.g. /memories/MEMORY.md or /memories/<name>.md" % _q(path))
    rest = path[len(PREFIX) + 1:] if path != PREFIX else ""
    if rest.endswith("/"):
        rest = rest[:-1]
    parts = rest.split("/") if rest else []
    for part in parts:
        if part in ("", ".", ".."):
            raise PathRefused("%s holds %s; a path names one file under /memories, without '.', '..' or '//'"
                              % (_q(path), "an empty part" if not part else repr(part)))
        if part.startswith("."):
            raise PathRefused(_hidden(part))
    rel = "/".join(parts)
    full = os.path.join(root, *parts) if parts else root
    _inside(root, full, path)
    return Target(rel, _kind(parts, rel, index_rel), shown(rel), full)


def _hidden(part: str) -> str:
    if part == config.CONFIG_NAME:
        return ("%s is the store config (caps, read-only files): the user's to change, never the agent's; it is "
                "not reachable through this server" % config.CONFIG_NAME)
    if part == ".engramory":
        return ".engramory/ holds the store's journal and undo data: it is not reachable through this server"
    return "%s is a hidden file: only notes, archive/ and the index are reachable through this server" % _q(part)


def _kind(parts: list[str], rel: str, index_rel: str) -> str:
    if not parts:
        return ROOT
    if rel == index_rel:
        return INDEX
    if len(parts) == 1:
        if parts[0] == store.ARCHIVE:
            return ARCHIVE_DIR
        return NOTE if parts[0].endswith(".md") else OTHER
    if len(parts) == 2 and parts[0] == store.ARCHIVE and parts[1].endswith(".md"):
        return ARCHIVED
    return OTHER


def _inside(root: str, full: str, path: str) -> None:
    """Refuse a path whose real location (symlinks followed) lies outside the root."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(full)
    if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
        raise PathRefused("%s leads outside the memory store through a symlink; it is not reachable through this "
                          "server" % _q(path))


def _q(text: str) -> str:

    return quote(text, 80)
