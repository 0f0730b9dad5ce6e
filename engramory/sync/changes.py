"""What a sync moves, in the store's own terms: which notes it would delete (a move into
archive/ is not a deletion), the commit message that lists engramory's journal entries since
the last sync and, apart, the changes made outside engramory, and the journal entry of what a
pull brought in (so `engramory undo` and `review` know it, and older entries undo by key)."""

from __future__ import annotations

import json
import os

from engramory import fsutil, scope
from engramory.store import journal, secrets
from engramory.sync import gitops

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

INDEX = "MEMORY.md"
ARCHIVE = "archive"
STATE = os.path.join(".engramory", "sync.json")
MESSAGE_LINES = 60  # entries listed in one commit message; past it, "and N more"
READ_MAX = 16 << 20


class Where:
    """The store inside its repository: `top` the work tree, `prefix` the store's folder
    relative to it ('' when the store is the repository)."""

    __slots__ = ("root", "top", "prefix")

    def __init__(self, root: str, top: str) -> None:
        self.root = root
        self.top = top
        rel = os.path.relpath(os.path.realpath(root), top).replace(os.sep, "/")
        self.prefix = "" if rel == "." else rel

    @property
    def spec(self) -> list[str]:
        return [self.prefix or "."]

    def in_store(self, path: str) -> str | None:
        """`path` (relative to the top) relative to the store, or None outside it."""
        if not self.prefix:
            return path
        return path[len(self.prefix) + 1:] if path.startswith(self.prefix + "/") else None


def is_live_note(rel: str) -> bool:
    """A live note of the store: a `.md` file outside archive/ and dot folders, not the index."""
    parts = rel.split("/")
    return (rel.lower().endswith(".md") and rel != INDEX and parts[0] != ARCHIVE
            and not any(p.startswith(".") for p in parts))


def live_notes(where: Where, commit: str | None) -> list[str]:
    if commit is None:
        return []
    found = [where.in_store(p) for p in gitops.tree_files(where.top, commit, where.prefix)]
    return [r for r in found if r is not None and is_live_note(r)]


def deletions(where: Where, changes: Sequence[tuple[str, str, str]]) -> list[str]:
    """The live notes a change list deletes: a plain deletion, or a rename out of the live
    notes to anywhere but archive/ counts only when it leaves the store's notes altogether."""
    out = []
    for letter, old, new in changes:
        rel = where.in_store(old)
        if rel is None or not is_live_note(rel):
            continue
        if letter == "D":
            out.append(rel)
        elif letter == "R":
            dest = where.in_store(new)
            if dest is None or not (is_live_note(dest) or dest.split("/")[0] == ARCHIVE):
                out.append(rel)
    return out


def archived_since(where: Where, deleted: Sequence[str]) -> list[str]:
    """The deletions the work tree shows that are really moves into archive/ (a not yet
    committed move is a deletion plus an untracked file to git's diff)."""
    out = []
    for rel in deleted:
        for moved in (ARCHIVE + "/" + rel, ARCHIVE + "/" + rel.rsplit("/", 1)[-1]):
            if os.path.isfile(os.path.join(where.root, *moved.split("/"))):
                break
        else:
            out.append(rel)
    return out


def too_many(deleted: int, live: int) -> bool:
    """More than max(10, 10 %) of the live notes."""
    return deleted * 10 > max(100, live)


# -- the state between syncs -------------------------------------------------------------------

def load_state(root: str) -> dict[str, object]:
    try:
        data, _ = scope.read_bounded(os.path.join(root, STATE), 1 << 20)
        obj = json.loads(data.decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return obj if isinstance(obj, dict) else {}


def save_state(root: str, state: dict[str, object]) -> None:
    os.makedirs(os.path.join(root, ".engramory"), mode=0o700, exist_ok=True)
    fsutil.write_atomic(os.path.join(root, STATE), json.dumps(state, sort_keys=True).encode(), 0o600)


def _seen(state: dict[str, object]) -> int:
    value = state.get("journal_seen")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


# -- the commit message -------------------------------------------------------------------------

def _disk_sha(root: str, rel: str) -> str | None:
    try:
        data, _ = scope.read_bounded(os.path.join(root, *rel.split("/")), READ_MAX)
    except OSError:
        return None
    return journal.sha256(data)


def commit_message(where: Where, status: Sequence[tuple[str, str]], state: dict[str, object]) -> str:
    """One line of summary, then engramory's journal entries since the last sync, then the
    files changed in some other way (an editor, the host's own tools, a shell), as such."""
    since = _seen(state)
    entries = [e for e in journal.entries(where.root) if e.id > since and e.command != "sync"]
    foreign = _foreign(where, status, entries)
    head = "engramory sync: %d write%s by engramory, %d change%s from outside it" % (
        len(entries), "" if len(entries) == 1 else "s", len(foreign), "" if len(foreign) == 1 else "s")
    body = []
    if entries:
        body.append("engramory's journal since the last sync (`engramory log` on this machine):")
        for e in entries[:MESSAGE_LINES]:
            body.append("  %d  %s  %s" % (e.id, e.command, ", ".join(e.paths)))
        if len(entries) > MESSAGE_LINES:
            body.append("  and %d more" % (len(entries) - MESSAGE_LINES))
    if foreign:
        body.append("changed outside engramory (not in its journal):")
        body.extend(foreign[:MESSAGE_LINES])
        if len(foreign) > MESSAGE_LINES:
            body.append("  and %d more" % (len(foreign) - MESSAGE_LINES))
    return secrets.redact(head + ("\n\n" + "\n".join(body) if body else "") + "\n")


def _foreign(where: Where, status: Sequence[tuple[str, str]], entries: Sequence[journal.Entry]) -> list[str]:
    """`  path  kind` for each changed file that is not what engramory's own newest write of it
    left: something else made that change."""
    last: dict[str, str | None] = {}
    for e in entries:
        for c in e.changes:
            last[c.path] = c.after
    out = []
    for xy, path in status:
        rel = where.in_store(path)
        if rel is None:
            continue
        if rel not in last or last[rel] != _disk_sha(where.root, rel):
            kind = "added" if xy.strip() in ("??", "A") else "deleted" if "D" in xy else "changed"
            out.append("  %s  %s" % (rel, kind))
    return out


# -- journaling what a pull brought in ----------------------------------------------------------

def journal_pull(where: Where, before: str, after: str, label: str) -> journal.Entry | None:
    """One journal entry (command "sync") with every store file the merge from commit `before`
    to `after` changed: prior bytes from git, the new ones from the disk."""
    changes = []
    for letter, old, new in gitops.diff_names(where.top, before, after, where.spec):
        paths = [old, new] if letter in "RC" and old != new else [new]
        for path in paths:
            rel = where.in_store(path)
            if rel is None or rel.split("/")[0] == ".engramory" or not rel.lower().endswith(".md"):
                continue
            prior = gitops.show(where.top, "%s:%s" % (before, path))
            now = _disk(where.root, rel)
            if prior != now:
                changes.append(journal.Change(rel, prior, now))
    if not changes:
        return None
    return journal.record(where.root, "sync", changes, ["pull", label, after[:12]])


def _disk(root: str, rel: str) -> bytes | None:
    try:
        data, _ = scope.read_bounded(os.path.join(root, *rel.split("/")), READ_MAX)
    except FileNotFoundError:
        return None
    except OSError:
        return None
    return data
