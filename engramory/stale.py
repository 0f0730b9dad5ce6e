"""Stale writes (issue 22): what this session last saw of an index, and the rule that refuses a
write that would drop lines another writer added since.

The record, one file per (host, session) and store: `<store>/.engramory/seen/<key>.json`,
`key` = the first 16 hex digits of sha256(host NUL session id). It holds, per index of that
store (by its path relative to the store), the sha256 of the bytes the agent last saw and a
short salted hash of each of their lines (since version 2 one string of HASH_HEX-digit hashes,
which the hook's own JSON reader takes in one step; version 1's list is still read): never a
line's text, so no secret is copied. It is written atomically (engramory.fsutil.replace_with,
through posix: no `os` to import), is a few KB (an index over MAX_LINES lines or
scope.READ_LIMIT bytes is not recorded at all) and the folder is pruned to MAX_FILES files and
MAX_AGE seconds whenever a new one is made. The folder holds a `.gitignore` of `*`. A read that
finds the record as it would write it does not rewrite it: it only touches its time (pruning
goes by it).

It is refreshed
- by `note_read` after the host's read tool showed the index to the agent (the bytes on disk
  then: a write that lands between the read and this hook makes the record hold a line the
  agent did not see, an error towards allowing, never towards a false deny), and at
  SessionStart where the host loads the index into the prompt;
- by `note_write`, when the guard lets the agent's own write through: the lines the write
  brings in are the agent's own, so they count as seen even if the host then refuses the call.

The rule (`lost_lines`, called by guard.judge when the host passes a `Session`): with no
record for this index, nothing (today's behaviour). When the bytes on disk hash as recorded,
nothing. Otherwise `added` = the non-blank lines on disk whose hash the record does not hold,
and `lost` = the added lines the predicted result no longer holds: a non-empty `lost` is a
deny (`message`). A compaction from a current read removes only lines the agent saw, so it is
never refused; one from a stale read is refused once, until the agent reads the index again.

Any error reading or writing a record is silence: the guard fails open. Standard library only.
"""

from engramory import jsonlite, scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

VERSION = 2
VERSIONS = (1, 2)  # the records this code reads
MAX_FILES = 64
MAX_AGE = 30 * 24 * 3600
MAX_LINES = 4096  # past this an index is not recorded (200 lines is the standard hard cap)
MAX_INDEXES = 16  # indexes of one store one record keeps (the oldest go first)
RECORD_LIMIT = 256 << 10  # a record file past this is not read (it is not one engramory wrote)
HASH_HEX = 16  # 8 bytes of sha256 per line
SHOW = 3
# the record folder, `<store>/<metadir.DIR>/<metadir.SEEN>`, spelled here so that no hook path
# imports engramory.store.metadir (and with it os, 15% of a bare start) unless the store has no
# `.engramory` yet; with no record folder, one stat says there is nothing to judge
# (tests/unit/kernel/test_stale.py holds the two spellings equal)
SEEN_DIR = (".engramory", "seen")
IGNORE = b"# what each agent session last saw of the index (hashes only), for the stale-write check: never committed\n*\n"


class Session:
    """Who is writing: the host's registry name and its own session id."""

    __slots__ = ("host", "id")

    def __init__(self, host: "str", session_id: "str") -> "None":
        self.host = host
        self.id = session_id

    def key(self) -> "str":
        return scope.record_key(self.host, self.id)


def session(host: "str", session_id: "object") -> "Session | None":
    """A Session for a payload's session id, or None when it has none (then nothing is kept)."""
    if not isinstance(session_id, str) or not session_id or len(session_id) > 4096:
        return None
    return Session(host, session_id)


# -- lines ------------------------------------------------------------------------------------


def lines_of(data: "bytes") -> "Iterator[tuple[int, bytes]]":
    """(1-based number, line without its line break) of every line of `data`."""
    parts = data.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    for number, line in enumerate(parts, 1):
        yield number, line[:-1] if line.endswith(b"\r") else line


def line_hash(salt: "bytes", line: "bytes") -> "str":
    return scope.sha256_hex(salt + line)[:HASH_HEX]


def hashes(salt: "bytes", data: "bytes") -> "set[str]":
    return {line_hash(salt, line) for _, line in lines_of(data)}


def digest(data: "bytes") -> "str":
    return scope.sha256_hex(data)


# -- where a record lives ---------------------------------------------------------------------


def _place(path: "str") -> "tuple[str, str]":
    """(store root, the index's path relative to it) for the index `path`."""
    real = scope.realpath(path)
    return scope.dirname(real), scope.basename(real)


def _folder(root: "str") -> "str":
    return scope.join(root, *SEEN_DIR)


def _recorded(root: "str") -> "bool":
    """Whether any session of this store has a record (one stat): without the folder there is
    nothing to judge and nothing to update, and no hash is computed."""
    return scope.isdir(_folder(root))


def _file(root: "str", who: "Session") -> "str":
    return scope.join(_folder(root), who.key() + ".json")


def _load(where: "str") -> "dict[str, object] | None":
    """The record at `where`, or None when there is none or it is not one engramory wrote."""
    try:
        raw = scope.read_bounded(where, RECORD_LIMIT)[0]
    except OSError:
        return None
    if len(raw) > RECORD_LIMIT:
        return None
    try:
        data = jsonlite.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("v") not in VERSIONS or not isinstance(data.get("salt"), str):
        return None
    if not isinstance(data.get("indexes"), dict):
        return None
    return data


def _entry(data: "dict[str, object]", rel: "str") -> "tuple[str, set[str]] | None":
    indexes = data.get("indexes")
    entry = indexes.get(rel) if isinstance(indexes, dict) else None
    if not isinstance(entry, dict):
        return None
    sha, lines = entry.get("sha256"), entry.get("lines")
    if not isinstance(sha, str):
        return None
    if isinstance(lines, str):  # version 2: the hashes end to end
        if len(lines) % HASH_HEX:
            return None
        return sha, {lines[i:i + HASH_HEX] for i in range(0, len(lines), HASH_HEX)}
    if not isinstance(lines, list) or not all(isinstance(h, str) for h in lines):
        return None
    return sha, set(lines)


def _lexists(path: "str") -> "bool":
    try:
        scope.lstat(path)
    except (OSError, ValueError):
        return False
    return True


def _save(root: "str", where: "str", data: "dict[str, object]", new: "bool") -> "None":
    from engramory import fsutil  # lazy: only a record that changed is written

    folder = _folder(root)
    meta = scope.dirname(folder)
    calls = scope.calls()
    if new:
        if not _lexists(meta):
            from engramory.store import metadir  # lazy: imports os; once, for a store with no .engramory yet

            metadir.meta_dir(root)
        if scope.islink(meta) or not scope.isdir(meta):
            return  # not a folder engramory keeps: record nothing
        try:
            calls.mkdir(folder, 0o700)
        except FileExistsError:
            pass
        if scope.islink(folder) or not scope.isdir(folder):
            return
        if not _lexists(scope.join(folder, ".gitignore")):
            fsutil.replace_with(scope.join(folder, ".gitignore"), IGNORE, 0o600, sync=False)
        prune(folder)
    elif scope.islink(where):
        return
    fsutil.replace_with(where, jsonlite.dumps(data).encode("utf-8"), 0o600, sync=False)


def prune(folder: "str", keep: "int" = MAX_FILES, max_age: "float" = MAX_AGE, now: "float | None" = None) -> "None":
    """Remove records older than `max_age` seconds, then the oldest past `keep - 1` (room for
    the one about to be written). Only `<16 hex>.json` files are touched."""
    import time

    now = time.time() if now is None else now
    found: list[tuple[float, str]] = []
    try:
        names = scope.listdir(folder)
    except OSError:
        return
    for name in names:
        if len(name) != 21 or not name.endswith(".json"):
            continue
        where = scope.join(folder, name)
        try:
            st = scope.lstat(where)
        except OSError:
            continue
        found.append((st.st_mtime, where))
    found.sort()
    doomed = [w for t, w in found if now - t > max_age]
    alive = [w for t, w in found if now - t <= max_age]
    doomed += alive[: max(0, len(alive) - (keep - 1))]
    for where in doomed:
        try:
            scope.calls().unlink(where)
        except OSError:
            pass


def _read_index(path: "str") -> "bytes | None":
    return scope.read_regular(path)


# -- refreshing -------------------------------------------------------------------------------


def _store(path: "str", who: "Session", update: "Callable[[bytes, tuple[str, set[str]] | None], tuple[str, set[str]] | None]") -> "None":
    """Apply `update(salt, entry now) -> new entry (None: forget it)` to the record of `path`."""
    import time

    root, rel = _place(path)
    where = _file(root, who)
    data = _load(where)
    new = data is None
    if data is None:
        data = {"v": VERSION, "salt": scope.calls().urandom(8).hex(), "indexes": {}}
    try:
        salt = bytes.fromhex(str(data["salt"]))
    except ValueError:
        return
    indexes = data["indexes"]
    assert isinstance(indexes, dict)
    old = _entry(data, rel)
    entry = update(salt, old)
    if entry is None:
        if rel not in indexes:
            return
        del indexes[rel]
    elif len(entry[1]) > MAX_LINES:
        if rel not in indexes:
            return
        del indexes[rel]
    else:
        if not new and entry == old and data["v"] == VERSION and next(reversed(indexes)) == rel:
            _touch(where)  # the record already says this: keep its bytes, refresh its time for pruning
            return
        indexes.pop(rel, None)
        indexes[rel] = {"sha256": entry[0], "lines": "".join(sorted(entry[1])), "at": int(time.time())}
        while len(indexes) > MAX_INDEXES:
            del indexes[next(iter(indexes))]
    if new and not indexes:
        return
    data["v"] = VERSION
    _save(root, where, data, new)


def _touch(where: "str") -> "None":
    if scope.islink(where):
        return
    try:
        scope.calls().utime(where)
    except OSError:
        pass


def note_read(path: "str", who: "Session | None", data: "bytes | None" = None) -> "None":
    """The agent was shown the index `path` whole (a read, or the prompt at SessionStart):
    record its bytes now (`data`, or read from disk). Never raises."""
    if who is None:
        return
    try:
        seen = _read_index(path) if data is None else data
        if seen is not None and seen.count(b"\n") > MAX_LINES:
            seen = None

        def update(salt: "bytes", _old: "tuple[str, set[str]] | None") -> "tuple[str, set[str]] | None":
            return None if seen is None else (digest(seen), hashes(salt, seen))

        _store(path, who, update)
    except Exception:  # noqa: BLE001 - a record that cannot be kept is no record: fail open
        return


def note_write(path: "str", who: "Session | None", before: "bytes | None", after: "bytes") -> "None":
    """The guard let the agent's own write of `path` through (`before` on disk, `after`
    predicted): the lines it brings in count as seen. Only an existing record is updated (an
    agent that never read the index is not judged). Never raises."""
    if who is None:
        return
    try:
        if not _recorded(_place(path)[0]):
            return  # no record to update: neither os nor hashlib is loaded

        def update(salt: "bytes", old: "tuple[str, set[str]] | None") -> "tuple[str, set[str]] | None":
            if old is None:
                return None
            sha, known = old
            after_lines = hashes(salt, after)
            known = known | (after_lines - hashes(salt, before or b""))
            return (digest(after) if after_lines <= known else sha), known

        _store(path, who, update)
    except Exception:  # noqa: BLE001 - fail open
        return


# -- the rule ---------------------------------------------------------------------------------


class Stale:
    """A write the rule refuses: `added` lines another writer put in the index since this
    session last saw it, of which `lost` (line number on disk, text) the write would drop."""

    __slots__ = ("added", "lost")

    def __init__(self, added: "int", lost: "list[tuple[int, str]]") -> "None":
        self.added = added
        self.lost = lost


def lost_lines(path: "str", who: "Session | None", before: "bytes | None", after: "bytes") -> "Stale | None":
    """What `after` would drop of the lines another writer added to `path` since this session
    last saw it; None when nothing is lost or nothing is known (no session, no record, any
    error: the guard fails open)."""
    if who is None or not before:
        return None
    try:
        root, rel = _place(path)
        if not _recorded(root):
            return None
        data = _load(_file(root, who))
        if data is None:
            return None
        entry = _entry(data, rel)
        if entry is None:
            return None
        sha, known = entry
        if digest(before) == sha:
            return None
        salt = bytes.fromhex(str(data["salt"]))
        kept = hashes(salt, after)
        added = [(n, line) for n, line in lines_of(before) if line.strip() and line_hash(salt, line) not in known]
        lost = [(n, line.decode("utf-8", "replace")) for n, line in added if line_hash(salt, line) not in kept]
    except Exception:  # noqa: BLE001 - fail open
        return None
    return Stale(len(added), lost) if lost else None


def message(path: "str", tool: "str", stale: "Stale", masked: "Callable[[str], str]") -> "str":
    """The deny's text: what changed, with numbers and the first lines (each through `masked`,
    the judge's masker: judge calls this module, never the other way), and what to do."""
    from engramory.layout import quote  # lazy: a stale deny only
    from engramory.size import n as _n  # lazy: sizes only when a change is judged, not on the ignored path

    lost = stale.lost
    added = max(stale.added, len(lost))
    shown = ["line %d: %s" % (number, quote(masked(text), 100)) for number, text in lost[:SHOW]]
    more = " and %s more" % _n(len(lost) - SHOW) if len(lost) > SHOW else ""
    if added == len(lost):
        what = "another writer added %s line%s (%s%s), and this %s would drop %s" % (
            _n(added), "" if added == 1 else "s", "; ".join(shown), more, tool or "write",
            "it" if added == 1 else "them")
    else:
        what = "another writer added %s lines, and this %s would drop %s of them (%s%s)" % (
            _n(added), tool or "write", _n(len(lost)), "; ".join(shown), more)
    name = masked(scope.basename(path) or path)
    return ("engramory blocked this %s: %s changed since this session last read it: %s. Read %s again and "
            "redo your change on what is there now. Nothing was written; compacting is allowed after that read."
            % (tool or "write", masked(path), what, name))

