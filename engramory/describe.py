"""One index reader and one index describer, shared by the guard's messages, `check`, the
doctor and the backstop hooks: numbers in the host's units, the entries that fall outside
the host's window, and the compaction steps.

    r = describe.read_index(path, env, window)   # None: missing / not a regular file
    r.status, r.lines, r.units, r.unit, r.caps, r.outside, r.more, r.notes
    describe.size_text(r)        # "212 lines and 24,100 UTF-16 units"
    describe.caps_text(r.caps, r.unit)

`window` is the load window of the host that loads the index (`hosts.<name>.window()`);
None means Claude Code's, the host whose auto-memory index engramory keeps by default. The
caps are the guard's (guard.caps_for): the window's limits, then the environment, then the
store config. An index larger than scope.READ_LIMIT is judged by its size on disk alone.
"""

from engramory import guard, scope
from engramory.size import BYTES, OVER, claude_code_window, verdict
from engramory.size import n as _n

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from engramory.size import Caps, Window

SHOW_OUTSIDE = 3


def default_window() -> "Window":
    """Claude Code's window (engramory.size holds it, so the kernel never reaches up into a host)."""
    return claude_code_window()


class Reading:
    """One index as found on disk now, counted as its host counts it."""

    __slots__ = (
        "path", "status", "lines", "units", "unit", "caps", "outside", "more", "notes", "nbytes", "window", "not_utf8",
    )

    def __init__(
        self, path: str, lines: "int | None", units: int, nbytes: int, caps: "Caps", notes: "list[str]", window: "Window"
    ) -> None:
        self.path = path
        self.lines = lines
        self.units = units
        self.nbytes = nbytes
        self.unit = window.unit
        self.caps = caps
        self.window = window
        self.status = verdict(lines, units, caps)
        self.outside: list[tuple[int, str]] = []
        self.more = 0
        self.notes = notes
        # (byte offset, line) of the first byte that is not UTF-8 (the host reads U+FFFD there)
        self.not_utf8: tuple[int, int] | None = None


def first_bad_utf8(data: bytes, truncated: bool = False) -> "tuple[int, int] | None":
    """(byte offset, 1-based line) of the first byte of `data` that is not UTF-8, or None. With
    `truncated`, a character cut at the very end (where the read stopped) does not count."""
    if data.isascii():
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if truncated and exc.reason == "unexpected end of data":
            return None
        return exc.start, data.count(b"\n", 0, exc.start) + 1
    return None


def read_index(
    path: str, env: "Mapping[str, str] | None" = None, window: "Window | None" = None, show: int = SHOW_OUTSIDE,
    strict: bool = False, limit: int = scope.READ_LIMIT,
) -> "Reading | None":
    """Measure one index; None when it does not exist or is not a readable regular file
    (with `strict`, OSError instead, IsADirectoryError for a non-regular file). Past `limit`
    bytes it is judged by its size on disk alone (hooks pass the guard's smaller limit)."""
    win = window or default_window()
    if not _regular(path, strict):
        return None
    caps, notes = guard.caps_for(path, env, win)
    try:
        data, st = scope.read_bounded(path, limit)  # the fstat of what was opened: no FIFO swapped in
    except OSError:
        if strict:
            raise
        return None
    if len(data) > limit:
        # Far past any cap: its size and its first entries prove enough, read in bounded time.
        data = data[:limit]
        units = st.st_size if win.unit == BYTES else max(win.measure(data)[1], st.st_size // 3)
        reading = Reading(path, None, units, st.st_size, caps, notes, win)
    else:
        lines, units = win.measure(data)
        reading = Reading(path, lines, units, len(data), caps, notes, win)
    reading.not_utf8 = first_bad_utf8(data, truncated=reading.lines is None)
    _find_outside(reading, data, caps, show)
    return reading


def _regular(path: str, strict: bool) -> bool:
    """Whether `path` is a regular file (with `strict`, OSError when it is not, or is not there)."""
    try:
        st = scope.stat(path)
    except OSError:
        if strict:
            raise
        return False
    if not scope.is_regular(st.st_mode):
        if strict:
            raise IsADirectoryError(21, "not a regular file", path)
        return False
    return True


def _find_outside(reading: "Reading", data: bytes, caps: "Caps", show: int) -> None:
    """The first `show` lines past the hard cap into `reading.outside`, the count of the rest into `more`."""
    lines = reading.lines if reading.lines is not None else caps.hard_lines + 1
    if reading.status == OVER or lines > caps.hard_lines or reading.units > caps.hard_bytes:
        for number, line in reading.window.within(caps).outside(data):
            if len(reading.outside) < show:
                reading.outside.append((number, line))
            else:
                reading.more += 1



def size_text(r: "Reading") -> str:
    lines = "an unread number of lines" if r.lines is None else "%s lines" % _n(r.lines)
    units = ("at least %s %s" % (_n(r.units), r.unit)) if r.lines is None and r.unit != BYTES else "%s %s" % (_n(r.units), r.unit)
    return "%s and %s" % (lines, units)


def caps_text(caps: "Caps", unit: str, warn: bool = False) -> str:
    if warn:
        return "warn %s lines / %s %s, hard %s / %s" % (
            _n(caps.warn_lines), _n(caps.warn_bytes), unit, _n(caps.hard_lines), _n(caps.hard_bytes),
        )
    return "hard cap %s lines / %s %s" % (_n(caps.hard_lines), _n(caps.hard_bytes), unit)


def outside_text(r: "Reading", width: int = 200) -> str:
    """'line 201 "- ..."; line 202 "- ..." and 3 more', or "" when nothing falls outside."""
    # lazy: SessionStart reads the index without loading layout; only a notice of lines outside needs it
    from engramory.layout import quote

    if not r.outside:
        return ""
    # masked before the cut: a quote cut short must not leave a token's first characters standing
    shown = "; ".join("line %d %s" % (n, quote(guard.masked(t), width)) for n, t in r.outside)
    return shown + (" and %s more" % _n(r.more) if r.more else "")
