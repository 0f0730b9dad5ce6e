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
Anchor texts and reasons are stored masked (engramory.secretscan) like everything printed.
"""

from __future__ import annotations

import hashlib
import json
import os

from engramory import scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

DIR = ".engramory"
CACHE = "verify-cache.json"
NOTICE = "verify-notice.json"
FORMAT = 1
CACHE_MAX = 64 << 20
NOTICE_MAX = 1 << 20
NOTICE_NOTES = 20
DIRS_MAX = 100_000  # folders stamped; a larger work tree is re-listed on every run


def dir_digest(top: str, dirs: Iterable[str]) -> str:
    """A digest of the modification times of `dirs` (relative to `top`; a missing one counts)."""
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


def _read_json(path: str, limit: int) -> dict[str, Any] | None:
    try:
        raw, _ = scope.read_bounded(path, limit)
    except OSError:
        return None
    if len(raw) > limit:
        return None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) and data.get("format") == FORMAT else None


def load(root: str) -> dict[str, Any] | None:
    return _read_json(os.path.join(root, DIR, CACHE), CACHE_MAX)


def load_notice(root: str) -> dict[str, Any] | None:
    return _read_json(os.path.join(root, DIR, NOTICE), NOTICE_MAX)


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


def save(root: str, data: dict[str, Any], notice: dict[str, Any]) -> None:
    """Write both files; a store that cannot take them just has no cache."""
    from engramory.fsutil import write_atomic

    d = meta_dir(root)
    if d is None:
        return
    data["format"] = notice["format"] = FORMAT
    try:
        write_atomic(os.path.join(d, CACHE), json.dumps(data, separators=(",", ":")).encode("utf-8"), 0o600)
        write_atomic(os.path.join(d, NOTICE), json.dumps(notice, separators=(",", ":")).encode("utf-8"), 0o600)
    except OSError:
        pass
