"""Bringing the search index (engramory.curate.searchindex) to the files: list the folders and
stat every note (one scandir and one lstat each), read again a note whose stamp differs, a new
one and one read within RACY_NS of its last change (a later edit in the same clock tick would
keep its stamp), drop a gone one, and rewrite the postings of every term either touches. A note
the secret scan flags gets no postings: it is read from its file on every search."""

from __future__ import annotations

import array
import bisect
import os
import zlib
from itertools import chain
from stat import S_IFMT, S_IFREG, S_ISREG

from engramory import scope
from engramory.curate import search as S
from engramory.curate import stamps as stamping
from engramory.curate.searchrecords import (
    State,
    array_of,
    chunks,
    decode_post,
    marks,
    note_hashes,
    save_state,
)
from engramory.store.secrets import has_secret

TYPE_CHECKING = False
if TYPE_CHECKING:
    from sqlite3 import Connection
    from typing import Dict, List, Tuple

    Folder = Tuple[List[str], "array.array[int]", "Paths"]  # names, stamps, paths
    Listing = List[Folder]  # per folder searched
    # (doc, hash of its bytes, size when cut short or 0, flagged by the secret scan)
    Fresh = List[Tuple[S.Doc, bytes, int, bool]]
    Post = Dict[bytes, Tuple["array.array[int]", "array.array[int]"]]

RACY_NS = 3 * 10**9  # a note changed this close to its read is read again (coarse clocks, FAT's 2 s)
_INO_MASK = (1 << 63) - 1


class Paths:
    """The paths of a folder's notes, made when asked for (a search reads a few of them)."""

    __slots__ = ("folder", "names")

    def __init__(self, folder: str, names: list[str]) -> None:
        self.folder, self.names = folder, names

    def __getitem__(self, j: int) -> str:
        return os.path.join(self.folder, self.names[j])

    def __len__(self) -> int:
        return len(self.names)


_FAST = (os.stat in os.supports_dir_fd and os.stat in os.supports_follow_symlinks and os.listdir in os.supports_fd
         and hasattr(os, "O_DIRECTORY"))


def listing(root: str, include_archive: bool = True) -> Listing:
    """Per folder searched (the store, then archive/): its notes in directory order (the ones
    search.note_entries lists), a stamp of four integers each (size, mtime_ns, ctime_ns, inode)
    and their paths. One listing and one lstat a note, nothing else: every search pays this,
    so the names are filtered, stat'ed and packed by C loops (engramory.curate.stamps, past
    SPLIT_MIN names in two processes)."""
    out: Listing = []
    for folder, _, archived in S.folders(root, include_archive):
        got: Folder | None = _listed(folder, not archived) if _FAST else None
        if got is None:  # no dir_fd here, or a note went between the listing and its lstat
            try:
                with os.scandir(folder) as it:
                    found = list(it)
            except OSError:
                found = []
            got = _stamped(folder, found, not archived)
        out.append(got)
    return out


def _listed(folder: str, top: bool) -> Folder | None:
    """`_stamped`'s answer by os.listdir and an lstat by dir_fd of each name; None: ask it."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return [], array.array("q"), Paths(folder, [])
    try:
        index = S.INDEX if top else None
        names = [n for n in os.listdir(fd) if (n[-3:] == ".md" or n.lower().endswith(".md")) and n[0] != "."
                 and n != index]
        flat = stamping.stamps(fd, names)
    except OSError:
        return None
    finally:
        os.close(fd)
    if set(map(S_IFMT, flat[4::5])) - {S_IFREG}:  # a symlink (lstat), a folder, a FIFO: not a note
        keep = [j for j, mode in enumerate(flat[4::5]) if S_ISREG(mode)]
        names = [names[j] for j in keep]
        flat = array.array("q", chain.from_iterable(flat[5 * j: 5 * j + 4] for j in keep))
    else:
        del flat[4::5]
    return names, flat, Paths(folder, names)


def _stamped(folder: str, found: list[os.DirEntry[str]], top: bool) -> Folder:
    """The notes of `found` (a scandir of `folder`) stat'ed one by one: where dir_fd is missing."""
    names: list[str] = []
    flat: list[int] = []
    for entry in found:
        name = entry.name
        if name[0] == "." or (name[-3:] != ".md" and not name.lower().endswith(".md")) or (top and name == S.INDEX):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not S_ISREG(st.st_mode):  # a symlink (lstat), a folder, a FIFO: not a note
            continue
        names.append(name)
        flat += (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino & _INO_MASK)
    return names, array.array("q", flat), Paths(folder, names)


def same_folder(st: State, k: int, names: list[str], stamps: array.array[int]) -> bool:
    return st.stamps[k][1] == stamps.tobytes() and st.stamps[k][0] == st.keyed.listing(names)


def changed(st: State, now: Listing) -> bool:
    """Whether the files differ from the index's stamps (or a note is due a second read)."""
    if st.racy:
        return True
    return not all(same_folder(st, k, names, stamps) for k, (names, stamps, _) in enumerate(now))


def read_note(where: str) -> tuple[bytes, os.stat_result, int] | None:
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


class Pass:
    """One refresh: the notes to drop, those read and new, and the ones due a second read."""

    def __init__(self, conn: Connection, st: State, t0: int, folders: int) -> None:
        self.st = st
        self.racy_edge = t0 - RACY_NS
        self.kill: set[int] = set()
        self.fresh: Fresh = []
        self.recheck = note_hashes(conn, st.racy) if st.racy else {}
        self.new_racy = {d for d in st.racy if st.kind[d] > folders}  # in a folder not listed this time

    def folder(self, k: int, names: list[str], stamps: array.array[int], paths: Paths) -> None:
        st = self.st
        old_names, old_stamps, old_ids = st.folder(k)
        hashed = st.keyed.names(names)
        where = {h: i for i, h in enumerate(old_names)}
        ids = array.array("i", [-1]) * len(names)
        new_stamps = array.array("q", stamps)
        seen: set[int] = set()
        for j in range(len(names)):
            i = where.get(hashed[12 * j: 12 * j + 12])
            if i is not None:
                seen.add(i)
            ids[j] = self.note(k, names[j], paths[j], new_stamps, j, -1 if i is None else old_ids[i],
                               None if i is None else old_stamps[4 * i: 4 * i + 4])
        self.kill.update(old_ids[i] for i in range(len(old_names)) if i not in seen and old_ids[i] >= 0)
        st.stamps[k] = (st.keyed.listing(names), new_stamps.tobytes(), ids.tobytes(), hashed)

    def note(self, k: int, name: str, where: str, stamps: array.array[int], j: int, old: int,
             old_stamp: array.array[int] | None) -> int:
        """The id of the note at place `j` (-2 - its place in `fresh` when read anew)."""
        if old_stamp is not None and old not in self.st.racy and old_stamp == stamps[4 * j: 4 * j + 4]:
            return old
        got = read_note(where)
        if got is None:
            if old >= 0:
                self.kill.add(old)
            return -1
        data, fst, cut = got
        stamps[4 * j: 4 * j + 4] = array.array("q", (fst.st_size, fst.st_mtime_ns, fst.st_ctime_ns,
                                                     fst.st_ino & _INO_MASK))
        digest = self.st.keyed.data(data)
        young = max(fst.st_mtime_ns, fst.st_ctime_ns) >= self.racy_edge
        if old_stamp is not None and self.recheck.get(old) == digest and old_stamp == stamps[4 * j: 4 * j + 4]:
            if young:
                self.new_racy.add(old)
            return old  # read again, and the same: keep it
        if old >= 0:
            self.kill.add(old)
        text = data.decode("utf-8", "replace")
        flagged = has_secret(text) or has_secret(name)  # the secret scan's verdict on what would be indexed
        self.fresh.append((S.Doc(("archive/" if k else "") + name, bool(k), text), digest, cut, flagged))
        placeholder = -1 - len(self.fresh)
        if young:
            self.new_racy.add(placeholder)
        return placeholder


def refresh(conn: Connection, st: State, now: Listing, t0: int) -> int:
    """Bring `st` and the tables to the files of `now` (in a write transaction the caller
    holds); the number of notes read again."""
    run = Pass(conn, st, t0, len(now))
    for k, (names, stamps, paths) in enumerate(now):
        if st.racy or not same_folder(st, k, names, stamps):
            run.folder(k, names, stamps, paths)
    first = len(st.kind)
    removes = _drop(conn, st, run.kill)
    adds, rows = _add(st, run.fresh)
    _settle(st, first, run.new_racy)
    conn.executemany("INSERT INTO notes(id, hash, terms) VALUES (?, ?, ?)", rows)
    _postings(conn, removes, adds, first)
    save_state(conn, st)
    return len(run.fresh)


def _drop(conn: Connection, st: State, kill: set[int]) -> dict[bytes, list[int]]:
    """Forget the notes of `kill`; per term hash, the ids whose postings go."""
    removes: dict[bytes, list[int]] = {}
    ordered = sorted(kill)
    for part in chunks(ordered):
        for did, terms in conn.execute("SELECT id, terms FROM notes WHERE id IN (%s)" % marks(len(part)), part):
            for i in range(0, len(terms), 12):
                removes.setdefault(terms[i: i + 12], []).append(did)
    for did in ordered:
        g = st.agg.get(st.group(did))
        if g is not None:
            g[0] -= 1
            for f in range(3):
                g[1 + f] -= st.lens[3 * did + f]
            if not g[0]:
                del st.agg[st.group(did)]
        st.kind[did] = 0
        st.cut.pop(did, None)
        st.secret.discard(did)
    for part in chunks(ordered):
        conn.execute("DELETE FROM notes WHERE id IN (%s)" % marks(len(part)), part)
    return removes


def _add(st: State, fresh: Fresh) -> tuple[Post, list[tuple[int, bytes, bytes]]]:
    """The new notes under new ids: their records, and per term hash their postings."""
    adds: Post = {}
    rows = []
    code = {t: i for i, t in enumerate(st.types)}
    for d, digest, cut, flagged in fresh:
        did = len(st.kind)
        st.kind.append(2 if d.archived else 1)
        tname = st.keyed.type(d.type)
        c = code.get(tname)
        if c is None:
            c = code[tname] = len(st.types)
            st.types.append(tname)
        st.tcode.append(c)
        L = d.lengths
        lens = (L["description"], L["name"], L["body"])
        st.lens.extend(lens)
        g = st.agg.setdefault(st.group(did), [0, 0, 0, 0])
        g[0] += 1
        for f in range(3):
            g[1 + f] += lens[f]
        if cut:
            st.cut[did] = cut
        if flagged:
            st.secret.add(did)  # searched from its file each time: not one of its terms is kept
        rows.append((did, digest, b"" if flagged else _post_note(st, d, did, adds)))
    return adds, rows


def _post_note(st: State, d: S.Doc, did: int, adds: Post) -> bytes:
    counts = d.counts()
    fd, fn, fb = counts["description"], counts["name"], counts["body"]
    low = d.low
    term = st.keyed.term
    hashes = []
    for t in fd.keys() | fn.keys() | fb.keys():
        h = term(t)
        hashes.append(h)
        entry = adds.get(h)
        if entry is None:
            entry = adds[h] = (array.array("I"), array.array("I"))
        entry[0].append(did)
        entry[1].extend((fd.get(t, 0), fn.get(t, 0), fb.get(t, 0), S.probe(t) in low))
    return b"".join(hashes)


def _settle(st: State, first: int, new_racy: set[int]) -> None:
    """The placeholders refresh left for new notes become their ids."""
    for k in range(2):
        listed, stamps, raw, names = st.stamps[k]
        ids = array_of("i", raw)
        for j, v in enumerate(ids):
            if v <= -2:
                ids[j] = first + (-2 - v)
        st.stamps[k] = (listed, stamps, ids.tobytes(), names)
    st.racy = {v if v >= 0 else first + (-2 - v) for v in new_racy}


def _postings(conn: Connection, removes: dict[bytes, list[int]], adds: Post, first: int) -> None:
    touched = sorted(removes.keys() | adds.keys())
    old: dict[bytes, tuple[int, bytes]] = {}
    if first:  # a build from nothing has no postings to read
        for part in chunks(touched):
            q = "SELECT term, crc, data FROM post WHERE term IN (%s)" % marks(len(part))
            old.update((t, (crc, data)) for t, crc, data in conn.execute(q, part))
    writes, gone = [], []
    for t in touched:
        ids, vals = decode_post(old[t][0], old[t][1], first) if t in old else (array.array("I"), array.array("I"))
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
    for part in chunks(gone):
        conn.execute("DELETE FROM post WHERE term IN (%s)" % marks(len(part)), part)
