"""The records of the search index (engramory.curate.searchindex): what `.engramory/search.sqlite`
holds, read and written whole on each search. None of it is note text or a file name in clear,
so the store's metadata never holds a secret (tests/test_store_property.py):

- a random salt made per index, the key of every hash below (so a hash cannot be looked up
  in a table built for another store);
- per term: its 12-byte keyed hash, and one blob of the notes holding it with their
  description/name/body counts and whether the term's probe occurs in the note's text;
- per note: its id, the keyed hash of its bytes, and the hashes of its terms (to drop its
  postings when it changes);
- per folder: a keyed hash of every note's file name in directory order, its stamp (size,
  mtime_ns, ctime_ns, inode), its id; per id its folder kind, type (hashed) and field lengths;
  BM25's pool sizes and total lengths per (folder, type).

A note's path is the folder listing's (read on every search anyway), matched by position.
"""

from __future__ import annotations

import array
import sys
import zlib

try:  # the blake2 module itself: hashlib would load OpenSSL first, a few ms of every search's start
    from _blake2 import blake2b
except ImportError:  # an interpreter without it: hashlib's
    from hashlib import blake2b

from engramory import jsonlite, scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from sqlite3 import Connection

FORMAT = 2  # 2: hashes only, no text (format 1 kept note text and file names)
TERM_BYTES = 12
CHUNK = 500  # ids or terms per SQL statement (SQLite's default variable limit is 999 or more)
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS blobs(name TEXT PRIMARY KEY, crc INTEGER NOT NULL, data BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS post(term BLOB PRIMARY KEY, crc INTEGER NOT NULL, data BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS notes(id INTEGER PRIMARY KEY, hash BLOB NOT NULL, terms BLOB NOT NULL)",
)


class Unreadable(Exception):
    """The index file is not what this module wrote (damaged, truncated, not SQLite)."""


class Stale(Exception):
    """A note's bytes differ from the hash the index holds for it: every note is read again
    (searchindex._read_again), or the scan answers."""


_FINGERPRINT: list[str] = []


def fingerprint(modules: Iterable[object]) -> str:
    """Which code wrote an index: its format, this machine's byte order, and the bytes of the
    modules that decide what a note's terms and fields are. Another version: rebuild."""
    if not _FINGERPRINT:
        parts = ["%d %s" % (FORMAT, sys.byteorder)]
        for module in modules:
            try:
                data, _ = scope.read_bounded(getattr(module, "__file__", "") or "", 1 << 22)
            except OSError:
                data = b"?"
            parts.append("%d:%08x" % (len(data), zlib.crc32(data)))
        _FINGERPRINT.append(" ".join(parts))
    return _FINGERPRINT[0]


class Keyed:
    """Keyed hashes under one index's salt, each term's memoised (a build hashes a term once)."""

    def __init__(self, salt: bytes) -> None:
        self.salt = salt
        self._terms: dict[str, bytes] = {}

    def term(self, t: str) -> bytes:
        got = self._terms.get(t)
        if got is None:
            got = self._terms[t] = blake2b(t.encode("utf-8", "surrogatepass"), key=self.salt,
                                                   digest_size=TERM_BYTES).digest()
        return got

    def names(self, names: Sequence[str]) -> bytes:
        salt = self.salt
        return b"".join(blake2b(n.encode("utf-8", "surrogateescape"), key=salt,
                                        digest_size=TERM_BYTES).digest() for n in names)

    def listing(self, names: Sequence[str]) -> bytes:
        """One hash of a folder's names in order: whether the listing is the one indexed."""
        return blake2b("\0".join(names).encode("utf-8", "surrogateescape"), key=self.salt,
                               digest_size=16).digest()

    def data(self, data: bytes) -> bytes:
        return blake2b(data, key=self.salt, digest_size=16).digest()

    def type(self, type_: str | None) -> str:
        if type_ is None:
            return ""
        return self.term("\0type:" + type_).hex()


class State:
    """Everything but the postings and the note hashes, read whole on each search."""

    def __init__(self, salt: bytes = b"") -> None:
        self.fingerprint = ""
        self.keyed = Keyed(salt)
        self.kind = bytearray()  # by id: 0 gone, 1 live folder, 2 archive
        self.tcode = array.array("H")  # by id: its type, as an index into self.types
        self.lens = array.array("I")  # by id: description, name and body lengths
        self.types: list[str] = [""]  # keyed hashes of the types ("": none)
        self.cut: dict[int, int] = {}  # id -> size, for notes searched by their first READ_MAX bytes
        self.racy: set[int] = set()
        self.secret: set[int] = set()  # notes the secret scan flags: no postings, read every search
        self.agg: dict[str, list[int]] = {}  # "kind:tcode" -> [notes, description, name, body lengths]
        # per folder, as stored: listing hash, stamps (4 int64 each), ids (int32, -1: unread), name hashes
        self.stamps: list[tuple[bytes, bytes, bytes, bytes]] = [(b"", b"", b"", b"") for _ in range(2)]

    def folder(self, k: int) -> tuple[list[bytes], array.array[int], array.array[int]]:
        _, stamps, ids, names = self.stamps[k]
        got = array_of("i", ids)
        if len(names) != TERM_BYTES * len(got):
            raise Unreadable("its name hashes do not match its ids")
        split = [names[i: i + TERM_BYTES] for i in range(0, len(names), TERM_BYTES)]
        return split, array_of("q", stamps), got

    def positions(self, folders: int) -> dict[int, tuple[int, int]]:
        """id -> (folder, place in its listing) for the folders listed."""
        out: dict[int, tuple[int, int]] = {}
        for k in range(folders):
            ids = array_of("i", self.stamps[k][2])
            out.update(zip(ids, zip([k] * len(ids), range(len(ids)))))  # one C loop: 50,000 notes
        out.pop(-1, None)  # unread notes
        return out

    def group(self, did: int) -> str:
        return "%d:%d" % (self.kind[did], self.tcode[did])


def array_of(code: str, data: bytes) -> array.array[int]:
    a = array.array(code)
    a.frombytes(data)
    return a


def _blobs(conn: Connection) -> dict[str, bytes]:
    blobs: dict[str, bytes] = {}
    for name, crc, data in conn.execute("SELECT name, crc, data FROM blobs"):
        if not isinstance(data, bytes) or zlib.crc32(data) != crc:
            raise Unreadable("its %s record fails its checksum" % name)
        blobs[name] = data
    return blobs


def load_state(conn: Connection, want: str) -> State:
    """The state; one with an empty fingerprint when the index is of another version."""
    blobs = _blobs(conn)
    try:
        meta = _loads(blobs["meta"])
        if meta["fingerprint"] != want:
            return State()
        st = State(blobs["salt"])
        st.fingerprint = want
        _fill(st, meta, blobs)
        n = meta["notes"]
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise Unreadable("its records are not what engramory wrote (%s)" % exc) from None
    if not (len(st.kind) == len(st.tcode) == n and len(st.lens) == 3 * n) or len(st.keyed.salt) != 16:
        raise Unreadable("its per-note records disagree on the number of notes")
    return st


def _fill(st: State, meta: dict[str, object], blobs: dict[str, bytes]) -> None:
    st.types = list(meta["types"])  # type: ignore[call-overload]
    st.cut = {int(k): v for k, v in meta["cut"].items()}  # type: ignore[attr-defined]
    st.racy = set(meta["racy"])  # type: ignore[call-overload]
    st.secret = set(meta["secret"])  # type: ignore[call-overload]
    st.agg = meta["agg"]  # type: ignore[assignment]
    st.kind = bytearray(blobs["kind"])
    st.tcode = array_of("H", blobs["tcode"])
    st.lens = array_of("I", blobs["lens"])
    for k in range(2):
        st.stamps[k] = (blobs["list%d" % k], blobs["stamps%d" % k], blobs["ids%d" % k], blobs["names%d" % k])
        if len(st.stamps[k][1]) != 8 * len(st.stamps[k][2]):
            raise Unreadable("its stamps do not match its names")


def _loads(data: bytes) -> dict[str, object]:
    """The meta record (json.dumps wrote it): by jsonlite when small, so that a warm search does
    not import json and its regexes; by json when large (the racy ids of a store just built)."""
    if len(data) <= 4096:
        return jsonlite.loads(data.decode("ascii"))  # type: ignore[no-any-return]
    import json

    return json.loads(data)  # type: ignore[no-any-return]


def save_state(conn: Connection, st: State) -> None:
    import json  # writing only: a search that changed nothing never saves
    meta = {"fingerprint": st.fingerprint, "notes": len(st.kind), "types": st.types,
            "cut": {str(k): v for k, v in st.cut.items()}, "racy": sorted(st.racy),
            "secret": sorted(st.secret), "agg": st.agg}
    blobs = {"meta": json.dumps(meta).encode(), "salt": st.keyed.salt, "kind": bytes(st.kind),
             "tcode": st.tcode.tobytes(), "lens": st.lens.tobytes()}
    for k in range(2):
        blobs["list%d" % k], blobs["stamps%d" % k], blobs["ids%d" % k], blobs["names%d" % k] = st.stamps[k]
    conn.executemany("INSERT OR REPLACE INTO blobs(name, crc, data) VALUES (?, ?, ?)",
                     [(k, zlib.crc32(v), v) for k, v in blobs.items()])


def decode_post(crc: int, data: bytes, n_ids: int) -> tuple[array.array[int], array.array[int]]:
    if not isinstance(data, bytes) or zlib.crc32(data) != crc or len(data) % 20:
        raise Unreadable("a term's record fails its checksum")
    a = array_of("I", data)
    n = len(a) // 5
    ids, vals = a[:n], a[n:]
    if n and ids[-1] >= n_ids:
        raise Unreadable("a term names a note it does not hold")
    return ids, vals


def chunks(items: Sequence[object]) -> Iterable[list[object]]:
    for i in range(0, len(items), CHUNK):
        yield list(items[i: i + CHUNK])


def marks(n: int) -> str:
    return ",".join("?" * n)


def note_hashes(conn: Connection, ids: Iterable[int]) -> dict[int, bytes]:
    out: dict[int, bytes] = {}
    for part in chunks(sorted(ids)):
        out.update(conn.execute("SELECT id, hash FROM notes WHERE id IN (%s)" % marks(len(part)), part).fetchall())
    return out
