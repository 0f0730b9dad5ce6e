"""The stamps of a folder's notes (size, mtime_ns, ctime_ns, inode, mode per name), taken by one
lstat each, relative to the folder's descriptor: what every warm search pays before it can trust
its index (engramory.curate.searchrefresh.listing).

At 50,000 notes the lstats are most of a warm search (about 2.5 us each, most of it building the
stat_result), and one process does them one after the other. A folder past SPLIT_MIN names on a
Linux machine with a second CPU free to this process has its second half stat'ed by a forked
child while this process stats the first, the way git's preload-index spreads its lstats over
threads (threads cannot here: each stat_result is built under the interpreter lock). The child
only stats and writes the packed stamps to a pipe, then leaves by os._exit (no atexit handler, no
buffer flushed, nothing of the parent's SQLite connection touched). Anything short of its whole
answer (a note gone between the listing and its lstat, a fork refused, a short pipe) and this
process stats that half itself, so the answer is always the one a single loop gives, or the
OSError that loop raises. Never in a process that runs other threads (a fork copies only the
calling thread, and whatever lock another held stays held in the child).
"""

from __future__ import annotations

import array
import os
import sys
from functools import partial
from itertools import chain
from operator import attrgetter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

FIELDS = 5
SPLIT_MIN = 6000  # names; below this a fork (about 1 ms) saves less than it costs
_STAMP = attrgetter("st_size", "st_mtime_ns", "st_ctime_ns", "st_ino", "st_mode")
_INO_MASK = (1 << 63) - 1
_LINUX = sys.platform.startswith("linux")


def serial(fd: int, names: Sequence[str]) -> array.array[int]:
    """FIELDS integers per name, in order, by one lstat each (OSError when one is gone)."""
    stat = partial(os.stat, dir_fd=fd, follow_symlinks=False)
    try:
        # each stat_result packed as it comes, none kept: 50,000 of them alive cost a fifth of the listing
        return array.array("q", chain.from_iterable(map(_STAMP, map(stat, names))))
    except OverflowError:  # an inode number past 2**63: masked, one by one
        return array.array("q", [v for st in map(stat, names) for v in (
            st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino & _INO_MASK, st.st_mode)])


def split_ok(n: int) -> bool:
    """Whether `n` names are worth a second process here, and a fork is safe."""
    if n < SPLIT_MIN or not _LINUX or not hasattr(os, "fork"):
        return False
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return False
    return _cpus() > 1


def _cpus() -> int:
    """The CPUs this process may run on (its affinity, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return 1


def stamps(fd: int, names: Sequence[str]) -> array.array[int]:
    """`serial(fd, names)`, its second half by a forked child when `split_ok`."""
    if not split_ok(len(names)):
        return serial(fd, names)
    half = len(names) // 2
    try:
        r, w = os.pipe()
    except OSError:
        return serial(fd, names)
    try:
        pid = os.fork()
    except OSError:
        os.close(r)
        os.close(w)
        return serial(fd, names)
    if pid == 0:  # pragma: no cover - the child (its answer is checked by the parent's tests)
        os.close(r)
        _child(fd, names[half:], w)
    os.close(w)
    try:
        head = serial(fd, names[:half])
    finally:
        tail = _collect(r, pid)
    if len(tail) != FIELDS * 8 * (len(names) - half):
        return head + serial(fd, names[half:])  # the child's answer is short: this process's own
    out = array.array("q", head)
    out.frombytes(tail)
    return out


def _child(fd: int, names: Sequence[str], w: int) -> None:  # pragma: no cover - runs in the child
    code = 1
    try:
        data = memoryview(serial(fd, names).tobytes())
        while data:
            data = data[os.write(w, data):]
        code = 0
    except BaseException:  # noqa: BLE001 - whatever it was, the parent stats this half itself
        pass
    finally:
        os._exit(code)


def _collect(r: int, pid: int) -> bytes:
    """All the child wrote, after it exited 0; b"" when it did not."""
    parts = []
    try:
        while True:
            chunk = os.read(r, 1 << 20)
            if not chunk:
                break
            parts.append(chunk)
    except OSError:
        parts = []
    finally:
        os.close(r)
    try:
        _, status = os.waitpid(pid, 0)
    except OSError:
        return b""
    return b"".join(parts) if status == 0 else b""
