"""The journal's files: the entry format, reading from the end, appending, and the bound.

`journal.jsonl` holds one JSON object per line, one per transaction, oldest first: id, time,
command, its arguments (without bodies or secrets, see `slim_argv`) and per path the sha256
and size before and after. It is read from its end (`Reader.back`), so `log --limit 1`, the
next id and `undo` cost the same on a journal of 10 entries or of 10,000: each read is one
chunk of at most CHUNK bytes, through scope.read_bounded.

The bound: past JOURNAL_MAX bytes the live journal is rotated: its oldest entries, all but the
newest JOURNAL_KEEP bytes of them, move to `journal-history.jsonl` as metadata only (what was
done, when, the paths and their digests and sizes; no arguments), where `log` still lists
them and `undo` refuses them by name. The history keeps its newest HISTORY_MAX bytes. So the
two files together stay under JOURNAL_BOUND = JOURNAL_MAX + HISTORY_MAX (2 MiB) plus the
newest entry, after any number of writes; an ordinary entry (new, update) is under 1 KiB.

Standard library only; Python 3.9+.
"""

from __future__ import annotations

import hashlib
import json
import os

from engramory.store import metadir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

FORMAT = 1
JOURNAL_MAX = 1 << 20  # bytes of live journal; past it the oldest entries are rotated
JOURNAL_KEEP = 512 << 10  # bytes of newest entries a rotation keeps live (undoable)
HISTORY_MAX = 1 << 20  # bytes of rotated metadata kept
JOURNAL_BOUND = JOURNAL_MAX + HISTORY_MAX  # the two files together, plus the newest entry
CHUNK = 64 << 10  # bytes read from the journal's end at a time
LINE_MAX = 32 << 20  # a line longer than this is damage, never an entry: skipped
ARG_KEEP = 240  # characters of one argument kept in the journal
BODY_OPTIONS = ("--body", "--why", "--how")  # their values are note text: kept as length and sha256
ROTATED = "rotated out of the live journal: older than what undo reaches"


def slim_argv(argv: Sequence[str]) -> list[str]:
    """A command's arguments as the journal keeps them: a note body (--body, --why, --how,
    in any spelling argparse accepts) becomes its length and sha256, every secret value is
    masked (engramory.store.secrets, the one masker), and any other argument past ARG_KEEP
    characters is cut. So a 4 KB `update --body` adds well under 1 KB to the journal."""
    # lazy: reading the journal (each reconcile) must not load secrets and layout; only writing an entry does
    from engramory.store.secrets import redact

    out: list[str] = []
    body_next = False
    for arg in argv:
        arg = str(arg)
        if body_next:
            out.append(_condensed(arg))
            body_next = False
            continue
        if arg.startswith("--") and len(arg) > 3:
            name, eq, value = arg.partition("=")
            if any(opt.startswith(name) for opt in BODY_OPTIONS):
                if eq:
                    out.append(name + "=" + _condensed(value))
                else:
                    out.append(name)
                    body_next = True
                continue
        arg = redact(arg)
        out.append(arg if len(arg) <= ARG_KEEP else "%s\u2026 (%d chars)" % (arg[:ARG_KEEP], len(arg)))
    return out


def _condensed(value: str) -> str:
    if value == "-":
        return value  # "read it from stdin": no text here
    data = value.encode("utf-8", "surrogateescape")
    return "<%s bytes, sha256 %s>" % ("{:,}".format(len(data)), hashlib.sha256(data).hexdigest())


class FileChange:
    """One path in a journal entry, as recorded (hashes and sizes, not bytes). `kept` says
    whether the prior bytes are in the blob store (absent files need none); `why_not` why not."""

    __slots__ = ("path", "before", "after", "before_size", "after_size", "mode", "kept", "why_not")

    def __init__(self, path: str, before: str | None, after: str | None, before_size: int | None,
                 after_size: int | None, mode: int | None = None, kept: bool = True, why_not: str = "") -> None:
        self.path = path
        self.before = before
        self.after = after
        self.before_size = before_size
        self.after_size = after_size
        self.mode = mode
        self.kept = kept
        self.why_not = why_not

    def as_dict(self) -> dict[str, object]:
        d: dict[str, object] = {
            "path": self.path, "before": self.before, "after": self.after,
            "before_size": self.before_size, "after_size": self.after_size,
            "mode": self.mode, "kept": self.kept,
        }
        if self.why_not:
            d["why_not"] = self.why_not
        return d

    @classmethod
    def from_dict(cls, d: dict[str, object]) -> FileChange:
        def opt_int(v: object) -> int | None:
            return v if isinstance(v, int) and not isinstance(v, bool) else None

        def opt_str(v: object) -> str | None:
            return v if isinstance(v, str) else None

        path = d.get("path")
        if not isinstance(path, str):
            raise ValueError("change without a path")
        return cls(path, opt_str(d.get("before")), opt_str(d.get("after")), opt_int(d.get("before_size")),
                   opt_int(d.get("after_size")), opt_int(d.get("mode")), bool(d.get("kept", True)),
                   str(d.get("why_not") or ""))


class Entry:
    """One journal entry: one transaction. `undone` (a later undo took it back) and `rotated`
    (read from the history: metadata only) are filled in by the reader."""

    __slots__ = ("id", "time", "command", "argv", "changes", "undoes", "interrupted", "no_undo", "undone", "rotated")

    def __init__(self, id: int, time: str, command: str, argv: list[str], changes: list[FileChange],
                 undoes: int | None = None, interrupted: bool = False, no_undo: bool = False) -> None:
        self.id = id
        self.time = time
        self.command = command
        self.argv = argv
        self.changes = changes
        self.undoes = undoes
        self.interrupted = interrupted
        self.no_undo = no_undo
        self.undone = False
        self.rotated = False

    @property
    def paths(self) -> list[str]:
        return [c.path for c in self.changes]

    def undo_blocker(self) -> str | None:
        """Why this entry cannot be undone whatever the files hold now, or None."""
        if self.rotated:
            return ROTATED
        if self.no_undo:
            return "written with --no-undo: its prior bytes were not kept"
        for c in self.changes:
            if c.before is not None and not c.kept:
                return "the prior bytes of %s were not kept (%s)" % (c.path, c.why_not or "not kept")
        return None

    @property
    def undoable(self) -> bool:
        return self.undo_blocker() is None

    def as_dict(self) -> dict[str, object]:
        d: dict[str, object] = {
            "format": FORMAT, "id": self.id, "time": self.time, "command": self.command,
            "argv": list(self.argv), "changes": [c.as_dict() for c in self.changes],
        }
        if self.undoes is not None:
            d["undoes"] = self.undoes
        if self.interrupted:
            d["interrupted"] = True
        if self.no_undo:
            d["no_undo"] = True
        return d

    def metadata(self) -> dict[str, object]:
        """What the history keeps of a rotated entry: what was done, paths and digests."""
        d = self.as_dict()
        d.pop("argv")
        d["changes"] = [{k: v for k, v in c.as_dict().items() if k in ("path", "before", "after", "before_size",
                                                                        "after_size")} for c in self.changes]
        d["rotated"] = True
        return d

    @classmethod
    def from_dict(cls, d: dict[str, object]) -> Entry:
        id_ = d.get("id")
        if not isinstance(id_, int) or isinstance(id_, bool) or id_ < 1:
            raise ValueError("entry without a positive integer id")
        changes = d.get("changes")
        if not isinstance(changes, list):
            raise ValueError("entry without changes")
        argv = d.get("argv")
        undoes = d.get("undoes")
        e = cls(id_, str(d.get("time") or ""), str(d.get("command") or ""),
                [str(a) for a in argv] if isinstance(argv, list) else [],
                [FileChange.from_dict(c) for c in changes if isinstance(c, dict)],
                undoes if isinstance(undoes, int) and not isinstance(undoes, bool) else None,
                d.get("interrupted") is True, d.get("no_undo") is True)
        if d.get("rotated") is True:
            e.rotated = True
            for c in e.changes:
                c.kept, c.why_not = False, ROTATED
        return e

    def __repr__(self) -> str:
        return "Entry(%d, %s, %r)" % (self.id, self.command, self.paths)


def encode(d: dict[str, object]) -> bytes:
    return json.dumps(d, ensure_ascii=True, sort_keys=True, separators=(",", ":")).encode() + b"\n"


# -- reading ---------------------------------------------------------------------------------

def lines_back(where: str, chunk: int = CHUNK, end: int | None = None) -> Iterator[tuple[int, bytes]]:
    """(offset, line) of every non-blank line of the file (of its first `end` bytes), newest
    (last) first, reading at most `chunk` bytes at a time from the end; nothing when it does
    not exist."""
    if end is None:
        data, size = metadir.read(where, chunk - 1, offset=-chunk)
        end = size
    else:
        data, _ = metadir.read(where, min(chunk, end) - 1, offset=max(0, end - chunk))
    if data is None:
        return
    start = max(0, end - chunk)
    data = data[: end - start]
    tail = b""  # the start of a line that began before `data`'s window ended
    while True:
        parts = (data + tail).split(b"\n")
        if start > 0:
            tail = parts.pop(0)
            pos = start + len(tail) + 1
        else:
            pos = 0
        offsets = []
        for p in parts:
            offsets.append(pos)
            pos += len(p) + 1
        for off, p in zip(reversed(offsets), reversed(parts)):
            if p.strip():
                yield off, p
        if start == 0:
            return
        if len(tail) > LINE_MAX:
            tail = b""  # damage, not an entry: never held whole
        new_start = max(0, start - chunk)
        more, _ = metadir.read(where, start - new_start - 1, offset=new_start)
        data = (more or b"")[: start - new_start]
        start = new_start


def parse(line: bytes) -> Entry | None:
    try:
        d = json.loads(line.decode("utf-8"))
        return Entry.from_dict(d) if isinstance(d, dict) else None
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None


class Reader:
    """The journal of one store, newest first: the live journal, then the history. Lines
    that are not entries (a torn last line after a crash, a hand edit) are skipped and
    counted in `damaged`, never fatal."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.damaged = 0

    def raw_back(self) -> Iterator[Entry]:
        floor = None
        for name in (metadir.JOURNAL, metadir.HISTORY):
            for _, line in lines_back(metadir.path(self.root, name)):
                e = parse(line)
                if e is None:
                    self.damaged += 1
                    continue
                if floor is not None and e.id >= floor:
                    continue  # already read (a rotation interrupted between its two writes)
                floor = e.id
                if name == metadir.HISTORY and not e.rotated:
                    e.rotated = True
                yield e

    def back(self) -> Iterator[Entry]:
        """Every entry, newest first, with `undone` set: an entry is undone when a later undo
        of it is not itself undone, which the entries after it already tell."""
        taken_back: set[int] = set()
        for e in self.raw_back():
            e.undone = e.id in taken_back
            if e.undoes is not None and not e.undone:
                taken_back.add(e.undoes)
            yield e

    def newest(self, limit: int) -> list[Entry]:
        out: list[Entry] = []
        for e in self.back():
            if len(out) >= limit:
                break
            out.append(e)
        return out


def last_id(root: str) -> int:
    for e in Reader(root).raw_back():
        return e.id
    return 0


def entries(root: str) -> list[Entry]:
    """Every entry, oldest first, with `undone` set (reads the whole journal: for tests and
    tools; the commands read from the end)."""
    found = list(Reader(root).back())
    found.reverse()
    return found


# -- writing ---------------------------------------------------------------------------------

def append(root: str, entry: Entry) -> int:
    """Append `entry` (fsync); the journal's size after it. A torn line left by a crash stays
    on its own line."""
    where = metadir.path(root, metadir.JOURNAL)
    line = encode(entry.as_dict())
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(where, flags, 0o600)
    except OSError as exc:
        if os.path.lexists(where):
            raise metadir.damaged(where, metadir.kind(os.lstat(where).st_mode)) from None
        raise metadir.StoreDamaged("%s cannot be written (%s); nothing was journaled"
                                   % (where, exc.strerror or exc)) from None
    try:
        st = os.fstat(fd)
        if metadir.kind(st.st_mode) != "a file":
            raise metadir.damaged(where, metadir.kind(st.st_mode))
        if st.st_size:
            last, _ = metadir.read(where, 0, offset=st.st_size - 1)
            if last != b"\n":
                line = b"\n" + line
        os.write(fd, line)
        os.fsync(fd)
        return int(st.st_size) + len(line)
    finally:
        os.close(fd)


def rotate(root: str, keep: int | None = None) -> int:
    """Move all but the newest `keep` bytes of live entries (default JOURNAL_KEEP; the newest
    entry always stays when `keep` > 0) into the history as metadata; how many the history
    took (older ones past its budget are dropped). Only the newest HISTORY_MAX bytes of metadata are kept, so the moved entries are
    read from the newest back until that budget is full: a 40 MB journal of an older version
    costs what a 1 MiB one does. The history is written first, then the live journal: a
    crash in between leaves an entry in both, which the reader takes once."""
    keep = JOURNAL_KEEP if keep is None else keep
    where = metadir.path(root, metadir.JOURNAL)
    _, size = metadir.read(where, -1)
    cut = size
    for off, _ in lines_back(where):
        if size - off > keep and (keep <= 0 or cut < size):
            break
        cut = off
    if cut <= 0:
        return 0
    newest_first: list[bytes] = []
    held = 0
    moved = 0
    for _, line in lines_back(where, end=cut):
        e = parse(line)
        if e is None:
            continue
        meta = encode(e.metadata())
        if held + len(meta) > HISTORY_MAX:
            break
        moved += 1
        newest_first.append(meta)
        held += len(meta)
    history = metadir.path(root, metadir.HISTORY)
    if held < HISTORY_MAX:
        for _, line in lines_back(history):
            if held + len(line) + 1 > HISTORY_MAX:
                break
            newest_first.append(line + b"\n")
            held += len(line) + 1
    newest_first.reverse()
    metadir.write_atomic(history, b"".join(newest_first), 0o600)
    kept, _ = metadir.read(where, size - cut - 1, offset=cut)
    metadir.write_atomic(where, (kept or b"")[: size - cut], 0o600)
    return moved
