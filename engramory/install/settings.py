"""Settings documents and their edits, for every host's installer: a JSON (or JSONC)
settings file read with its exact bytes and edited in place (JsonDoc), one file's change
applied safely (Change, apply_change), Claude-shaped hook groups merged in and taken out
(add_hook_groups, remove_hooks), and the user's own bytes given back on uninstall
(restore_bytes). Part of the installer core; engramory.installer re-exports all of it.
Standard library only; Python 3.9+.
"""

from __future__ import annotations

import copy
import difflib
import errno
import os
import stat

from engramory import fsutil
from engramory.install import jsonedit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from typing import Any

BOM = b"\xef\xbb\xbf"


class SettingsError(Exception):
    """A settings file we refuse to touch; the message names the file, the problem and what
    to do next."""


class WriteError(SettingsError):
    """Writing failed part-way (permissions, disk full): some changes may have been made."""


def json_type(value: object) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"


# -- JSON documents edited in place -------------------------------------------------------

MAX_SETTINGS = 16 << 20  # bytes; a settings file larger than this is not one we edit


def read_regular(path: str, limit: int = MAX_SETTINGS) -> bytes | None:
    """The bytes of the regular file at `path` (links followed), None when it does not exist.
    Never blocks: a FIFO, device or folder is refused before it is opened, and a file past
    `limit` bytes is refused too (OSError with a message that says which)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        raise OSError(errno.EINVAL, "not a regular file (a folder, FIFO or device)", path)
    if st.st_size > limit:
        raise OSError(errno.EFBIG, "larger than %d bytes (%d)" % (limit, st.st_size), path)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):  # swapped after the stat
            raise OSError(errno.EINVAL, "not a regular file", path)
        data = f.read(limit + 1)
    if len(data) > limit:
        raise OSError(errno.EFBIG, "larger than %d bytes" % limit, path)
    return data


class JsonDoc:
    """A JSON settings file as read: its exact bytes (None when missing) and the parsed
    object. `render(new_data)` gives the bytes for `new_data` with every untouched byte kept
    (engramory.install.jsonedit: numbers as written, escapes, BOM, CRLF, spacing). `load` raises
    SettingsError for anything it cannot safely edit, naming the file, line and column.
    `comments=True` is for hosts whose settings are JSONC (comments and trailing commas)."""

    def __init__(self, path: str, raw: bytes | None, data: dict[str, Any], tree: jsonedit.Node | None = None,
                 comments: bool = False) -> None:
        self.path = path
        self.raw = raw
        self.data = data
        self.tree = tree
        self.comments = comments
        self.bom = bool(raw and raw.startswith(BOM))

    @property
    def exists(self) -> bool:
        return self.raw is not None

    @property
    def text(self) -> str:
        if not self.raw:
            return ""
        return (self.raw[3:] if self.bom else self.raw).decode("utf-8")

    @classmethod
    def load(cls, path: str, comments: bool = False, host: str = "the host") -> JsonDoc:
        try:
            raw = read_regular(path)
        except OSError as exc:
            raise SettingsError(
                "%s: cannot be read (%s); check the path and its permissions"
                % (path, exc.strerror or exc.__class__.__name__)
            ) from None
        if raw is None:
            if os.path.islink(path):
                raise SettingsError(
                    "%s is a link to %s, which does not exist; fix or remove the link, then run "
                    "this again" % (path, os.path.realpath(path))
                )
            return cls(path, None, {}, comments=comments)
        body = raw[3:] if raw.startswith(BOM) else raw
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = body.count(b"\n", 0, exc.start) + 1
            column = exc.start - (body.rfind(b"\n", 0, exc.start) + 1) + 1
            raise SettingsError(
                "%s: not UTF-8 text (byte 0x%02x at line %d, column %d); %s reads settings as "
                "UTF-8: save the file as UTF-8, then run this again"
                % (path, body[exc.start], line, column, host)
            ) from None
        if not text.strip():
            return cls(path, raw, {}, comments=comments)
        try:
            tree = jsonedit.parse(text, comments=comments)
        except jsonedit.DuplicateKey as exc:
            raise SettingsError(
                "%s: the key %r appears twice in one object (line %d); editing the file would "
                "silently keep only one of them: remove the duplicate, then run this again"
                % (path, exc.key[:60], exc.line)
            ) from None
        except jsonedit.JsonError as exc:
            raise SettingsError(
                "%s: not valid JSON: %s at line %d, column %d; fix it (%s), then run this again"
                % (path, exc.msg, exc.line, exc.column,
                   "JSON allows no comments and no trailing commas" if not comments else "JSONC")
            ) from None
        if tree.kind != "object":
            raise SettingsError(
                "%s: the top level is %s, not an object; a settings file is one JSON object "
                "({...}): fix it, then run this again" % (path, json_type(tree.value))
            )
        return cls(path, raw, tree.value, tree, comments)

    def render(self, data: Mapping[str, Any]) -> bytes:
        """The bytes this file holds once it says `data`: only what differs is rewritten."""
        if self.raw is not None and jsonedit.same(dict(data), self.data):
            return self.raw
        text = jsonedit.edit(self.text, dict(data), comments=self.comments, tree=self.tree)
        try:
            encoded = text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate we were asked to write: escape it
            encoded = text.encode("utf-8", "backslashreplace")
        return (BOM if self.bom else b"") + encoded


def check_hooks_shape(doc: JsonDoc, events: Iterable[str]) -> None:
    """Refuse a `hooks` value (or an event list under it) whose shape we cannot merge into
    without guessing."""
    hooks = doc.data.get("hooks")
    if hooks is None and "hooks" not in doc.data:
        return
    if not isinstance(hooks, dict):
        raise SettingsError(
            "%s: \"hooks\" is %s, not an object of event names; fix it, then run this again"
            % (doc.path, json_type(hooks))
        )
    for event in events:
        if event in hooks and not isinstance(hooks[event], list):
            raise SettingsError(
                "%s: \"hooks\".%s is %s, not an array of matcher groups; fix it, then run this again"
                % (doc.path, event, json_type(hooks[event]))
            )


def canonical(data: Any) -> str:
    """A form in which two JSON values are equal exactly when they mean the same thing
    (True and 1 differ here, unlike in Python; numbers compare as written)."""
    return jsonedit.canonical(data)


# -- applying a change to one file -------------------------------------------------------


class Change:
    """One file's bytes before and after (None = missing / to be deleted)."""

    def __init__(self, path: str, before: bytes | None, after: bytes | None) -> None:
        self.path = path
        self.before = before
        self.after = after

    @property
    def changed(self) -> bool:
        return self.before != self.after


def unified_diff(path: str, before: bytes | None, after: bytes | None) -> str:
    """A unified diff of two versions of a text file ("" when equal)."""
    if before == after:
        return ""

    def lines(data: bytes | None) -> list[str]:
        if data is None:
            return []
        return data.decode("utf-8", "replace").splitlines(keepends=True)

    out = difflib.unified_diff(
        lines(before), lines(after),
        fromfile=path if before is not None else "/dev/null",
        tofile=path if after is not None else "/dev/null",
    )
    text = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in out)
    return text


def apply_change(change: Change) -> str | None:
    """Write one change safely: refuse if the file changed since it was read, back up the old
    bytes (fsutil.backup, with the file's own mode: a 0600 file's backup is 0600), then
    replace (or delete) atomically, keeping the mode. Returns the backup path."""
    if not change.changed:
        return None
    # A settings file kept as a link (dotfiles) stays a link: write through it to its target.
    path = os.path.realpath(change.path)
    current = read_regular(path)
    if current != change.before:
        raise SettingsError(
            "%s: changed on disk while this ran (another program wrote it); nothing was "
            "written to it: run this again" % change.path
        )
    saved = fsutil.backup(path) if change.before is not None else None
    if change.after is None:
        os.unlink(change.path)  # the link itself, when it is one: its target keeps the backup
    else:
        fsutil.write_atomic(path, change.after)
    return saved


# -- merging hook entries (Claude Code's settings / hooks.json shape) ---------------------


def ours_in(groups: list[Any], is_ours: Callable[[Any], bool]) -> list[Any]:
    found: list[Any] = []
    for group in groups:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            found.extend(h for h in group["hooks"] if is_ours(h))
    return found


def _remove_from_groups(groups: list[Any], is_ours: Callable[[Any], bool]) -> int:
    """Take our handlers out of an event's groups, dropping groups left empty by it."""
    removed = 0
    for group in list(groups):
        if not (isinstance(group, dict) and isinstance(group.get("hooks"), list)):
            continue
        kept = [h for h in group["hooks"] if not is_ours(h)]
        if len(kept) == len(group["hooks"]):
            continue
        removed += len(group["hooks"]) - len(kept)
        if kept:
            group["hooks"] = kept
        else:
            groups.remove(group)
    return removed


def add_hook_groups(
    data: Mapping[str, Any],
    wanted: Sequence[tuple[str, str | None, dict[str, Any]]],
    is_ours: Callable[[Any], bool],
) -> tuple[dict[str, Any], list[str], list[str]]:
    """Merge one matcher group per (event, matcher, handler) into `data["hooks"]`.

    Returns (new data, containers created as "hooks" / "hooks/<event>", one line per event).
    An event that already holds exactly the wanted handler under the wanted matcher is left
    byte-for-byte alone; otherwise our old handlers there are removed and the group appended.
    Foreign groups and handlers are never changed. `data` itself is not modified.
    """
    new = copy.deepcopy(dict(data))
    created: list[str] = []
    if "hooks" not in new:
        new["hooks"] = {}
        created.append("hooks")
    hooks = new["hooks"]
    report = []
    for event, matcher, handler in wanted:
        if event not in hooks:
            hooks[event] = []
            created.append("hooks/" + event)
        groups = hooks[event]
        label = "%s%s" % (event, " (%s)" % matcher if matcher else "")
        ours = ours_in(groups, is_ours)
        present = len(ours) == 1 and any(
            isinstance(g, dict) and g.get("matcher") == matcher and handler in g.get("hooks", [])
            for g in groups
        )
        if present:
            report.append("%s: already present" % label)
            continue
        replaced = _remove_from_groups(groups, is_ours)
        group: dict[str, Any] = {"matcher": matcher} if matcher is not None else {}
        group["hooks"] = [handler]
        groups.append(group)
        report.append("%s: %s" % (label, "replaced our earlier entry" if replaced else "added"))
    return new, created, report


def remove_hooks(
    data: Mapping[str, Any], is_ours: Callable[[Any], bool], created: Sequence[str] | None = None
) -> tuple[dict[str, Any], int]:
    """`data` without our handlers, and how many were removed. Containers we emptied are
    dropped when install created them (`created`), or always when that is unknown (None)."""
    new = copy.deepcopy(dict(data))
    hooks = new.get("hooks")
    if not isinstance(hooks, dict):
        return new, 0
    total = 0
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        removed = _remove_from_groups(groups, is_ours)
        total += removed
        if removed and not groups and (created is None or "hooks/" + event in created):
            del hooks[event]
    if total and not hooks and (created is None or "hooks" in created):
        del new["hooks"]
    return new, total


def backups_of(path: str, limit: int = 50) -> list[str]:
    """The backups fsutil.backup made of `path` (beside its real file), newest first."""
    path = os.path.realpath(path)
    folder = os.path.dirname(path) or "."
    prefix = os.path.basename(path) + ".engramory-backup-"
    try:
        names = [n for n in os.listdir(folder) if n.startswith(prefix)]
    except OSError:
        return []
    paths = [os.path.join(folder, n) for n in names]

    def mtime(p: str) -> float:
        try:
            return os.stat(p).st_mtime
        except OSError:
            return 0.0

    return sorted(paths, key=lambda p: (mtime(p), p), reverse=True)[:limit]


def restore_bytes(doc: JsonDoc, data: Mapping[str, Any]) -> bytes:
    """The bytes to write for `data`: when a backup of the file holds exactly this content,
    its bytes (so uninstall gives back the user's own formatting, byte for byte); else
    `data` rendered in the file's style."""
    want = canonical(data)
    for backup in backups_of(doc.path):
        try:
            if os.path.getsize(backup) > (4 << 20):
                continue
            old = JsonDoc.load(backup)
        except (OSError, SettingsError):
            continue
        if old.exists and canonical(old.data) == want:
            assert old.raw is not None
            return old.raw
    return doc.render(data)
