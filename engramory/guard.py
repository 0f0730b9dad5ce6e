"""The host-neutral decision: deny, nudge, or nothing, with the message.

Rule: deny exactly when a dimension (lines or bytes) ends over its hard cap AND is larger
than it is on disk now. Any edit that does not grow an over-cap dimension passes, so an index
that is already too long can be compacted step by step (210 -> 205 -> 198). Passing edits
that leave the index over the hard cap, or over the warn cap, get a nudge. The guard never
approves anything: "allow" is always the host's own decision.
"""

from engramory import config, edits, scope
from engramory.size import Caps, count_lines

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

DENY = "deny"
NUDGE = "nudge"
READ_LIMIT = 64 << 20  # past this the index is not read: 2,500 times the byte cap
SHOW_OUTSIDE = 3
# Test-only: when set, every prediction for a guarded index is appended to this file as one
# JSON line, so the end-to-end suite can compare it with the bytes the real host wrote.
TRACE_ENV = "ENGRAMORY_TRACE_FILE"

COMPACT_STEPS = (
    "Compact first, re-counting after each step: (1) pointer-ify: move any prose in index "
    "lines back into its note, so each line is one short hook and a link; (2) merge "
    "duplicate pointers and their notes; (3) archive cold or superseded notes into archive/ "
    "and drop their index lines. Edits that shrink the index are always allowed, so you can "
    "compact step by step; if it still does not fit, ask the user which memories to retire."
)


class Decision:
    __slots__ = ("action", "message", "path", "before", "after", "caps")

    def __init__(self, action: str, message: str, path: str) -> None:
        self.action = action
        self.message = message
        self.path = path
        self.before: tuple[int, int] | None = None
        self.after: tuple[int, int] | None = None
        self.caps: Caps | None = None

    def __repr__(self) -> str:
        return "Decision(%r, %r)" % (self.action, self.message[:60])


def _n(value: int) -> str:
    return "{:,}".format(value)


def is_index(path: str, settings: "config.Settings") -> bool:
    """Whether `path` is an index this guard keeps. Cheap: no file is opened."""
    return scope.is_index(path, settings.index_name, settings.index_paths)


def read_regular(path: str) -> "bytes | None":
    """A regular file's bytes, or None when it is missing, not a regular file (a FIFO would
    block, a device may never end), larger than READ_LIMIT, or unreadable. For adapters that
    must predict a file other than the one `evaluate` reads (patch sources, Hermes files)."""
    try:
        st = scope.stat(path)
        if st.st_mode & 0o170000 != 0o100000 or st.st_size > READ_LIMIT:
            return None
        with open(path, "rb") as f:
            return f.read()
    except (OSError, ValueError):
        return None


def _read_only_match(path: str, root: str, patterns: "list[str]") -> "str | None":
    import fnmatch  # only here: fnmatch pulls in re, too slow for every edit
    import os.path

    rel = os.path.relpath(scope.realpath(path), scope.realpath(root)).replace(scope.sep, "/")
    if rel.startswith("../"):
        return None
    for pattern in patterns:
        if fnmatch.fnmatchcase(rel, pattern.strip().lstrip("/")):
            return pattern
    return None


def _read_only_decision(req: "edits.Request", root: str, store: "config.StoreConfig") -> "Decision | None":
    pattern = _read_only_match(req.path, root, store.read_only)
    if pattern is None:
        return None
    return Decision(
        DENY,
        "engramory: %s is read-only: the store config %s lists it under \"readOnly\" (%r). "
        "Leave this file as it is; if it needs to change, ask the user to edit it themselves."
        % (req.path, store.path, pattern),
        req.path,
    )


def evaluate(req: "edits.Request", env: "Mapping[str, str] | None" = None) -> "Decision | None":
    """Decide on one file change. None means: say nothing, let the host proceed."""
    # The store config protects itself: decided in config.protect_config (install branch).
    if config.is_config_path(req.path):
        reason = config.protect_config(req.path)
        if reason is not None:
            return Decision(DENY, reason, req.path)
    settings = config.from_env(env)
    if not is_index(req.path, settings):
        root = scope.store_root_for(req.path, settings.index_paths)
        if root is None:
            return None
        store = config.load_store_config(root)
        return _read_only_decision(req, root, store) if store.read_only else None

    root = scope.dirname(scope.realpath(req.path))
    store = config.load_store_config(root)
    if store.read_only:
        ro = _read_only_decision(req, root, store)
        if ro is not None:
            return ro
    caps, notes = config.in_force(settings, store)

    before: bytes | None
    try:
        st = scope.stat(req.path)
        if st.st_mode & 0o170000 != 0o100000:  # not S_ISREG (no `stat` import on the hot path)
            # A FIFO would block the read and a device may never end: do not open them.
            return _unverified(req, caps, notes, "it is not a regular file")
        size = st.st_size
        if size > READ_LIMIT:
            return _unverified(req, caps, notes, "it is %s bytes, too large to read" % _n(size))
        with open(req.path, "rb") as f:
            before = f.read()
    except FileNotFoundError:
        before = None
    except OSError as exc:
        return _unverified(req, caps, notes, exc.strerror or exc.__class__.__name__)

    after = edits.predict(req, before)
    trace = (env if env is not None else scope.environ()).get(TRACE_ENV)
    if trace:
        _trace(trace, req, after)
    if after is None:
        return None  # the host refuses this edit itself and writes nothing
    return decide(req.path, req.tool, before or b"", after, caps, notes)


def _trace(target: str, req: "edits.Request", after: "bytes | None") -> None:
    from engramory import jsonlite

    line = jsonlite.dumps(
        {"path": req.path, "tool": req.tool, "refused": after is None, "after": after.hex() if after is not None else None}
    )
    try:
        with open(target, "a", encoding="utf-8") as f:
            f.write(line + "\n")
    except OSError:
        pass


def decide(
    path: str, tool: str, before: bytes, after: bytes, caps: "Caps", notes: "list[str] | None" = None
) -> "Decision | None":
    """The rule itself, on the bytes before and after."""
    b_lines, b_bytes = count_lines(before), len(before)
    a_lines, a_bytes = count_lines(after), len(after)
    grows_lines = a_lines > caps.hard_lines and a_lines > b_lines
    grows_bytes = a_bytes > caps.hard_bytes and a_bytes > b_bytes
    name = scope.basename(path) or path
    tail = (" " + " ".join(notes)) if notes else ""
    if grows_lines or grows_bytes:
        decision = Decision(DENY, _deny_message(path, tool, before, after, caps) + tail, path)
    elif a_lines > caps.hard_lines or a_bytes > caps.hard_bytes:
        decision = Decision(
            NUDGE,
            "engramory: %s is still over its hard cap after this edit: %s lines (cap %s) and "
            "%s bytes (cap %s); the host does not load what lies past the window. Keep "
            "compacting until it fits: pointer-ify long lines, merge duplicates, archive cold "
            "notes.%s" % (name, _n(a_lines), _n(caps.hard_lines), _n(a_bytes), _n(caps.hard_bytes), tail),
            path,
        )
    elif a_lines > caps.warn_lines or a_bytes > caps.warn_bytes:
        decision = Decision(
            NUDGE,
            "engramory: %s will be %s lines / %s bytes, past the warn cap of %s lines / %s bytes "
            "(hard cap %s / %s). The edit is allowed; tell the user the index is getting long "
            "and plan a compaction pass (pointer-ify, merge duplicates, archive cold notes).%s"
            % (
                name, _n(a_lines), _n(a_bytes), _n(caps.warn_lines), _n(caps.warn_bytes),
                _n(caps.hard_lines), _n(caps.hard_bytes), tail,
            ),
            path,
        )
    elif notes:
        decision = Decision(NUDGE, "engramory: configuration problem:" + tail, path)
    else:
        return None
    decision.before = (b_lines, b_bytes)
    decision.after = (a_lines, a_bytes)
    decision.caps = caps
    return decision


def _unverified(req: "edits.Request", caps: "Caps", notes: "list[str]", why: str) -> "Decision":
    tail = (" " + " ".join(notes)) if notes else ""
    d = Decision(
        NUDGE,
        "engramory: could not read the index %s (%s), so this edit's size was NOT checked "
        "against the caps (%s lines / %s bytes). Run `engramory check` on it once it is "
        "readable.%s" % (req.path, why, _n(caps.hard_lines), _n(caps.hard_bytes), tail),
        req.path,
    )
    d.caps = caps
    return d


def _deny_message(path: str, tool: str, before: bytes, after: bytes, caps: "Caps") -> str:
    from engramory.excerpt import quote
    from engramory.size import lines_outside_window

    b_lines, b_bytes = count_lines(before), len(before)
    a_lines, a_bytes = count_lines(after), len(after)
    parts = []
    if a_lines > caps.hard_lines and a_lines > b_lines:
        parts.append(
            "grow from %s to %s lines (hard cap %s: %s over)"
            % (_n(b_lines), _n(a_lines), _n(caps.hard_lines), _n(a_lines - caps.hard_lines))
        )
    else:
        parts.append("be %s lines (now %s, hard cap %s)" % (_n(a_lines), _n(b_lines), _n(caps.hard_lines)))
    if a_bytes > caps.hard_bytes and a_bytes > b_bytes:
        parts.append(
            "grow from %s to %s bytes (hard cap %s: %s over)"
            % (_n(b_bytes), _n(a_bytes), _n(caps.hard_bytes), _n(a_bytes - caps.hard_bytes))
        )
    else:
        parts.append("be %s bytes (now %s, hard cap %s)" % (_n(a_bytes), _n(b_bytes), _n(caps.hard_bytes)))
    outside: list[str] = []
    more = 0
    for number, line in lines_outside_window(after, caps):
        if len(outside) < SHOW_OUTSIDE:
            outside.append("line %d %s" % (number, quote(line)))
        else:
            more += 1
    lost = ""
    if outside:
        lost = (
            " The host loads only the first %s lines and %s bytes of the index, so these "
            "entries would never be recalled: %s%s."
            % (
                _n(caps.hard_lines), _n(caps.hard_bytes), "; ".join(outside),
                " and %s more" % _n(more) if more else "",
            )
        )
    return "engramory blocked this %s: %s would %s.%s %s" % (
        tool or "edit", path, " and ".join(parts), lost, COMPACT_STEPS,
    )
