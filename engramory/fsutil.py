"""Writing a user's files safely: a timestamped backup of what was there, then an atomic
replace (temp file in the same folder, fsync, os.replace), so a crash never leaves a
half-written settings file and the previous version can always be restored.

`replace_with` is the one atomic replace: the installer's `write_atomic` (which makes the
folder and keeps the old file's mode) and the store's (engramory.store.metadir.write_atomic,
which also fsyncs the folder) are both it."""

import time

from engramory import scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


def backup(path: "str") -> "str | None":
    """Copy `path` to `<path>.engramory-backup-<UTC timestamp>` and return that name, or
    None when there was nothing to back up. Never overwrites an earlier backup. The backup
    gets the file's own permission bits: a 0600 file holding a token stays 0600 in its copy."""
    import os  # the installer's backup: not a hook's path

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


def write_atomic(path: "str", data: "bytes", mode: "int | None" = None) -> "None":
    """Replace `path` with `data` in one step, making its folder when missing. Keeps the old
    file's permission bits unless `mode` is given; a new file gets `mode` or 0o644."""
    folder = scope.dirname(scope.abspath(path))
    if not scope.isdir(folder):
        import os  # makedirs: only for a folder that is not there yet

        os.makedirs(folder, exist_ok=True)
    if mode is None:
        try:
            mode = scope.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o644
    replace_with(scope.join(folder, scope.basename(path)), data, mode)


# In the name of every temporary file engramory writes, `.<name>.engramory-tmp-<pid>-<hex>`: a
# dot name, never taken for a note, by which the journal finds one a crash left behind.
TMP_MARK = ".engramory-tmp-"


def temp_path(path: "str") -> "str":
    """A fresh temporary name beside `path`, for the file that is to replace it."""
    calls = scope.calls()
    base = ".%s%s%d-%s" % (scope.basename(path), TMP_MARK, calls.getpid(), calls.urandom(3).hex())
    return scope.join(scope.dirname(path), base)


def replace_with(path: "str", data: "bytes", mode: "int", sync: "bool" = True,
                 before_replace: "Callable[[str, str], object] | None" = None) -> "None":
    """`path` replaced by `data` in one step: a new temporary file beside it (O_EXCL, so never
    one that is there already, nor a link planted at its name), fsync (unless `sync=False`),
    chmod `mode`, os.replace; on any failure the temporary file is removed and `path` is left
    as it was. `before_replace(tmp, path)` is a test seam. Through engramory.scope.calls: `os`'s
    own functions, without importing `os` in a hook that writes its small state."""
    calls = scope.calls()
    tmp = temp_path(path)
    fd = calls.open(tmp, calls.O_WRONLY | calls.O_CREAT | calls.O_EXCL | getattr(calls, "O_BINARY", 0), 0o600)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[calls.write(fd, view):]
            if sync:
                calls.fsync(fd)
        finally:
            calls.close(fd)
        calls.chmod(tmp, mode)
        if before_replace is not None:
            before_replace(tmp, path)
        calls.replace(tmp, path)
    except BaseException:
        try:
            calls.unlink(tmp)
        except OSError:
            pass
        raise
