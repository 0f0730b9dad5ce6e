"""The verdicts of the last run, kept in the store's `.engramory/` so that a second run (and
SessionStart) does not ask git again for what cannot have changed.

`verify-cache.json` holds, per note, its sha256, its verdicts and the (size, mtime) of every
repository file read to reach them; and for the whole run the repository's top, HEAD, the
stamp of git's index and a digest of the modification times of every folder of the work
tree. A note's verdicts are reused only when all of that still holds: a commit, a checkout or
`git add` moves HEAD or the index; an uncommitted rename or a new untracked file moves the
time of its folder; an edit of a file a verdict read moves that file's stamp. What no stamp
shows (a file created inside an ignored folder, an edit in place of a file no verdict read)
is seen at the next change of any of them.

`verify-notice.json` is the small part SessionStart reads: up to NOTICE_NOTES notes with
stale or moved anchors, their stamps, and the paths that decided each verdict.

Both are derived data: unreadable, malformed or foreign ones are ignored and rewritten.
Anchor texts and reasons are stored masked (engramory.store.secrets) like everything printed.
"""

from __future__ import annotations

import os

from engramory import scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

DIR = ".engramory"
VERIFY_LOCK = "verify.lock"  # the name engramory.store.metadir checks
CACHE = "verify-cache.json"
NOTICE = "verify-notice.json"
FORMAT = 1
CACHE_MAX = 64 << 20
NOTICE_MAX = 1 << 20
NOTICE_NOTES = 20
DIRS_MAX = 100_000  # folders stamped; a larger work tree is re-listed on every run


def line_text(note: str, line: int, verdict: str, kind: str, text: str, reason: str, candidate: str | None) -> str:
    """One reported anchor: `note.md:12: moved path scripts/deploy.sh: ops/deploy.py (renamed in
    a1b2c3d)`, `note.md:14: stale symbol render_invoice(): not in the work tree`. Here, not
    with the verdicts, so SessionStart renders a cached row without loading the resolver."""
    tail = "%s (%s)" % (candidate, reason) if verdict == "moved" else reason
    return "%s:%d: %s %s %s: %s" % (note, line, verdict, kind, text, tail)


def row_text(note: str, row: Sequence[Any]) -> str:
    """line_text of a cached row [line, kind, text, verdict, reason, candidate, ...]."""
    return line_text(note, int(row[0]), str(row[3]), str(row[1]), str(row[2]), str(row[4]),
                     row[5] if isinstance(row[5], str) else None)


def dir_digest(top: str, dirs: Iterable[str]) -> str:
    """A digest of the modification times of `dirs` (relative to `top`; a missing one counts)."""
    import hashlib

    h = hashlib.sha1()
    for d in dirs:
        try:
            stamp = os.stat(os.path.join(top, d) if d else top).st_mtime_ns
        except OSError:
            stamp = -1
        h.update(("%s\0%d\n" % (d, stamp)).encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def stamps_hold(top: str, evidence: Sequence[Sequence[Any]]) -> bool:
    """Whether every (rel, size, mtime_ns) still describes its file."""
    for rel, size, mtime in evidence:
        try:
            st = os.stat(os.path.join(top, rel))
        except OSError:
            return False
        if st.st_size != size or st.st_mtime_ns != mtime:
            return False
    return True


def _read_json(path: str, limit: int, lite: bool = False) -> dict[str, Any] | None:
    """The JSON object in `path` in this format, or None. `lite` reads with engramory.jsonlite:
    the small summary is read at SessionStart, where importing json costs more than the read."""
    if lite:
        from engramory import jsonlite as parser  # lazy: hot path, the hook asks for the light parser only
    else:
        import json as parser  # type: ignore[no-redef]

    try:
        raw, _ = scope.read_bounded(path, limit)
    except OSError:
        return None
    if len(raw) > limit:
        return None
    try:
        data = parser.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) and data.get("format") == FORMAT else None


def load(root: str) -> dict[str, Any] | None:
    return _read_json(os.path.join(root, DIR, CACHE), CACHE_MAX)


def load_notice(root: str) -> dict[str, Any] | None:
    return _read_json(os.path.join(root, DIR, NOTICE), NOTICE_MAX, lite=True)


def meta_dir(root: str) -> str | None:
    """The store's `.engramory/` folder, made when missing; None when it cannot be (a file or
    a link in its place, a read-only store): then nothing is cached."""
    d = os.path.join(root, DIR)
    try:
        os.mkdir(d, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    if os.path.islink(d) or not os.path.isdir(d):
        return None
    return d


def claim(root: str) -> int | None:
    """The verify lock of `root` (engramory.store.metadir.claim of `.engramory/verify.lock`)."""
    from engramory.store import metadir  # lazy: hot path, a hook reading the cache takes no lock

    return metadir.claim(root, VERIFY_LOCK)


def busy(root: str) -> bool:
    """Whether a verify run of `root` holds the lock right now."""
    from engramory.store import metadir  # lazy: hot path, a hook reading the cache takes no lock

    return metadir.held(root, VERIFY_LOCK)


def save(root: str, data: dict[str, Any] | None, notice: dict[str, Any]) -> None:
    """Write the cache (when there is one: a store outside any repository has only the
    summary) and the summary; a store that cannot take them just has no cache."""
    import json

    from engramory.fsutil import write_atomic  # lazy: hot path, a hook reading the cache writes nothing

    d = meta_dir(root)
    if d is None:
        return
    notice["format"] = FORMAT
    try:  # the store folder's time once .engramory/ is made: a note added or removed moves it
        notice["store"] = os.stat(root).st_mtime_ns
    except OSError:
        notice["store"] = -1
    try:
        if data is not None:
            data["format"] = FORMAT
            write_atomic(os.path.join(d, CACHE), json.dumps(data, separators=(",", ":")).encode("utf-8"), 0o600)
        write_atomic(os.path.join(d, NOTICE), json.dumps(notice, separators=(",", ":")).encode("utf-8"), 0o600)
    except OSError:
        pass
