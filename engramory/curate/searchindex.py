"""The search index of `engramory search` (issue 21): `.engramory/search.sqlite`, which feeds
the ranking of engramory.curate.search the same numbers the scan computes, without reading
every note on every query.

What it keeps, in SQLite tables of the standard library's `sqlite3` (no FTS5: the terms are
the ranking's own, from `search.Doc.counts`, so no SQLite tokenizer has to agree with ours):

- per term, one blob: the ids of the notes holding it, and for each its counts in the
  description, name and body fields and whether the term's probe occurs in the note's
  lowercased text (the scan's candidate test);
- per note, the fields a hit shows (name, description, body, line numbers) and a hash of
  its bytes;
- a few blobs read whole on each search: the path, field lengths and type of every note,
  the pool sizes and total field lengths per (folder, type) that BM25 averages over, and per
  folder the stamp of every note file as last read: name, size, mtime_ns, ctime_ns, inode.

It is never trusted over the files. Every search lists the store and its archive and stats
every note (one scandir and one lstat each); a note whose stamp differs, a new one and one
read within RACY_NS of its last change (a later edit in the same clock tick would keep its
stamp) are read again, a gone one is dropped, all in one SQLite write transaction, before the
query is answered from the same transaction. A missing, unreadable or outdated index (another
engramory version: `fingerprint`) is rebuilt in a temporary file and moved into place (SQLite's
backup API over a readable one, so its locking holds); the search itself then reads every note.
Up to INLINE_MAX notes the build runs in the search; past it a detached process builds while
searches scan. Without `sqlite3` every search scans.
"""

from __future__ import annotations

import array
import bisect
import json
import os
import stat
import sys
import time
import zlib

import engramory
from engramory import scope
from engramory.curate import search as S
from engramory.store import frontmatter, metadir

try:
    import sqlite3
except ImportError:  # an interpreter built without it: every search scans
    sqlite3 = None  # type: ignore[assignment]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import List, TextIO, Tuple

    Listing = List[Tuple[List[str], "array.array[int]", List[str]]]  # per folder: names, stamps, paths

FORMAT = 1
INLINE_MAX = 100  # notes: a missing index is built by the search itself up to this many
RACY_NS = 3 * 10**9  # a note changed this close to its read is read again (coarse clocks, FAT's 2 s)
PARENT_WAIT = 2.0  # seconds a detached build waits for the search that started it to end
BUSY_S = 5.0  # how long a search waits for another process's write before it scans instead
CHUNK = 500  # ids or terms per SQL statement (SQLite's default variable limit is 999 or more)
_INO_MASK = (1 << 63) - 1
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS blobs(name TEXT PRIMARY KEY, crc INTEGER NOT NULL, data BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS post(term TEXT PRIMARY KEY, crc INTEGER NOT NULL, data BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS notes(id INTEGER PRIMARY KEY, hash BLOB NOT NULL, crc INTEGER NOT NULL, "
    "name TEXT NOT NULL, description TEXT NOT NULL, body TEXT NOT NULL, body_line INTEGER NOT NULL, "
    "desc_line INTEGER NOT NULL)",
)


class Unreadable(Exception):
    """The index file is not what this module wrote (damaged, truncated, not SQLite)."""


def path(root: str) -> str:
    return metadir.path(root, metadir.SEARCH_INDEX)


_FINGERPRINT: list[str] = []


def fingerprint() -> str:
    """Which code wrote an index: its format, this machine's byte order, and the bytes of the
    modules that decide what a note's terms and fields are. Another version: rebuild."""
    if not _FINGERPRINT:
        parts = ["%d %s" % (FORMAT, sys.byteorder)]
        for module in (S, frontmatter, sys.modules[__name__]):
            try:
                data, _ = scope.read_bounded(module.__file__ or "", 1 << 22)
            except OSError:
                data = b"?"
            parts.append("%d:%08x" % (len(data), zlib.crc32(data)))
        _FINGERPRINT.append(" ".join(parts))
    return _FINGERPRINT[0]


def listing(root: str, include_archive: bool = True) -> Listing:
    """Per folder searched (the store, then archive/): its notes in directory order, a stamp
    of four integers each (size, mtime_ns, ctime_ns, inode) and their paths."""
    out: Listing = []
    for folder, _, archived in S.folders(root, include_archive):
        names: list[str] = []
        stamps = array.array("q")
        paths: list[str] = []
        for entry in S.note_entries(folder, not archived):
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            names.append(entry.name)
            paths.append(entry.path)
            stamps.extend((st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino & _INO_MASK))
        out.append((names, stamps, paths))
    return out


class Names:
    """The path of every note by id ("" once gone): one UTF-8 blob and its offsets, each
    decoded when asked for, until the list is changed (a search reads a few of 50,000)."""

    def __init__(self, blob: bytes = b"", offsets: array.array[int] | None = None) -> None:
        self._blob = blob
        self._off = offsets if offsets is not None else array.array("I", [0])
        self._list: list[str] | None = None

    def __len__(self) -> int:
        return len(self._list) if self._list is not None else len(self._off) - 1

    def __getitem__(self, i: int) -> str:
        if self._list is not None:
            return self._list[i]
        return self._blob[self._off[i]:self._off[i + 1]].decode("utf-8", "surrogateescape")

    def items(self) -> list[str]:
        if self._list is None:
            self._list = [self[i] for i in range(len(self))]
        return self._list

    def pack(self) -> tuple[bytes, bytes]:
        if self._list is None:
            return self._blob, self._off.tobytes()
        parts = [r.encode("utf-8", "surrogateescape") for r in self._list]
        off = array.array("I", [0])
        for b in parts:
            off.append(off[-1] + len(b))
        return b"".join(parts), off.tobytes()


class State:
    """Everything but the postings and the texts, read whole on each search."""

    def __init__(self) -> None:
        self.fingerprint = ""
        self.rels = Names()  # by note id; "" once the note is gone
        self.kind = bytearray()  # by id: 0 gone, 1 live folder, 2 archive
        self.tcode = array.array("H")  # by id: its type, as an index into self.types
        self.lens = array.array("I")  # by id: description, name and body lengths
        self.types: list[str | None] = [None]
        self.cut: dict[int, int] = {}  # id -> size, for notes searched by their first READ_MAX bytes
        self.racy: set[int] = set()
        self.agg: dict[str, list[int]] = {}  # "kind:tcode" -> [notes, description, name, body lengths]
        # per folder, as stored: names ("\0"-joined), stamps (4 int64 each), ids (int32, -1: unread)
        self.stamps: list[tuple[bytes, bytes, bytes]] = [(b"", b"", b"") for _ in range(2)]

    def folder(self, k: int) -> tuple[list[str], array.array[int], array.array[int]]:
        names, stamps, ids = self.stamps[k]
        got = _array("i", ids)
        return _unpack(names, len(got)), _array("q", stamps), got

    def live(self) -> int:
        return sum(v[0] for v in self.agg.values())


def _pack(items: Sequence[str]) -> bytes:
    return "\0".join(items).encode("utf-8", "surrogateescape")


def _unpack(data: bytes, n: int) -> list[str]:
    out = data.decode("utf-8", "surrogateescape").split("\0") if n else []
    if len(out) != n:
        raise Unreadable("a list of %d names holds %d" % (n, len(out)))
    return out


def _array(code: str, data: bytes) -> array.array[int]:
    a = array.array(code)
    a.frombytes(data)
    return a


def load_state(conn: sqlite3.Connection) -> State:
    blobs: dict[str, bytes] = {}
    for name, crc, data in conn.execute("SELECT name, crc, data FROM blobs"):
        if not isinstance(data, bytes) or zlib.crc32(data) != crc:
            raise Unreadable("its %s record fails its checksum" % name)
        blobs[name] = data
    st = State()
    try:
        meta = json.loads(blobs["meta"])
        st.fingerprint = meta["fingerprint"]
        if st.fingerprint != fingerprint():
            return st
        n = meta["notes"]
        st.types = meta["types"]
        st.cut = {int(k): v for k, v in meta["cut"].items()}
        st.racy = set(meta["racy"])
        st.agg = meta["agg"]
        st.rels = Names(blobs["rels"], _array("I", blobs["reloff"]))
        st.kind = bytearray(blobs["kind"])
        st.tcode = _array("H", blobs["tcode"])
        st.lens = _array("I", blobs["lens"])
        for k in range(2):
            st.stamps[k] = (blobs["names%d" % k], blobs["stamps%d" % k], blobs["ids%d" % k])
            if len(st.stamps[k][1]) != 8 * len(st.stamps[k][2]):
                raise Unreadable("its stamps do not match its names")
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise Unreadable("its records are not what engramory wrote (%s)" % exc) from None
    if not (len(st.rels) == len(st.kind) == len(st.tcode) == n and len(st.lens) == 3 * n):
        raise Unreadable("its per-note records disagree on the number of notes")
    return st


def save_state(conn: sqlite3.Connection, st: State) -> None:
    meta = {"fingerprint": st.fingerprint, "notes": len(st.rels), "types": st.types,
            "cut": {str(k): v for k, v in st.cut.items()}, "racy": sorted(st.racy), "agg": st.agg}
    rels, reloff = st.rels.pack()
    blobs = {"meta": json.dumps(meta).encode(), "rels": rels, "reloff": reloff, "kind": bytes(st.kind),
             "tcode": st.tcode.tobytes(), "lens": st.lens.tobytes()}
    for k in range(2):
        blobs["names%d" % k], blobs["stamps%d" % k], blobs["ids%d" % k] = st.stamps[k]
    conn.executemany("INSERT OR REPLACE INTO blobs(name, crc, data) VALUES (?, ?, ?)",
                     [(k, zlib.crc32(v), v) for k, v in blobs.items()])


def _decode_post(crc: int, data: bytes, n_ids: int) -> tuple[array.array[int], array.array[int]]:
    if not isinstance(data, bytes) or zlib.crc32(data) != crc or len(data) % 20:
        raise Unreadable("a term's record fails its checksum")
    a = _array("I", data)
    n = len(a) // 5
    ids, vals = a[:n], a[n:]
    if n and ids[-1] >= n_ids:
        raise Unreadable("a term names a note it does not hold")
    return ids, vals


def _changed(st: State, now: Listing) -> bool:
    """Whether the files differ from the index's stamps (or a note is due a second read)."""
    if st.racy:
        return True
    return any(st.stamps[k][1] != stamps.tobytes() or st.stamps[k][0] != _pack(names)
               for k, (names, stamps, _) in enumerate(now))


def _read(where: str) -> tuple[bytes, os.stat_result, int] | None:
    """(at most READ_MAX bytes, the fstat they were read under, the size when cut short or 0)."""
    try:
        data, fst = scope.read_bounded(where, S.READ_MAX)
    except OSError:
        return None
    cut = 0
    if len(data) > S.READ_MAX:
        cut = max(fst.st_size, len(data))
        data = data[:S.READ_MAX]
    return data, fst, cut


def _stamp(fst: os.stat_result) -> tuple[int, int, int, int]:
    return fst.st_size, fst.st_mtime_ns, fst.st_ctime_ns, fst.st_ino & _INO_MASK


def refresh(conn: sqlite3.Connection, st: State, now: Listing, t0: int) -> int:
    """Bring `st` and the tables to the files of `now` (in a write transaction the caller
    holds); the number of notes read again."""
    import hashlib  # here, not on top: a search that reads no note does without its start-up cost

    racy_edge = t0 - RACY_NS
    kill: set[int] = set()
    fresh: list[tuple[int, int, S.Doc, bytes, int]] = []  # (folder, position, doc, hash, cut)
    recheck = _hashes(conn, st.racy) if st.racy else {}
    new_racy = {d for d in st.racy if st.kind[d] > len(now)}  # in a folder not listed this time
    for k, (names, stamps, paths) in enumerate(now):
        if not st.racy and st.stamps[k][1] == stamps.tobytes() and st.stamps[k][0] == _pack(names):
            continue
        old_names, old_stamps, old_ids = st.folder(k)
        where = {name: i for i, name in enumerate(old_names)}
        ids = array.array("i", [-1]) * len(names)
        new_stamps = array.array("q", stamps)
        seen: set[int] = set()
        for j, name in enumerate(names):
            i = where.get(name)
            old = -1 if i is None else old_ids[i]
            if i is not None:
                seen.add(i)
                if old not in st.racy and old_stamps[4 * i: 4 * i + 4] == stamps[4 * j: 4 * j + 4]:
                    ids[j] = old
                    continue
            got = _read(paths[j])
            if got is None:
                if old >= 0:
                    kill.add(old)
                continue
            data, fst, cut = got
            new_stamps[4 * j: 4 * j + 4] = array.array("q", _stamp(fst))
            digest = hashlib.blake2b(data, digest_size=16).digest()
            young = max(fst.st_mtime_ns, fst.st_ctime_ns) >= racy_edge
            if (i is not None and old in recheck and recheck[old] == digest
                    and old_stamps[4 * i: 4 * i + 4] == new_stamps[4 * j: 4 * j + 4]):
                ids[j] = old  # read again, and the same: keep it
                if young:
                    new_racy.add(old)
                continue
            if old >= 0:
                kill.add(old)
            rel = ("archive/" if k else "") + name
            fresh.append((k, j, S.Doc(rel, bool(k), data.decode("utf-8", "replace")), digest, cut))
            ids[j] = -1 - len(fresh)  # a placeholder: -2 - its place in `fresh`, its id once added
            if young:
                new_racy.add(ids[j])
        kill.update(old_ids[i] for i in range(len(old_names)) if i not in seen and old_ids[i] >= 0)
        st.stamps[k] = (_pack(names), new_stamps.tobytes(), ids.tobytes())
    _apply(conn, st, kill, fresh, new_racy)
    return len(fresh)


def _hashes(conn: sqlite3.Connection, ids: Iterable[int]) -> dict[int, bytes]:
    out: dict[int, bytes] = {}
    for part in _chunks(sorted(ids)):
        q = "SELECT id, hash FROM notes WHERE id IN (%s)" % ",".join("?" * len(part))
        out.update(conn.execute(q, part).fetchall())
    return out


def _chunks(items: Sequence[int] | Sequence[str]) -> Iterable[list[int] | list[str]]:
    for i in range(0, len(items), CHUNK):
        yield list(items[i: i + CHUNK])  # type: ignore[misc]


def _group(st: State, did: int) -> str:
    return "%d:%d" % (st.kind[did], st.tcode[did])


def _apply(conn: sqlite3.Connection, st: State, kill: set[int], fresh: list[tuple[int, int, S.Doc, bytes, int]],
           new_racy: set[int]) -> None:
    """Drop the notes of `kill`, add those of `fresh` under new ids, rewrite the postings of
    every term either touches, and save the state."""
    removes: dict[str, list[int]] = {}
    for did in sorted(kill):
        row = conn.execute("SELECT name, description, body, body_line, desc_line FROM notes WHERE id = ?",
                           (did,)).fetchone()
        if row is not None:
            doc = S.Doc.stored(st.rels[did], st.kind[did] == 2, st.types[st.tcode[did]], *row)
            for fields in doc.counts().values():
                for t in fields:
                    removes.setdefault(t, []).append(did)
        g = st.agg.get(_group(st, did))
        if g is not None:
            g[0] -= 1
            for f in range(3):
                g[1 + f] -= st.lens[3 * did + f]
            if not g[0]:
                del st.agg[_group(st, did)]
        st.rels.items()[did] = ""
        st.kind[did] = 0
        st.cut.pop(did, None)
    for part in _chunks(sorted(kill)):
        conn.execute("DELETE FROM notes WHERE id IN (%s)" % ",".join("?" * len(part)), part)
    adds: dict[str, tuple[array.array[int], array.array[int]]] = {}
    first = len(st.rels)
    rows = []
    code = {t: i for i, t in enumerate(st.types)}
    for n, (k, _, d, digest, cut) in enumerate(fresh):
        did = first + n
        st.rels.items().append(d.rel)
        st.kind.append(1 + k)
        c = code.get(d.type)
        if c is None:
            c = code[d.type] = len(st.types)
            st.types.append(d.type)
        st.tcode.append(c)
        L = d.lengths
        lens = (L["description"], L["name"], L["body"])
        st.lens.extend(lens)
        g = st.agg.setdefault(_group(st, did), [0, 0, 0, 0])
        g[0] += 1
        for f in range(3):
            g[1 + f] += lens[f]
        if cut:
            st.cut[did] = cut
        rows.append((did, digest, _text_crc(d.name, d.description, d.body), d.name, d.description, d.body,
                     d.body_line, d.desc_line))
        counts = d.counts()
        fd, fn, fb = counts["description"], counts["name"], counts["body"]
        low = d.low
        for t in fd.keys() | fn.keys() | fb.keys():
            entry = adds.get(t)
            if entry is None:
                entry = adds[t] = (array.array("I"), array.array("I"))
            entry[0].append(did)
            entry[1].extend((fd.get(t, 0), fn.get(t, 0), fb.get(t, 0), S.probe(t) in low))
    for k in range(2):  # the placeholders refresh left for new notes become their ids
        names, stamps, raw = st.stamps[k]
        ids = _array("i", raw)
        for j, v in enumerate(ids):
            if v <= -2:
                ids[j] = first + (-2 - v)
        st.stamps[k] = (names, stamps, ids.tobytes())
    st.racy = {v if v >= 0 else first + (-2 - v) for v in new_racy}
    conn.executemany("INSERT INTO notes(id, hash, crc, name, description, body, body_line, desc_line) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
    touched = sorted(removes.keys() | adds.keys())
    old: dict[str, tuple[int, bytes]] = {}
    if first:  # a build from nothing has no postings to read
        for part in _chunks(touched):
            q = "SELECT term, crc, data FROM post WHERE term IN (%s)" % ",".join("?" * len(part))
            old.update((t, (crc, data)) for t, crc, data in conn.execute(q, part))
    writes = []
    gone = []
    for t in touched:
        if t in old:
            ids, vals = _decode_post(old[t][0], old[t][1], first)
        else:
            ids, vals = array.array("I"), array.array("I")
        for did in sorted(removes.get(t, ()), reverse=True):
            i = bisect.bisect_left(ids, did)
            if i < len(ids) and ids[i] == did:
                del ids[i]
                del vals[4 * i: 4 * i + 4]
        if t in adds:
            ids.extend(adds[t][0])
            vals.extend(adds[t][1])
        if ids:
            data = ids.tobytes() + vals.tobytes()
            writes.append((t, zlib.crc32(data), data))
        elif t in old:
            gone.append(t)
    conn.executemany("INSERT OR REPLACE INTO post(term, crc, data) VALUES (?, ?, ?)", writes)
    for part in _chunks(gone):
        conn.execute("DELETE FROM post WHERE term IN (%s)" % ",".join("?" * len(part)), part)
    save_state(conn, st)


def answer(conn: sqlite3.Connection, st: State, q: S.Query, type_: str | None, limit: int,
           include_archive: bool) -> list[S.Hit]:
    """The scan's hits for `q`, from the index (its files just checked)."""
    if type_ is None:
        codes = None
    elif type_ in st.types:
        codes = st.types.index(type_)
    else:
        return []
    count, sums = 0, [0, 0, 0]
    for group, (n, *totals) in st.agg.items():
        k, c = group.split(":")
        if (include_archive or k == "1") and (codes is None or int(c) == codes):
            count += n
            for f in range(3):
                sums[f] += totals[f]
    if not count or not q.terms:
        return []
    n_terms = len(q.terms)
    found: dict[int, list[tuple[int, int, int] | None]] = {}
    probed: set[int] = set()  # notes whose text holds a query term's probe, as the index knows
    kind, tcode, n_ids = st.kind, st.tcode, len(st.rels)
    top_kind = 2 if include_archive else 1
    rows = conn.execute("SELECT term, crc, data FROM post WHERE term IN (%s)" % ",".join("?" * n_terms),
                        q.terms).fetchall()
    place = {t: i for i, t in enumerate(q.terms)}
    for term, crc, data in rows:
        i = place[term]
        ids, vals = _decode_post(crc, data, n_ids)
        for did, cd, cn, cb, flag in zip(ids, vals[0::4], vals[1::4], vals[2::4], vals[3::4]):
            kd = kind[did]
            if not kd or kd > top_kind or (codes is not None and tcode[did] != codes):
                continue
            tfs = found.get(did)
            if tfs is None:
                tfs = found[did] = [None] * n_terms
            tfs[i] = (cd, cn, cb)
            if flag:
                probed.add(did)
    texts: dict[int, tuple[str, str, str, int, int]] = {}
    unsure = [did for did in found if did not in probed]
    if unsure:  # every term it holds lacks its own probe (`cut-off` gives `cutoff`): test the others
        texts.update(_texts(conn, unsure))
        for did in unsure:
            if not any(p in _doc(st, did, texts[did]).low for p in q.probes):
                del found[did]
    lens = st.lens
    cands: list[S.Candidate] = [(did, st.rels[did], kind[did] == 2, (lens[3 * did], lens[3 * did + 1], lens[3 * did + 2]),
                                 tfs) for did, tfs in found.items()]

    def fetch(keys: list[object]) -> dict[object, tuple[str, str]]:
        want = [k for k in keys if isinstance(k, int) and k not in texts]
        texts.update(_texts(conn, want))
        return {k: (texts[k][1], texts[k][2]) for k in keys if isinstance(k, int)}

    best = S.score(q, count, sums, cands, fetch, limit)
    fetch([k for _, k in best])
    return S.hits([(s, _doc(st, k, texts[k])) for s, k in best if isinstance(k, int)], q)


def _texts(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, tuple[str, str, str, int, int]]:
    out: dict[int, tuple[str, str, str, int, int]] = {}
    for part in _chunks(list(ids)):
        q = ("SELECT id, crc, name, description, body, body_line, desc_line FROM notes WHERE id IN (%s)"
             % ",".join("?" * len(part)))
        for did, crc, name, description, body, body_line, desc_line in conn.execute(q, part):
            if not (isinstance(name, str) and isinstance(description, str) and isinstance(body, str)
                    and _text_crc(name, description, body) == crc):
                raise Unreadable("a note's text fails its checksum")
            out[did] = (name, description, body, body_line, desc_line)
    if len(out) != len(set(ids)):
        raise Unreadable("a note's text is missing")
    return out


def _text_crc(name: str, description: str, body: str) -> int:
    return zlib.crc32("\0".join((name, description, body)).encode("utf-8", "surrogatepass"))


def _doc(st: State, did: int, row: tuple[str, str, str, int, int]) -> S.Doc:
    return S.Doc.stored(st.rels[did], st.kind[did] == 2, st.types[st.tcode[did]], *row)


def cut_list(root: str, st: State, include_archive: bool) -> list[tuple[str, int]]:
    """The scan's `cut` list: notes searched by their first READ_MAX bytes, in its order."""
    out = []
    for did, size in st.cut.items():
        if st.kind[did] == 1 or (include_archive and st.kind[did] == 2):
            out.append((st.kind[did], st.rels[did].rsplit("/", 1)[-1], size))
    folders = S.folders(root)
    return [(os.path.join(folders[k - 1][0], name), size) for k, name, size in sorted(out)]


def _connect(where: str) -> sqlite3.Connection:
    conn = sqlite3.connect(where, timeout=BUSY_S, isolation_level=None)
    conn.execute("PRAGMA secure_delete = ON")  # a note's old text is overwritten, not left in free pages
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def _regular(where: str) -> bool | None:
    """True for a regular file, None when nothing is there, False for anything else."""
    try:
        return stat.S_ISREG(os.lstat(where).st_mode)
    except FileNotFoundError:
        return None
    except OSError:
        return False


class Outcome:
    """What one search did with the index: `hits` (None: the caller scans), and why not."""

    def __init__(self) -> None:
        self.hits: list[S.Hit] | None = None
        self.rebuild = False  # missing, outdated or unreadable: the caller builds it again
        self.problem = ""  # a line for stderr: the index was unreadable or in the way
        self.reread = 0


def lookup(root: str, q: S.Query, type_: str | None, limit: int, include_archive: bool,
           cut: list[tuple[str, int]] | None) -> Outcome:
    out = Outcome()
    where = path(root)
    kind = _regular(where)
    if kind is None:
        out.rebuild = True
        return out
    if not kind:
        out.problem = ("%s is not a regular file; it is where the search index belongs: every note was read "
                       "(move it aside and the next search rebuilds the index)" % where)
        return out
    t0 = time.time_ns()
    now = listing(root, include_archive)
    conn = None
    try:
        conn = _connect(where)
        conn.execute("BEGIN")
        st = load_state(conn)
        if st.fingerprint != fingerprint():
            out.rebuild = True
            return out
        if _changed(st, now):
            conn.execute("COMMIT")
            conn.execute("BEGIN IMMEDIATE")
            st = load_state(conn)
            todo = sum(len(names) for names, _, _ in now)
            out.reread = refresh(conn, st, now, t0)
            if out.reread > max(INLINE_MAX, todo // 4):
                out.rebuild = True  # read all the same; a build packs the ids again
        hits = answer(conn, st, q, type_, limit, include_archive)
        cut_here = cut_list(root, st, include_archive)
        conn.execute("COMMIT")
        out.hits = hits
        if cut is not None:
            cut.extend(cut_here)
    except sqlite3.OperationalError as exc:
        if "locked" not in str(exc) and "busy" not in str(exc):
            out.problem = _unreadable(where, exc)
            out.rebuild = True
        out.hits = None
    except (sqlite3.DatabaseError, Unreadable) as exc:
        out.problem = _unreadable(where, exc)
        out.rebuild = True
        out.hits = None
    finally:
        if conn is not None:
            conn.close()
    return out


def _unreadable(where: str, exc: BaseException) -> str:
    return "the search index %s could not be read (%s); every note was read and the index is built again" % (where, exc)


def build(root: str, lock_fd: int | None = None) -> bool:
    """Build the index of `root` from its notes into a temporary file, then move it into place;
    False when another process is building it (or no index can be kept there)."""
    if sqlite3 is None:
        return False
    fd = metadir.claim(root, metadir.SEARCH_LOCK) if lock_fd is None else lock_fd
    if fd is None:
        return False
    try:
        try:
            folder = metadir.meta_dir(root)
        except metadir.StoreDamaged:
            return False
        final = os.path.join(folder, metadir.SEARCH_INDEX)
        tmp = os.path.join(folder, ".%s%s%d-%s" % (metadir.SEARCH_INDEX, metadir.TMP_MARK, os.getpid(),
                                                    os.urandom(3).hex()))
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            t0 = time.time_ns()
            now = listing(root)
            src = sqlite3.connect(tmp, isolation_level=None)
            try:
                src.execute("PRAGMA journal_mode = OFF")
                src.execute("PRAGMA synchronous = OFF")
                for sql in _SCHEMA:
                    src.execute(sql)
                src.execute("BEGIN")
                st = State()
                st.fingerprint = fingerprint()
                refresh(src, st, now, t0)
                src.execute("COMMIT")
                _install(src, tmp, final)
            finally:
                src.close()
        finally:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    except (OSError, sqlite3.Error):
        return False
    finally:
        if fd >= 0:
            os.close(fd)
    return True


def _install(src: sqlite3.Connection, tmp: str, final: str) -> None:
    """Put the built index at `final`: over a readable index by SQLite's backup (its locks
    keep every reader whole), else by renaming the file into place."""
    if _regular(final):
        try:
            dst = _connect(final)
            try:
                dst.execute("SELECT count(*) FROM sqlite_master").fetchone()
                src.backup(dst)
                return
            finally:
                dst.close()
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
                raise
    # no index, or one SQLite cannot read: its rollback journal (if any) belongs to it, not to ours
    try:
        os.unlink(final + "-journal")
    except OSError:
        pass
    os.replace(tmp, final)


def build_in_background(root: str) -> None:
    """A detached process that builds the index, unless one is at it: the lock is taken here
    and handed down, so it is held from the moment this returns until the build ends."""
    fd = metadir.claim(root, metadir.SEARCH_LOCK)
    if fd is None:
        return
    if fd < 0:
        return
    bundle = os.path.dirname(os.path.dirname(os.path.abspath(engramory.__file__)))
    work = ("import sys; sys.path.insert(0, sys.argv[1]); from engramory.curate import searchindex; "
            "searchindex.build_detached(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))")
    python = sys.executable or "python3"
    try:
        os.set_inheritable(fd, True)
        null = os.devnull
        os.posix_spawn(python, [python, "-I", "-S", "-c", work, bundle, root, str(fd), str(os.getpid())],
                       dict(os.environ),
                       file_actions=[(os.POSIX_SPAWN_OPEN, 0, null, os.O_RDONLY, 0),
                                     (os.POSIX_SPAWN_OPEN, 1, null, os.O_WRONLY, 0),
                                     (os.POSIX_SPAWN_OPEN, 2, null, os.O_WRONLY, 0)], setsid=True)
    except (AttributeError, NotImplementedError, OSError):
        pass  # no detached child here: searches keep scanning, and a small store builds inline
    finally:
        os.close(fd)


def build_detached(root: str, lock_fd: int, parent: int) -> None:
    """The detached child's work: at a lower priority, and once the search that started it has
    ended (PARENT_WAIT at most), so as not to slow the very search that is scanning meanwhile."""
    try:
        os.nice(10)
    except (AttributeError, OSError):
        pass
    deadline = time.monotonic() + PARENT_WAIT
    while time.monotonic() < deadline:
        try:
            os.kill(parent, 0)
        except OSError:
            break
        time.sleep(0.01)
    build(root, lock_fd)


def search(root: str, query: str, type_: str | None = None, limit: int = S.LIMIT,
           include_archive: bool = True, cut: list[tuple[str, int]] | None = None, use_index: bool = True,
           err: TextIO | None = None) -> list[S.Hit]:
    """What `search.search` returns, from the index when it can be used; otherwise the scan
    answers and the index is built (in this process up to INLINE_MAX notes, else detached)."""
    if not use_index or sqlite3 is None:
        return S.search(root, query, type_, limit, include_archive, cut)
    q = S.Query(query)
    try:
        out = lookup(root, q, type_, limit, include_archive, cut)
    except metadir.StoreDamaged as exc:
        out = Outcome()
        out.problem = str(exc)
    if out.problem:
        (err or sys.stderr).write("engramory search: %s\n" % out.problem.replace("\n", " "))
    if out.problem and out.rebuild:  # unreadable: out of the way, so the searches until it is rebuilt scan quietly
        for name in (metadir.SEARCH_INDEX, metadir.SEARCH_JOURNAL):
            try:
                os.unlink(metadir.path(root, name))
            except OSError:
                pass
    if out.rebuild:
        small = out.hits is None and _count(root) <= INLINE_MAX
        if small and build(root):
            out.hits = None  # answered below by the index just built
            again = lookup(root, q, type_, limit, include_archive, cut)
            if again.hits is not None:
                return again.hits
        elif not small:
            build_in_background(root)
    if out.hits is not None:
        return out.hits
    return S.search(root, query, type_, limit, include_archive, cut)


def _count(root: str) -> int:
    return sum(len(S.note_entries(folder, not archived)) for folder, _, archived in S.folders(root))
