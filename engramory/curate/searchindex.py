"""The search index of `engramory search` (issue 21): `.engramory/search.sqlite`, which feeds
the ranking of engramory.curate.search the same numbers the scan computes, without reading
every note on every query. What it holds (hashes, counts and stamps: no note text, no file
name in clear) is engramory.curate.searchrecords; bringing it to the files on each search,
engramory.curate.searchrefresh; the answer, engramory.curate.searchanswer.

It is never trusted over the files. Every search lists the store and its archive and stats
every note; a changed, new or gone note is read or dropped in one SQLite write transaction
before the query is answered from the same transaction, and every text a hit shows is read
from its file and checked against its hash (a mismatch: every note is read and hashed again and
the ones that differ indexed again, _read_again; the scan answers only if that fails). A missing,
unreadable or outdated index (another engramory version: the fingerprint) is rebuilt in a
temporary file and moved into place (SQLite's backup API over a readable one, so its locking
holds); the search itself then reads every note. Up to INLINE_MAX notes the build runs in the
search; past it a detached process builds while searches scan. Without `sqlite3` every search
scans.
"""

from __future__ import annotations

import os
import stat
import sys
import time

import engramory
from engramory import fsutil
from engramory.curate import search as S
from engramory.curate import searchanswer, searchrecords, searchrefresh
from engramory.curate.searchrecords import SCHEMA, Stale, State, Unreadable, load_state
from engramory.store import frontmatter, metadir, secrets

try:
    import sqlite3
except ImportError:  # an interpreter built without it: every search scans
    sqlite3 = None  # type: ignore[assignment]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

INLINE_MAX = 100  # notes: a missing index is built by the search itself up to this many
PARENT_WAIT = 2.0  # seconds a detached build waits for the search that started it to end
BUSY_S = 5.0  # how long a search waits for another process's write before it scans instead
RACY_NS = searchrefresh.RACY_NS
STALE_TRIES = 2  # times a search reads every note again on finding one changed under its stamp, before the scan answers
FORMAT = searchrecords.FORMAT


def path(root: str) -> str:
    return metadir.path(root, metadir.SEARCH_INDEX)


def fingerprint() -> str:
    return searchrecords.fingerprint((S, frontmatter, secrets, searchrecords, searchrefresh, searchanswer,
                                      sys.modules[__name__]))


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
    conn = None
    try:
        conn = _connect(where)
        _answer(conn, out, root, q, (type_, limit, include_archive), cut)
    except sqlite3.OperationalError as exc:
        if "locked" not in str(exc) and "busy" not in str(exc):
            out.problem = _unreadable(where, exc)
            out.rebuild = True
        out.hits = None
    except (sqlite3.DatabaseError, Unreadable) as exc:
        out.problem = _unreadable(where, exc)
        out.rebuild = True
        out.hits = None
    except Stale:  # notes kept changing under their stamps while read again: the scan answers, the index is built again
        out.rebuild = True
        out.hits = None
    finally:
        if conn is not None:
            conn.close()
    return out


def _answer(conn: sqlite3.Connection, out: Outcome, root: str, q: S.Query, how: tuple[str | None, int, bool],
            cut: list[tuple[str, int]] | None) -> None:
    """Check the index against the files (refreshing it if they differ) and answer from it."""
    type_, limit, include_archive = how
    t0 = time.time_ns()
    now = searchrefresh.listing(root, include_archive)
    conn.execute("BEGIN")
    st = load_state(conn, fingerprint())
    if not st.fingerprint:
        out.rebuild = True
        return
    if searchrefresh.changed(st, now):
        conn.execute("COMMIT")
        conn.execute("BEGIN IMMEDIATE")
        st = load_state(conn, fingerprint())
        if not st.fingerprint:
            out.rebuild = True
            return
        out.reread = searchrefresh.refresh(conn, st, now, t0)
    for tries in range(STALE_TRIES, -1, -1):
        try:
            hits = searchanswer.answer(conn, st, now, q, type_, limit, include_archive)
            break
        except Stale:
            got = _read_again(conn, now, t0) if tries else None
            if got is None:
                raise
            st = got[0]
            out.reread += got[1]
    if out.reread > max(INLINE_MAX, sum(len(names) for names, _, _ in now) // 4):
        out.rebuild = True  # read all the same; a build packs the ids again
    cut_here = searchanswer.cut_list(st, now, include_archive)
    conn.execute("COMMIT")
    out.hits = hits
    if cut is not None:
        cut.extend(cut_here)


def _read_again(conn: sqlite3.Connection, now: searchrefresh.Listing, t0: int) -> tuple[State, int] | None:
    """After a note was found whose bytes are not the ones its stamp stood for (changed within
    its stamp's clock tick, or on a file system whose stamps do not move): every listed note is
    read under the write lock and its bytes' keyed hash compared with the stored one (as a note
    due a second read is); one that differs is indexed again from those bytes. This is sound:
    the stamps were shown not to vouch for this store, so none is trusted; every note the index
    then holds for the listed folders is the bytes just read, which is what a rebuild from them
    would hold (terms, counts, lengths, the pool's sums) but for the ids, and the answer from it
    is the scan's. Cheaper than the rebuild it replaces: a read and a hash per note, the
    tokenizer only for the ones that differ. The state and the notes indexed again; None: the
    index is of another version now (built again meanwhile), so the caller lets the scan answer."""
    conn.execute("COMMIT")
    conn.execute("BEGIN IMMEDIATE")
    st = load_state(conn, fingerprint())
    if not st.fingerprint:
        return None
    st.racy = set(st.positions(len(now)))
    return st, searchrefresh.refresh(conn, st, now, t0)


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
        tmp = fsutil.temp_path(final)
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            t0 = time.time_ns()
            now = searchrefresh.listing(root)
            src = sqlite3.connect(tmp, isolation_level=None)
            try:
                src.execute("PRAGMA journal_mode = OFF")
                src.execute("PRAGMA synchronous = OFF")
                for sql in SCHEMA:
                    src.execute(sql)
                src.execute("BEGIN")
                st = State(os.urandom(16))  # the salt of this index's hashes
                st.fingerprint = fingerprint()
                searchrefresh.refresh(src, st, now, t0)
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
    if out.rebuild:
        hits = _rebuild(root, out, q, (type_, limit, include_archive), cut)
        if hits is not None:
            return hits
    if out.hits is not None:
        return out.hits
    return S.search(root, query, type_, limit, include_archive, cut)


def _rebuild(root: str, out: Outcome, q: S.Query, how: tuple[str | None, int, bool],
             cut: list[tuple[str, int]] | None) -> list[S.Hit] | None:
    """Build the index again: here for a small store (then its answer), else detached."""
    if out.problem:  # unreadable: out of the way, so the searches until it is rebuilt scan quietly
        for name in (metadir.SEARCH_INDEX, metadir.SEARCH_JOURNAL):
            try:
                os.unlink(metadir.path(root, name))
            except OSError:
                pass
    small = out.hits is None and _count(root) <= INLINE_MAX
    if small and build(root):
        out.hits = None  # answered below by the index just built
        again = lookup(root, q, how[0], how[1], how[2], cut)
        return again.hits
    if not small:
        build_in_background(root)
    return None


def _count(root: str) -> int:
    return sum(len(S.note_entries(folder, not archived)) for folder, _, archived in S.folders(root))
