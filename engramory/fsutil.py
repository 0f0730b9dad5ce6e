"""Writing a user's files safely: a timestamped backup of what was there, then an atomic
replace (temp file in the same folder, fsync, os.replace), so a crash never leaves a
half-written settings file and the previous version can always be restored."""

from __future__ import annotations

import os
import time


def backup(path: str) -> str | None:
    """Copy `path` to `<path>.engramory-backup-<UTC timestamp>` and return that name, or
    None when there was nothing to back up. Never overwrites an earlier backup. The backup
    gets the file's own permission bits: a 0600 file holding a token stays 0600 in its copy."""
    try:
        with open(path, "rb") as f:
            data = f.read()
            mode = os.fstat(f.fileno()).st_mode & 0o7777
    except FileNotFoundError:
        return None
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = "%s.engramory-backup-%s" % (path, stamp)
    n = 1
    while os.path.exists(target):
        n += 1
        target = "%s.engramory-backup-%s-%d" % (path, stamp, n)
    write_atomic(target, data, mode=mode)
    return target


def write_atomic(path: str, data: bytes, mode: int | None = None) -> None:
    """Replace `path` with `data` in one step. Keeps the old file's permission bits unless
    `mode` is given; a new file gets `mode` or 0o644."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    if mode is None:
        try:
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o644
    tmp = os.path.join(folder, ".%s.engramory-tmp-%d" % (os.path.basename(path), os.getpid()))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
