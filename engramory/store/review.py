"""Review of what others changed: a content-hash manifest of the store, reconciled against
the disk, every difference journaled; `engramory review [ROOT]` (engramory.commands.review)
lists them.

Notes change outside engramory's commands: the host's own consolidation deletes with `rm`,
shell edits, editors, sync clients. `<root>/.engramory/manifest.json` (engramory.store.manifest)
records, per `.md` file of the store (the walk of `engramory.store.reader`: dot-folders skipped,
symlinked folders not followed), its size, mtime and sha256. `reconcile(root)` compares the
disk with it, cheaply: one stat per file, and a file is read and hashed only when its size or
mtime moved. Each difference (added, changed, deleted) becomes part of ONE journal entry
(`journal.record`, command "external") holding the prior bytes, so `engramory undo ID` brings
a deleted note back. The current bytes of every file the manifest learns go to the blob store
too, secrets included (it is private), which is what makes a later deletion undoable.

What is "ours": every engramory write leaves the manifest at its own after-state under the
store lock, so a difference is always measured from the latest state engramory wrote to that
path, never from an older version or an absence some earlier entry once produced. Only when a
crash left the manifest behind the journal (`journal_seen`) are the entries after it read, and
each path's newest `after` counts (engramory.store.manifest.ours_since).

The SessionStart backstop reconciles every known store and adds one line to its notice when
notes were deleted or changed by something else since the last review; the shell backstop
reconciles after each Bash/PowerShell/MCP call, so an `rm` is caught in the act. A damaged
`.engramory/` never costs a hook more than a few stat calls (engramory.store.metadir.check).
`engramory review` lists the unreviewed changes and marks them reviewed.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
import time

import engramory
from engramory import scope
from engramory.store import journalfile, metadir
from engramory.store import manifest as manifest_mod

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from engramory.store import journal
    from engramory.store.journal import Entry

MANIFEST = "manifest.json"
MANIFEST_VERSION = 1
COMMAND = "external"  # the journal command of changes something else made (journal.EXTERNAL)
READ_MAX = 4 << 20  # like the store's: a larger file is tracked by size and mtime alone
META = ".engramory"
LOCK_WAIT = 2.0  # seconds a hook waits for another engramory command before leaving it for later
BLOB_BUDGET = 3.0  # seconds one reconcile spends copying blobs; the rest waits for the next one


def _manifest_path(root: str) -> str:
    return os.path.join(root, META, MANIFEST)


def walk(root: str) -> dict[str, tuple[int, int]]:
    """rel -> (size, mtime_ns) of every regular `.md` file of the store, and of its index
    whatever its name (manifest.tracked)."""

    out: dict[str, tuple[int, int]] = {}
    index = manifest_mod.index_name(root)
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        folder = os.path.join(root, rel_dir) if rel_dir else root
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError:
            continue
        for e in entries:
            name = e.name
            if name.startswith("."):
                continue
            rel = rel_dir + "/" + name if rel_dir else name
            try:
                if e.is_dir(follow_symlinks=False):
                    stack.append(rel)
                    continue
                if not name.lower().endswith(".md") and rel != index:
                    continue
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                out[rel] = (st.st_size, st.st_mtime_ns)
    return out


def load_manifest(root: str, warnings: list[str] | None = None) -> dict[str, Any] | None:
    """The manifest (engramory.store.manifest), None when there is none or it is unusable; what
    was damaged in it is added to `warnings`. StoreDamaged when it is not a file."""

    found, warns = manifest_mod.load(root)
    if warnings is not None:
        warnings.extend(warns)
    return found


def save_manifest(root: str, manifest: dict[str, Any]) -> None:

    manifest_mod.save(root, manifest)


def _read(root: str, rel: str) -> bytes | None:
    """The bytes of a note (through scope.read_bounded), None past READ_MAX or unreadable."""

    try:
        data, _ = scope.read_bounded(os.path.join(root, rel), READ_MAX)
    except OSError:
        return None
    return data if len(data) <= READ_MAX else None


class Found:
    """What one reconcile found: the journal entry (None: nothing to journal) and counts."""

    __slots__ = ("entry", "added", "changed", "deleted", "unrecoverable", "baseline", "warnings")

    def __init__(self) -> None:
        self.entry: Entry | None = None
        self.added: list[str] = []
        self.changed: list[str] = []
        self.deleted: list[str] = []
        self.unrecoverable: list[str] = []  # prior bytes not in the blob store: not journaled
        self.baseline = False
        self.warnings: list[str] = []  # what was damaged in the manifest, and how it was read


def _moved(disk: dict[str, tuple[int, int]], manifest: dict[str, Any] | None) -> bool:
    if manifest is None:
        return True
    old = manifest["files"]
    if len(old) != len(disk):
        return True
    for rel, sig in disk.items():
        rec = old.get(rel)
        if rec is None or rec[0] != sig[0] or rec[1] != sig[1]:
            return True
    return False


LARGE_MANIFEST = 512 << 10  # bytes of manifest (about 5,000 notes): past this, a large store
LARGE_FOLDER = 2_000  # entries in the store folder, for a store with no manifest yet


def large_store(root: str) -> bool:
    """Whether reconciling `root` would take long enough to matter in a hook: a big manifest,
    or, with none yet (the first review reads every note), a crowded folder. Cheap: one stat,
    or one listing."""
    try:
        return os.stat(_manifest_path(root)).st_size > LARGE_MANIFEST
    except FileNotFoundError:
        try:
            return len(os.listdir(root)) > LARGE_FOLDER
        except OSError:
            return False
    except OSError:
        return False


def reconcile_in_background(root: str, source: str, then: str = "") -> None:
    """`reconcile(root, source)` in a detached process that the caller does not wait for:
    a short-lived middle process starts it in a session of its own, with no inherited
    pipes (the host's hook ends when this one returns), and exits at once. It takes the
    store lock like any reconcile, and no child starts while another holds the store's
    background lock (nor works, if two hooks start one at once). `then` ("module:function")
    runs after it in the same child, with the root (SessionStart's doctor summary)."""
    import subprocess


    if metadir.held(root, metadir.BACKGROUND_LOCK):
        return  # one is at work on this store already
    bundle = os.path.dirname(os.path.dirname(os.path.abspath(engramory.__file__)))
    # `then`, "module:function", is called with the root after the reconcile, in the same child
    work = ("import sys; sys.path.insert(0, sys.argv[1]); from engramory.store import review; "
            "review.background_work(sys.argv[2], sys.argv[3], sys.argv[4])")
    spawn = ("import subprocess, sys; d = subprocess.DEVNULL; subprocess.Popen(sys.argv[1:], stdin=d, "
             "stdout=d, stderr=d, start_new_session=True, close_fds=True)")
    python = sys.executable or "python3"
    try:
        subprocess.run(
            [python, "-I", "-S", "-c", spawn, python, "-I", "-S", "-c", work, bundle, root, source, then],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            close_fds=True, timeout=5, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        pass  # no child: the next SessionStart or `engramory review` reconciles


def background_work(root: str, source: str, then: str) -> None:
    """What `reconcile_in_background`'s child does: unless another child holds the store's
    background lock, reconcile, then call `then` ("module:function", or "") with the root."""
    import importlib


    fd = metadir.claim(root, metadir.BACKGROUND_LOCK)
    if fd is None:
        return
    try:
        try:
            reconcile(root, source)
        finally:
            if then:
                module, _, func = then.partition(":")
                getattr(importlib.import_module(module), func)(root)
    finally:
        if fd >= 0:
            os.close(fd)


def reconcile(root: str, source: str = "reconcile", wait: float = LOCK_WAIT) -> Found:
    """Compare the store with its manifest, journal what something else changed, update the
    manifest. A store without a manifest gets one (a baseline: nothing is reported). Cheap
    when nothing changed: one stat per file, no lock, no write. When something moved, the
    comparison is made again under the store lock, so a write engramory is making at that
    moment is seen whole, with its journal entry, never half as someone else's; a lock held
    longer than `wait` seconds postpones the reconcile to the next call. StoreDamaged when a
    file of `.engramory/` is not what engramory keeps there."""

    metadir.check(root)
    warnings: list[str] = []
    manifest = load_manifest(root, warnings)
    if (manifest is not None and not _moved(walk(root), manifest) and not manifest.get("pending")
            and journalfile.last_id(root) <= int(manifest["journal_seen"])):
        return Found()
    # lazy: a reconcile that finds nothing moved (each hook) must not load journal and its lock (7 ms)
    from engramory.store import journal

    try:
        with journal.lock(root, timeout=wait):
            return _reconcile(root, source)
    except journal.LockTimeout:
        found = Found()
        found.warnings = warnings
        return found


def _baseline(root: str, disk: dict[str, tuple[int, int]], found: Found) -> Found:
    # lazy: a reconcile that finds nothing moved (each hook) must not load journal and its lock (7 ms)
    from engramory.store import journal

    files: dict[str, list[Any]] = {}
    kept = []
    for rel, (size, mtime) in sorted(disk.items()):
        data = _read(root, rel)
        if data is None:
            continue
        digest = hashlib.sha256(data).hexdigest()
        kept.append((rel, data, digest))
        files[rel] = [size, mtime, digest]
    left = journal.keep_blobs(root, kept, time.monotonic() + BLOB_BUDGET)
    newest = journalfile.last_id(root)
    save_manifest(root, {"version": MANIFEST_VERSION, "files": files, "journal_seen": newest,
                         "reviewed": newest, "pending": left})
    found.baseline = True
    return found


def _top_up(root: str, manifest: dict[str, Any]) -> bool:
    """Keep the blobs a baseline had no time for, those whose bytes are still the ones hashed."""
    # lazy: a reconcile that finds nothing moved (each hook) must not load journal and its lock (7 ms)
    from engramory.store import journal

    pending = manifest.get("pending") or []
    if not pending:
        return False
    old = manifest["files"]
    top = []
    for rel in pending:
        rec = old.get(rel)
        data = _read(root, rel) if rec is not None else None
        if data is not None and rec is not None and hashlib.sha256(data).hexdigest() == rec[2]:
            top.append((rel, data, rec[2]))
    manifest["pending"] = journal.keep_blobs(root, top, time.monotonic() + BLOB_BUDGET)
    return True


def _reconcile(root: str, source: str) -> Found:
    # lazy: a reconcile that finds nothing moved (each hook) must not load journal and its lock (7 ms)
    from engramory.store import journal

    found = Found()
    disk = walk(root)
    manifest = load_manifest(root, found.warnings)
    if manifest is None:
        return _baseline(root, disk, found)
    topped = _top_up(root, manifest)
    last = journalfile.last_id(root)
    since = int(manifest["journal_seen"])
    # what engramory's own entries not yet in the manifest left (a crash between an entry and
    # its manifest write): per path the newest one, never an older version
    ours = manifest_mod.ours_since(root, since) if last > since else {}
    moved, seen = _moved_files(root, disk, manifest["files"], ours)
    gone = sorted(rel for rel in set(manifest["files"]) | set(ours)
                  if rel not in disk and manifest_mod.expected(manifest, ours, rel) is not None)
    if not moved and not gone and not ours and last <= since:
        if topped:
            save_manifest(root, manifest)
        return found
    journal.keep_blobs(root, [(rel, seen[rel], moved[rel][2]) for rel in sorted(seen)])
    changes = _changed(root, manifest, ours, moved, seen, found)
    changes.extend(_deleted(root, manifest, ours, gone, found))
    if changes:
        try:
            found.entry = journal.record(root, COMMAND, changes, ["reconcile", source])
        except journal.JournalError:
            found.entry = None
    _save_after(root, manifest, disk, moved, found)
    return found


def _moved_files(root: str, disk: dict[str, tuple[int, int]], old: dict[str, list[Any]],
                 ours: dict[str, Any]) -> tuple[dict[str, list[Any]], dict[str, bytes]]:
    """(rel -> new [size, mtime, sha] of each file whose stat moved or that engramory's unrecorded
    entries touched, rel -> bytes of each whose content is not the manifest's)."""
    moved: dict[str, list[Any]] = {}
    seen: dict[str, bytes] = {}
    for rel, sig in disk.items():
        rec = old.get(rel)
        if rec is not None and rec[0] == sig[0] and rec[1] == sig[1] and rel not in ours:
            continue
        data = _read(root, rel)
        if data is None:
            continue
        digest = hashlib.sha256(data).hexdigest()
        moved[rel] = [sig[0], sig[1], digest]
        if rec is None or rec[2] != digest:
            seen[rel] = data
    return moved, seen


def _changed(root: str, manifest: dict[str, Any], ours: dict[str, Any], moved: dict[str, list[Any]],
             seen: dict[str, bytes], found: Found) -> list[journal.Change]:
    """A change per moved file that is not as engramory (or an earlier review) left it."""
    # lazy: a reconcile that finds nothing moved (each hook) must not load journal and its lock (7 ms)
    from engramory.store import journal

    changes = []
    for rel in sorted(moved):
        want = manifest_mod.expected(manifest, ours, rel)
        if moved[rel][2] == want:
            continue  # as engramory (or an earlier review) left it
        data = seen.get(rel)
        if data is None:
            data = _read(root, rel)
            if data is None:
                continue
        if want is None:
            changes.append(journal.Change(rel, None, data))
            found.added.append(rel)
            continue
        prior = journal.read_blob(root, want)
        if prior is None:
            found.unrecoverable.append(rel)
            continue
        changes.append(journal.Change(rel, prior, data))
        found.changed.append(rel)
    return changes


def _deleted(root: str, manifest: dict[str, Any], ours: dict[str, Any], gone: list[str],
             found: Found) -> Iterator[journal.Change]:
    """A change per file gone from the disk, when its prior bytes were kept."""
    # lazy: a reconcile that finds nothing moved (each hook) must not load journal and its lock (7 ms)
    from engramory.store import journal

    for rel in gone:
        prior = journal.read_blob(root, manifest_mod.expected(manifest, ours, rel) or "")
        if prior is None:
            found.unrecoverable.append(rel)
            continue
        found.deleted.append(rel)
        yield journal.Change(rel, prior, None)


def _save_after(root: str, manifest: dict[str, Any], disk: dict[str, tuple[int, int]],
                moved: dict[str, list[Any]], found: Found) -> None:
    """The manifest as the disk now is, seen up to the journal's newest entry."""
    files = {rel: rec for rel, rec in manifest["files"].items() if rel in disk}
    files.update(moved)
    manifest["files"] = files
    manifest["journal_seen"] = journalfile.last_id(root)
    if found.unrecoverable:
        lost = list(manifest.get("unrecoverable") or [])
        lost.extend(found.unrecoverable)
        manifest["unrecoverable"] = lost[-100:]
    save_manifest(root, manifest)


# -- what is unreviewed -------------------------------------------------------------------


def unreviewed(root: str, everything: bool = False) -> list[Entry]:
    """The journal entries of changes something else made, after the last review, oldest
    first (read from the journal's end, down to the last review only)."""

    since = 0
    if not everything:
        fast = manifest_mod.reviewed(root)
        since = fast if fast is not None else int((load_manifest(root) or {}).get("reviewed", 0) or 0)
    out = []
    for e in journalfile.Reader(root).back():
        if e.id <= since:
            break
        if e.command == COMMAND:
            out.append(e)
    out.reverse()
    return out


def kinds(entry: Entry) -> list[tuple[str, str]]:
    """(kind, path) of each change in an entry: added, changed or deleted."""
    out = []
    for c in entry.changes:
        kind = "added" if c.before is None else "deleted" if c.after is None else "changed"
        out.append((kind, c.path))
    return out


def notice_line(root: str) -> str | None:
    """One line for the SessionStart notice when notes were deleted or changed by something
    else since the last review, or None."""
    deleted = changed = 0
    for e in unreviewed(root):
        if e.undone:
            continue
        for kind, _ in kinds(e):
            if kind == "deleted":
                deleted += 1
            elif kind == "changed":
                changed += 1
    if not deleted and not changed:
        return None
    parts = []
    if deleted:
        parts.append("%d note%s deleted" % (deleted, "" if deleted == 1 else "s"))
    if changed:
        parts.append("%d changed" % changed if deleted else "%d note%s changed" % (changed, "" if changed == 1 else "s"))
    return ("%s outside engramory in the memory store %s since the last review; run `engramory review %s` "
            "to see what and `engramory undo ID` to bring one back." % (" and ".join(parts), root, root))


def mark_reviewed(root: str, upto: int | None = None) -> None:
    """Mark the changes journaled up to entry `upto` (default: the newest) as reviewed, under
    the store lock (an engramory write updates the manifest too)."""
    # lazy: a reconcile that finds nothing moved (each hook) must not load journal and its lock (7 ms)
    from engramory.store import journal

    with journal.lock(root, timeout=LOCK_WAIT):
        manifest = load_manifest(root)
        if manifest is None:
            return
        manifest["reviewed"] = journalfile.last_id(root) if upto is None else upto
        save_manifest(root, manifest)


def render(root: str, found: list[Entry]) -> str:
    if not found:
        return "engramory review: nothing changed outside engramory in %s since the last review.\n" % root
    out = ["engramory review: changes made outside engramory in %s since the last review:" % root]
    for e in found:
        state = " (undone)" if e.undone else ""
        for kind, path in kinds(e):
            size = next((c.before_size if kind == "deleted" else c.after_size) for c in e.changes if c.path == path)
            out.append("  entry %d  %s  %-7s %s%s%s" % (e.id, e.time, kind, path,
                                                     " (%s bytes)" % "{:,}".format(size) if size is not None else "",
                                                     state))
    out.append("Bring a deleted or changed note back with `engramory undo ID` (ID: the entry number); "
               "undo puts back every file of that entry byte for byte.")
    return "\n".join(out) + "\n"

