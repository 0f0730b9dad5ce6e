"""The review manifest, `<root>/.engramory/manifest.json`: per `.md` file of the store its
size, mtime and sha256 as last seen, and `journal_seen`, the id of the newest journal entry
whose result it holds.

Two writers keep it, both under the store lock: `engramory review` (engramory.store.review), which
compares the disk with it and journals what something else changed; and every engramory write
(engramory.store.journal), which leaves it at the write's own after-state in the same locked step
as the journal entry. So "ours" is always the latest state engramory wrote to a path, never an
older version another entry once produced. When a crash falls between the journal entry and
the manifest, `journal_seen` is behind: the entries after it are read (from the journal's
end, only those) and each path's newest `after` is taken as ours (`ours_since`).

A manifest that is damaged (not JSON, a field of the wrong type) never stops a command: what
can be read is used, the rest is named in the warnings `load` returns. One that is not a file
(a FIFO, a folder) is StoreDamaged, before anything is read from it.

Standard library only; Python 3.9+.
"""

from __future__ import annotations

import hashlib
import json
import os

from engramory.scope import index_name_for
from engramory.store import metadir
from engramory.store.journalfile import Reader

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

    from engramory.store.blobstore import BlobStore
    from engramory.store.journalfile import Entry

VERSION = 1
MANIFEST_MAX = 64 << 20  # bytes; about 500,000 notes


def tracked(rel: str, root: str) -> bool:
    """Whether the manifest follows `rel`: a `.md` file outside dot-folders (the review's walk),
    and the store's index whatever its name (store.index_name_for: the file the commands write)."""
    if rel.lower().endswith(".md"):
        return not any(p.startswith(".") for p in rel.split("/"))
    return "/" not in rel and rel == index_name(root)


def index_name(root: str) -> str:
    return index_name_for(root)


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _row(value: object) -> list[Any] | None:
    if (isinstance(value, list) and len(value) == 3 and _count(value[0]) is not None
            and isinstance(value[1], int) and not isinstance(value[1], bool) and isinstance(value[2], str)):
        return list(value)
    return None


def load(root: str) -> tuple[dict[str, Any] | None, list[str]]:
    """(the manifest, warnings), or (None, warnings) when there is none or it cannot be used
    at all (then the next review takes a new baseline, and a warning says so)."""
    where = metadir.path(root, metadir.MANIFEST)
    raw, _ = metadir.read(where, MANIFEST_MAX)
    if raw is None:
        return None, []
    fresh = "; a new baseline is taken (changes made outside engramory before now are not listed)"
    if len(raw) > MANIFEST_MAX:
        return None, ["%s is over %s bytes%s" % (where, "{:,}".format(MANIFEST_MAX), fresh)]
    try:
        obj = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        return None, ["%s is damaged (not JSON: %s)%s" % (where, str(exc)[:80], fresh)]
    if not isinstance(obj, dict) or obj.get("version") != VERSION or not isinstance(obj.get("files"), dict):
        return None, ["%s is not a version-%d manifest%s" % (where, VERSION, fresh)]
    warnings = _clean_files(obj, where)
    warnings.extend(_clean_small_fields(obj, where))
    return obj, warnings


def _clean_files(obj: dict[str, Any], where: str) -> list[str]:
    """Drop the damaged rows of "files" (those notes are then compared as new)."""
    files = {}
    for rel, value in obj["files"].items():
        row = _row(value)
        if isinstance(rel, str) and row is not None:
            files[rel] = row
    warnings = []
    if len(files) != len(obj["files"]):
        warnings.append("%s: %d damaged row%s skipped (those notes are compared as new)"
                        % (where, len(obj["files"]) - len(files), "" if len(obj["files"]) - len(files) == 1 else "s"))
    obj["files"] = files
    return warnings


def _clean_small_fields(obj: dict[str, Any], where: str) -> list[str]:
    """The entry ids read as 0 when damaged or absent; the path lists kept to their strings."""
    warnings = []
    for key, meaning in (("journal_seen", "every journal entry is compared"), ("reviewed", "every change is listed")):
        if key in obj and _count(obj[key]) is None:
            warnings.append("%s: \"%s\" is %s, not an entry id; read as 0 (%s)" % (where, key, json.dumps(obj[key])[:40],
                                                                              meaning))
            obj[key] = 0
        obj.setdefault(key, 0)
    for key in ("pending", "unrecoverable"):
        value = obj.get(key)
        obj[key] = [r for r in value if isinstance(r, str)] if isinstance(value, list) else []
    return warnings


TAIL = 64 << 10  # bytes read from a manifest's end to find its small fields


def reviewed(root: str) -> int | None:
    """The manifest's "reviewed" id from one read of its last TAIL bytes, or None when that
    does not settle it (no manifest, one `save` did not write, a tail too long): the caller
    then loads it whole. `save` sorts the keys, so after the one large field, "files", come
    only "journal_seen", "pending", "reviewed", "unrecoverable" (at most 100 paths) and
    "version"; a quote inside a path is escaped, so `"reviewed":` cannot occur within
    "files". What SessionStart reads on a store of any size."""
    import re

    where = metadir.path(root, metadir.MANIFEST)
    try:
        size = os.lstat(where).st_size
    except OSError:
        return None
    raw, _ = metadir.read(where, TAIL, max(0, size - TAIL))
    if raw is None or not raw.endswith(b'"version":%d}' % VERSION):
        return None
    at = raw.rfind(b'"reviewed":')
    m = re.match(rb'"reviewed":(\d{1,18}),"unrecoverable":\[', raw[at:]) if at >= 0 else None
    return int(m.group(1)) if m else None


def save(root: str, manifest: dict[str, Any]) -> None:
    meta = metadir.meta_dir(root)
    data = json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode("utf-8")
    metadir.write_atomic(os.path.join(meta, metadir.MANIFEST), data, 0o600)


def ours_since(root: str, since: int) -> dict[str, str | None]:
    """rel -> the sha256 (None: absent) the newest journal entry after `since` left there,
    for the paths entries after `since` touched: what engramory (or a journaled review) made
    them last. Reads only those entries, from the journal's end."""
    latest: dict[str, str | None] = {}
    for e in Reader(root).raw_back():
        if e.id <= since:
            break
        for c in e.changes:
            latest.setdefault(c.path, c.after)
    return latest


def expected(manifest: dict[str, Any], ours: dict[str, str | None], rel: str) -> str | None:
    """What `rel` should hold if nothing else touched it: the latest state engramory wrote."""
    if rel in ours:
        return ours[rel]
    row = manifest["files"].get(rel)
    return str(row[2]) if row is not None else None


def unreported(root: str, manifest: dict[str, Any], last: int, blobs: BlobStore,
               planned: Iterable[tuple[str, bytes | None]]) -> tuple[list[tuple[str, bytes | None, bytes | None]], list[str]]:
    """The changes something else made to the paths a write is about to replace, not yet
    journaled by a review: ([(rel, prior, now)], [rels whose prior bytes are gone]). A write
    journals them first, as one entry of their own, so that undoing every entry, newest
    first, still gives back what was there."""
    since = int(manifest.get("journal_seen") or 0)
    ours = ours_since(root, since) if last > since else {}
    found: list[tuple[str, bytes | None, bytes | None]] = []
    lost: list[str] = []
    for rel, now in planned:
        if not tracked(rel, root):
            continue
        want = expected(manifest, ours, rel)
        if (None if now is None else hashlib.sha256(now).hexdigest()) == want:
            continue
        prior = None if want is None else blobs.read(want)
        if want is not None and prior is None:
            lost.append(rel)
            continue
        found.append((rel, prior, now))
    return found, lost


def after_write(root: str, written: Sequence[Entry], loaded: dict[str, Any] | None = None) -> None:
    """Leave the manifest at the after-state of `written` (entries just appended, oldest
    first): each tracked path's size, mtime and sha256 as the write left it. `journal_seen`
    moves only when the manifest held every entry before (a gap stays for `ours_since`).
    Without a manifest (no review yet) nothing is done: the first review takes the baseline.
    `loaded` is the manifest as the caller read it under the same lock (saves a second parse)."""
    manifest = loaded if loaded is not None else load(root)[0]
    if manifest is None:
        return
    files = manifest["files"]
    pending = set(manifest["pending"])
    for e in written:
        for c in e.changes:
            if not tracked(c.path, root):
                continue
            pending.discard(c.path)
            if c.after is None:
                files.pop(c.path, None)
                continue
            try:
                st = os.lstat(os.path.join(root, *c.path.split("/")))
            except OSError:
                files.pop(c.path, None)
                continue
            files[c.path] = [st.st_size, st.st_mtime_ns, c.after]
        if manifest["journal_seen"] == e.id - 1:
            manifest["journal_seen"] = e.id
    manifest["pending"] = sorted(pending)
    save(root, manifest)
