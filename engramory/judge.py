"""The decision and its messages: deny, nudge, or nothing (engramory.guard reads and predicts,
then asks here; engramory.worstcase judges the changes whose result is only bounded).

Rule: deny exactly when a dimension (lines or size, counted as the host counts them: see
`size.Window`) ends over its hard cap AND is larger than it is on disk now. Any edit that
does not grow an over-cap dimension passes, so an index that is already too long can be
compacted step by step (210 -> 205 -> 198). Passing edits that leave the index over the hard
cap, or over the warn cap, get a nudge. The guard never approves anything: "allow" is always
the host's own decision.

- `judge(path, before, after, env=None, window=None, tool="edit", seen=None)`: the one
  decision on a change whose result is known (see guard's docstring for the arguments), with
  the stale-write rule (engramory.stale) on top when the host passes its session `seen`.
- `prelude(path, env, window, tool)`: whether `path` is an index, the store's read-only rules
  and the caps in force; `decide(...)`: the size rule on the bytes before and after.
- `masked(text)`: every secret in a message masked before it is shown.

This module never imports engramory.guard (guard imports it), so the two cannot cycle.
"""

from engramory import config, scope
from engramory.size import BYTES, STANDARD, Caps, Window
from engramory.size import n as _n

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from engramory.stale import Session

DENY = "deny"
NUDGE = "nudge"
SHOW_OUTSIDE = 3
# Test-only: when set, every prediction for a guarded index is appended to this file as one
# JSON line, so the end-to-end suites can compare it with the bytes the real host wrote
# (engramory.guard and the hosts that predict their own bytes write it).
TRACE_ENV = "ENGRAMORY_TRACE_FILE"
# engramory.stale's record folder under a store, `<store>/.engramory/seen` (its SEEN_DIR;
# tests/unit/kernel/test_stale.py holds the spellings equal): `session_for` looks for it with
# one stat, so a write to a store no session has a record in never imports engramory.stale
SEEN_DIR = (".engramory", "seen")

# What every secret engramory.store.secrets finds holds: its token formats' literal starts (the
# GitHub one spelt out), and its assignment keys, casefolded as it folds them. A text with none
# of them holds no secret, so a hook imports the masker (re and its patterns: more than a
# deny's own work) only for a text that may. tests/test_hook_masking.py holds them to the patterns.
SECRET_HINTS = ("-----BEGIN", "AKIA", "ASIA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox",
                "sk_live_", "rk_live_", "sk-", "AIza", "eyJ")
SECRET_KEYS = ("pas", "pwd", "tok", "sec", "key")


def might_hold_secret(text: str) -> bool:
    if any(h in text for h in SECRET_HINTS):
        return True
    folded = text.casefold()
    return any(k in folded for k in SECRET_KEYS)


def masked(text: str) -> str:
    """`text` with every secret value masked (engramory.store.secrets.redact, the one masker), for
    the index lines, paths and notes a hook's message shows."""
    if not might_hold_secret(text):
        return text
    from engramory.store.secrets import redact  # lazy: the masker (re) only for a text that may hold a secret

    return redact(text)


COMPACT_STEPS = (
    "Compact first, with the command that cannot lose a fact: `engramory compact ROOT` (ROOT: "
    "the folder of this index; from the skill folder, `python3 <skill folder>/tools/engramory.py "
    "compact ROOT`) plans to pointer-ify long lines, merge duplicate pointers and identical "
    "notes, drop dead pointers and archive cold notes, and writes nothing. Show the plan to the "
    "user, apply it with `engramory compact ROOT --apply -` (one journal entry; `engramory undo "
    "ID` reverses it), retry this edit, then settle by hand what the plan proposes "
    "(propose-merge). Exit 2 means the target needs a decision: ask the user which memories to "
    "retire. Edits that shrink the index are always allowed."
)


class Decision:
    """What the guard says about one change: `action` DENY or NUDGE, the `message` for the
    model, and (when sizes were judged) `before` / `after` as (lines, units), the `unit` they
    count in and the `caps` in force."""

    __slots__ = ("action", "message", "path", "before", "after", "caps", "unit")

    def __init__(self, action: str, message: str, path: str) -> None:
        self.action = action
        self.message = message
        self.path = path
        self.before: tuple[int, int] | None = None
        self.after: tuple[int, int] | None = None
        self.caps: Caps | None = None
        self.unit = BYTES

    def __repr__(self) -> str:
        return "Decision(%r, %r)" % (self.action, self.message[:60])



def is_index(path: str, settings: "config.Settings") -> bool:
    """Whether `path` is an index this guard keeps. Cheap: no file is opened."""
    return scope.is_index(path, settings.index_name, settings.index_paths)

def _caps_in_force(
    path: str, settings: "config.Settings", window: "Window", env: "Mapping[str, str]"
) -> "tuple[Caps, list[str], config.StoreConfig]":
    """The caps for the index `path` under `window`: the window's own limits (see
    Window.caps), then ENGRAMORY_WARN / _WARN_BYTES / _HARD / _HARD_BYTES (in the window's
    unit), then the store's `.engramory.json`, which wins."""
    root = scope.dirname(scope.realpath(path))
    store = config.load_store_config(root)
    base = window.caps()
    for var, attr in config.ENV_CAPS:
        raw = env.get(var)
        if raw is not None:
            value = config.positive_int(raw)
            if value is not None:
                setattr(base, attr, value)
    settings.caps = base
    caps, notes = config.in_force(settings, store, window)
    return caps, notes, store


def caps_for(path: str, env: "Mapping[str, str] | None" = None, window: "Window | None" = None) -> "tuple[Caps, list[str]]":
    """The caps in force for the index `path` under `window`, exactly as the hook computes
    them, and any notes (for check, doctor and the backstops)."""
    environ = scope.environ() if env is None else env
    caps, notes, _ = _caps_in_force(path, config.from_env(environ), window or STANDARD, environ)
    return caps, notes


def prelude(
    path: str, env: "Mapping[str, str] | None", window: "Window | None", tool: str
) -> "tuple[Decision | None, Caps | None, list[str], Window]":
    """(a read-only deny, caps, notes, window) for a change to `path`; caps None: not an
    index, nothing more to decide."""
    environ = scope.environ() if env is None else env
    win = window or STANDARD
    # The store config protects itself: decided in config.protect_config (install branch).
    if config.is_config_path(path):
        reason = config.protect_config(path)
        if reason is not None:
            return Decision(DENY, masked(reason), path), None, [], win
    settings = config.from_env(environ)
    if not is_index(path, settings):
        root = scope.store_root_for(path, settings.index_paths)
        if root is None:
            return None, None, [], win
        store = config.load_store_config(root)
        return (read_only_decision(path, root, store) if store.read_only else None), None, [], win
    caps, notes, store = _caps_in_force(path, settings, win, environ)
    if store.read_only:
        ro = read_only_decision(path, scope.dirname(scope.realpath(path)), store)
        if ro is not None:
            return ro, None, [], win
    return None, caps, notes, win


def judge(
    path: str,
    before: "bytes | None",
    after: bytes,
    env: "Mapping[str, str] | None" = None,
    window: "Window | None" = None,
    tool: str = "edit",
    seen: "Session | None" = None,
) -> "Decision | None":
    """The one decision on a change with a known result (see the module docstring). `seen`:
    the host's session, when its hooks record what the agent reads (engramory.stale): a
    write that would drop lines another writer added since the agent's last read is denied."""
    ro, caps, notes, win = prelude(path, env, window, tool)
    if caps is None:
        return ro
    decision = decide(path, tool, before or b"", after, caps, notes, win)
    if seen is None:
        return decision
    return stale_decision(path, tool, before, after, seen, decision)


def session_for(host: str, session_id: object, path: str) -> "Session | None":
    """The session (engramory.stale.Session) a host passes to `judge` as `seen` for a write of
    `path`, or None when this session keeps no record in `path`'s store: then the stale-write
    rule has nothing to judge or update (stale.lost_lines and stale.note_write would find no
    record either), and engramory.stale is not imported. The hosts ask here, not stale."""
    if not isinstance(session_id, str) or not session_id:
        return None
    folder = scope.join(scope.dirname(scope.realpath(path)), *SEEN_DIR)
    if not scope.isdir(folder):
        return None  # no session of this store keeps a record: not even a hash is computed
    if not scope.isfile(scope.join(folder, scope.record_key(host, session_id) + ".json")):
        return None  # others do, this one does not: nothing to judge, nothing to update
    from engramory import stale  # lazy: only a session with a record judges stale writes

    return stale.session(host, session_id)


def stale_decision(
    path: str, tool: str, before: "bytes | None", after: bytes, seen: "Session", decision: "Decision | None"
) -> "Decision | None":
    """`decision` (the size rule's), with the stale-write rule on top (engramory.stale): a
    deny when `after` drops lines another writer added since this session last read `path`
    (with the size rule's deny, when both fire, in the one message); otherwise, when the
    write goes ahead, the lines it brings in are recorded as seen."""
    from engramory import stale  # lazy: only a host that records reads passes `seen`

    lost = stale.lost_lines(path, seen, before, after)
    if lost is None:
        if decision is None or decision.action != DENY:
            stale.note_write(path, seen, before, after)
        return decision
    text = stale.message(path, tool, lost, masked)
    if decision is not None and decision.action == DENY:
        text += " Besides: " + decision.message
    out = Decision(DENY, text, path)
    out.caps = decision.caps if decision is not None else None  # before / after stay None: not a size deny
    return out


def read_only_match(path: str, root: str, patterns: "list[str]") -> "str | None":
    import fnmatch  # only here: fnmatch pulls in re, too slow for every edit
    import os.path  # only here: relpath, for a store that lists read-only files

    rel = os.path.relpath(scope.realpath(path), scope.realpath(root)).replace(scope.sep, "/")
    if rel.startswith("../"):
        return None
    for pattern in patterns:
        if fnmatch.fnmatchcase(rel, pattern.strip().lstrip("/")):
            return pattern
    return None


def read_only_decision(path: str, root: str, store: "config.StoreConfig") -> "Decision | None":
    pattern = read_only_match(path, root, store.read_only)
    if pattern is None:
        return None
    return Decision(
        DENY,
        masked("engramory: %s is read-only: the store config %s lists it under \"readOnly\" (%r). "
               "Leave this file as it is; if it needs to change, ask the user to edit it themselves."
               % (path, store.path, pattern)),
        path,
    )


def decide(
    path: str,
    tool: str,
    before: bytes,
    after: bytes,
    caps: "Caps",
    notes: "list[str] | None" = None,
    window: "Window | None" = None,
) -> "Decision | None":
    """The rule itself, on the bytes before and after, counted as `window` counts them."""
    win = window or STANDARD
    b_lines, b_units = win.measure(before)
    a_lines, a_units = win.measure(after)
    unit = win.unit
    grows_lines = a_lines > caps.hard_lines and a_lines > b_lines
    grows_units = a_units > caps.hard_bytes and a_units > b_units
    name = masked(scope.basename(path) or path)
    tail = masked(" " + " ".join(notes)) if notes else ""
    if grows_lines or grows_units:
        decision = Decision(DENY, _deny_message(masked(path), tool, (b_lines, b_units), (a_lines, a_units), after, caps, win) + tail, path)
    elif a_lines > caps.hard_lines or a_units > caps.hard_bytes:
        decision = Decision(
            NUDGE,
            "engramory: %s is still over its hard cap after this edit: %s lines (cap %s) and "
            "%s %s (cap %s); the host does not load what lies past its window. Keep "
            "compacting until it fits: pointer-ify long lines, merge duplicates, archive cold "
            "notes.%s" % (name, _n(a_lines), _n(caps.hard_lines), _n(a_units), unit, _n(caps.hard_bytes), tail),
            path,
        )
    elif a_lines > caps.warn_lines or a_units > caps.warn_bytes:
        decision = Decision(
            NUDGE,
            "engramory: %s will be %s lines / %s %s, past the warn cap of %s lines / %s %s "
            "(hard cap %s / %s). The edit is allowed; tell the user the index is getting long "
            "and plan a compaction pass (pointer-ify, merge duplicates, archive cold notes).%s"
            % (
                name, _n(a_lines), _n(a_units), unit, _n(caps.warn_lines), _n(caps.warn_bytes), unit,
                _n(caps.hard_lines), _n(caps.hard_bytes), tail,
            ),
            path,
        )
    elif notes:
        decision = Decision(NUDGE, "engramory: configuration problem:" + tail, path)
    else:
        return None
    decision.before = (b_lines, b_units)
    decision.after = (a_lines, a_units)
    decision.caps = caps
    decision.unit = unit
    return decision


def outside_text(data: bytes, window: "Window", show: int = SHOW_OUTSIDE) -> "tuple[list[str], int]":
    """The entries of `data` the host will not load through `window` (up to `show` of them,
    quoted, with their line numbers) and how many more there are."""
    from engramory.layout import quote  # lazy: layout only for a message that shows lines

    shown: list[str] = []
    more = 0
    for number, line in window.outside(data):
        if len(shown) < show:
            shown.append("line %d %s" % (number, quote(masked(line))))  # masked before the cut
        else:
            more += 1
    return shown, more


def _deny_message(
    path: str, tool: str, b: "tuple[int, int]", a: "tuple[int, int]", after: bytes, caps: "Caps", window: "Window"
) -> str:
    unit = window.unit
    parts = []
    if a[0] > caps.hard_lines and a[0] > b[0]:
        parts.append(
            "grow from %s to %s lines (hard cap %s: %s over)"
            % (_n(b[0]), _n(a[0]), _n(caps.hard_lines), _n(a[0] - caps.hard_lines))
        )
    else:
        parts.append("be %s lines (now %s, hard cap %s)" % (_n(a[0]), _n(b[0]), _n(caps.hard_lines)))
    if a[1] > caps.hard_bytes and a[1] > b[1]:
        parts.append(
            "grow from %s to %s %s (hard cap %s: %s over)"
            % (_n(b[1]), _n(a[1]), unit, _n(caps.hard_bytes), _n(a[1] - caps.hard_bytes))
        )
    else:
        parts.append("be %s %s (now %s, hard cap %s)" % (_n(a[1]), unit, _n(b[1]), _n(caps.hard_bytes)))
    enforced = window.within(caps)
    outside, more = outside_text(after, enforced)
    lost = ""
    if outside:
        lost = (
            " The host loads only %s of the index%s, so these entries would never be recalled: %s%s."
            % (
                window.describe(), "" if enforced is window else " and the caps in force allow less",
                "; ".join(outside), " and %s more" % _n(more) if more else "",
            )
        )
    return "engramory blocked this %s: %s would %s.%s %s" % (
        tool or "edit", path, " and ".join(parts), lost, COMPACT_STEPS,
    )
