"""The blob store: the bytes an engramory write replaced or removed (what `engramory undo`
puts back), and the bytes it left (what `engramory review` needs to undo a later deletion by
something else), each kept once under its sha256.

`<root>/.engramory/blobs/<sha256>`: files 0600 in a folder 0700 that holds a `.gitignore` of
`*`, so the blobs are never committed with the store. Nothing engramory prints shows a blob's
bytes, and neither search nor the doctor walks `.engramory/`. A note that holds a secret is
kept like any other: the blob store is local and private, while leaving those bytes out would
make its undo impossible.

Bounds: one version at most BLOB_FILE_MAX bytes, all of them together at most BLOB_CAP bytes.
The total is kept in `blobs/.total`, so a write never lists the folder; it is recounted when
that file is missing and whenever the cap is reached. Which blobs may go when room is needed is
engramory.store.journal's decision (see its docstring): never one an undoable journal entry needs.

Standard library only; Python 3.9+.
"""

from __future__ import annotations

import hashlib
import os

from engramory.size import n as n
from engramory.store import metadir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

BLOB_CAP = 64 << 20  # bytes of kept versions in all
BLOB_FILE_MAX = 8 << 20  # bytes of one kept version
TOTAL = ".total"
_HEX = frozenset("0123456789abcdef")



def is_digest(value: object) -> bool:
    """A sha256 in lowercase hex: the only names a blob has (a journal line that names
    anything else never leads a read outside the folder)."""
    return isinstance(value, str) and len(value) == 64 and _HEX.issuperset(value)


def undo_problem(prior: Iterable[tuple[str, int]]) -> str | None:
    """Why the prior versions (path, size) of one write cannot be kept for its undo, or None."""
    items = list(prior)
    for rel, size in items:
        if size > BLOB_FILE_MAX:
            return ("the prior version of %s is %s bytes, over the %s bytes the blob store keeps of one version "
                    "(BLOB_FILE_MAX)" % (rel, n(size), n(BLOB_FILE_MAX)))
    total = sum(size for _, size in items)
    if total > BLOB_CAP:
        return ("its prior versions are %s bytes in all, over the %s bytes the blob store keeps (BLOB_CAP)"
                % (n(total), n(BLOB_CAP)))
    return None


class BlobStore:
    """The blobs of one store, used under the store lock."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.dir = os.path.join(root, metadir.DIR, metadir.BLOBS)
        self._total: int | None = None
        self._dirty = False
        self._ready = False  # the folder and its .gitignore are in place

    # the folder
    def _check_folder(self) -> bool:
        """Whether the folder exists; StoreDamaged when something else is in its place."""
        try:
            st = os.lstat(self.dir)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise metadir.StoreDamaged("%s cannot be read (%s)" % (self.dir, exc.strerror or exc)) from None
        if metadir.kind(st.st_mode) != "a folder":
            raise metadir.damaged(self.dir, metadir.kind(st.st_mode),
                                  "the folder of prior versions engramory keeps for undo")
        return True

    def _make_folder(self) -> None:
        if self._ready:
            return
        if not self._check_folder():
            metadir.meta_dir(self.root)
            os.mkdir(self.dir, 0o700)
        ignore = os.path.join(self.dir, ".gitignore")
        if not os.path.lexists(ignore):  # also a folder an older version made without one
            os.chmod(self.dir, 0o700)
            metadir.write_atomic(ignore, b"# prior versions of notes, kept for `engramory undo`: never committed\n*\n",
                                 0o600)
        self._ready = True

    def path(self, digest: str) -> str:
        if not is_digest(digest):
            raise metadir.StoreDamaged("the journal names a prior version %r that is not a sha256; it was not read"
                                       % str(digest)[:80])
        return os.path.join(self.dir, digest)

    # reading
    def has(self, digest: str) -> bool:
        try:
            return metadir.kind(os.lstat(self.path(digest)).st_mode) == "a file"
        except OSError:
            return False

    def read(self, digest: str) -> bytes | None:
        """The kept bytes of `digest`, or None when they are not kept (or no longer match)."""
        if not is_digest(digest):
            return None
        data, _ = metadir.read(self.path(digest), BLOB_FILE_MAX)
        if data is None:
            self._check_folder()
            return None
        return data if hashlib.sha256(data).hexdigest() == digest else None

    # the running total
    def total(self) -> int:
        if self._total is None:
            raw, _ = metadir.read(os.path.join(self.dir, TOTAL), 32) if self._check_folder() else (b"0", 0)
            text = (raw or b"").decode("ascii", "replace").strip()
            self._total = int(text) if text.isdigit() and (raw or b"").endswith(b"\n") else self.recount()
        return self._total

    def recount(self) -> int:
        self._total = sum(size for _, _, size in self.listing())
        self._dirty = True
        return self._total

    def save(self) -> None:
        """Write the running total when it changed (one small file; no fsync: a lost total
        is recounted)."""
        if self._dirty and self._total is not None and self._check_folder():
            # overwritten in place, not replaced: a torn total reads as damaged and is recounted
            fd = os.open(os.path.join(self.dir, TOTAL), os.O_WRONLY | os.O_CREAT | os.O_TRUNC
                         | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0), 0o600)
            try:
                if metadir.kind(os.fstat(fd).st_mode) == "a file":
                    os.write(fd, b"%d\n" % self._total)
            finally:
                os.close(fd)
            self._dirty = False

    def listing(self) -> list[tuple[float, str, int]]:
        """(mtime, digest, size) of every blob, oldest first."""
        items = []
        try:
            with os.scandir(self.dir) as it:
                for e in it:
                    if not is_digest(e.name):
                        continue
                    try:
                        st = e.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    items.append((st.st_mtime, e.name, st.st_size))
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise metadir.StoreDamaged("%s cannot be listed (%s)" % (self.dir, exc.strerror or exc)) from None
        items.sort()
        return items

    # writing
    def add(self, data: bytes, digest: str, sync: bool = True) -> bool:
        """Keep `data` under `digest`; True when it was not kept before. An existing copy is
        touched (its mtime orders what goes first among blobs nothing needs)."""
        where = self.path(digest)
        self._make_folder()
        if self.has(digest):
            try:
                os.utime(where)
                if sync:  # it may have been kept without fsync (a write's after-bytes): an undo now needs it
                    fd = os.open(where, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
                    try:
                        os.fsync(fd)
                    finally:
                        os.close(fd)
            except OSError:
                pass
            return False
        total = self.total()
        metadir.write_atomic(where, data, 0o600, sync=sync)
        self._total = total + len(data)
        self._dirty = True
        return True

    def remove(self, digest: str, size: int) -> None:
        try:
            os.unlink(self.path(digest))
        except FileNotFoundError:
            return
        self._total = max(0, self.total() - size)
        self._dirty = True

    def prune(self, keep: set[str], need: int = 0) -> bool:
        """Remove blobs not in `keep`, oldest first, until `need` more bytes fit under
        BLOB_CAP. Whether they fit now."""
        if self.total() + need <= BLOB_CAP:
            return True
        self.recount()
        for _, name, size in self.listing():
            if self.total() + need <= BLOB_CAP:
                break
            if name not in keep:
                self.remove(name, size)
        return self.total() + need <= BLOB_CAP

    def drop_all_but(self, keep: set[str]) -> None:
        """Remove every blob not in `keep` (after a rotation: what no undoable entry and no
        manifest row needs is garbage)."""
        for _, name, size in self.listing():
            if name not in keep:
                self.remove(name, size)
