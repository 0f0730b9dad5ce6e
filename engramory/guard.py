"""The host-neutral guard, one pipeline: read -> predict -> judge. The decision itself and its
messages live in engramory.judge; this module reads the file and predicts the change.

- `judge(path, before, after, env=None, window=None, tool="edit") -> Decision | None`
  (engramory.judge, also reachable here) is the
  one decision on a change whose result is known: `before` the file's bytes now (None: it
  does not exist), `after` the bytes it will hold (b"" for a delete). `window` is the load
  window of the host whose hook is asking (`hosts.<name>.window()`); None means
  `size.STANDARD`. It finds out whether `path` is an index (by realpath: a link to an index,
  an ENGRAMORY_INDEX_PATH entry, or the index of a store with `.engramory.json`), applies the
  store's read-only rules, takes the caps in force (the window's own limits, then the
  environment, then the store config) and decides. Adapters that predict their own bytes
  (Hermes, Cursor's ApplyPatch, any new host) call it directly.
- `judge_bound(path, before, added, env=None, window=None, tool="edit", why="")` is the
  decision on a change whose result is NOT known but bounded: at most `added` (the text the
  edit inserts) is added to the file. Used when the host will apply an edit its model cannot
  reproduce (Claude Code 2.1.332 applies every Edit that reaches PreToolUse) and when the
  index is too large to read in time. It denies when that worst case grows an over-cap
  dimension, and says why and how to retry.
- `evaluate(req, env=None, window=None)` reads the file (bounded: regular files only, at most
  READ_LIMIT bytes), predicts with `edits.predict`, and calls one of the two.
"""

from engramory import config, edits, scope
from engramory.judge import (
    COMPACT_STEPS,
    DENY,
    NUDGE,
    SECRET_HINTS,
    SECRET_KEYS,
    SHOW_OUTSIDE,
    TRACE_ENV,
    Decision,
    caps_for,
    decide,
    is_index,
    judge,
    masked,
    might_hold_secret,
    outside_text,
    stale_decision,
)
from engramory.scope import READ_LIMIT, read_regular

# what the guard answers to: its own, and the decision's names that hosts, notices and tests
# ask the guard for (engramory.judge holds them)
__all__ = [
    "READ_LIMIT",
    "TRACE_ENV",
    "evaluate",
    "judge_bound",
    "read_regular",
    "trace_prediction",
    "COMPACT_STEPS",
    "DENY",
    "NUDGE",
    "SECRET_HINTS",
    "SECRET_KEYS",
    "SHOW_OUTSIDE",
    "Decision",
    "caps_for",
    "decide",
    "is_index",
    "judge",
    "masked",
    "might_hold_secret",
    "outside_text",
    "stale_decision",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from engramory.size import Window
    from engramory.stale import Session



def judge_bound(
    path: str,
    before: "bytes | None",
    added: str,
    env: "Mapping[str, str] | None" = None,
    window: "Window | None" = None,
    tool: str = "edit",
    why: str = "",
    before_size: "tuple[int | None, int] | None" = None,
) -> "Decision | None":
    """The decision on a change that adds at most `added` to the file (see the module
    docstring). `before_size` (lines or None, units) replaces `before` when the file is too
    large to read: its lines are then unknown and treated as already over the cap.
    (engramory.worstcase: imported only on this rarer path.)"""
    from engramory import worstcase  # lazy: the worst-case paths are rare; a plain deny never loads them

    return worstcase.judge_bound(path, before, added, env, window, tool, why, before_size)


def evaluate(
    req: "edits.Request", env: "Mapping[str, str] | None" = None, window: "Window | None" = None,
    seen: "Session | None" = None,
) -> "Decision | None":
    """Read, predict, judge one file change. None means: say nothing, let the host proceed."""
    environ = scope.environ() if env is None else env
    settings = config.from_env(environ)
    if not is_index(req.path, settings):
        return judge(req.path, None, b"", environ, window, req.tool)  # read-only rules only
    before: bytes | None
    size_only: int | None = None
    why = ""
    try:
        st = scope.stat(req.path)
        if st.st_mode & 0o170000 != 0o100000:  # not S_ISREG (no `stat` import on the hot path)
            # A FIFO would block the read and a device may never end: do not open them.
            why = "it is not a regular file"
            before = None
        elif st.st_size > READ_LIMIT:
            size_only = st.st_size
            before = None
        else:
            before = scope.read_bounded(req.path, READ_LIMIT)[0]
    except FileNotFoundError:
        before = None
    except OSError as exc:
        why = exc.strerror or exc.__class__.__name__
        before = None

    if why or size_only is not None:
        from engramory import worstcase  # lazy: the worst-case paths are rare; a plain deny never loads them

        return worstcase.judge_unread(req, environ, window, why, size_only)
    after = edits.predict(req, before)
    trace_prediction(req, after, environ)
    if after is None:
        from engramory import worstcase  # lazy: the worst-case paths are rare; a plain deny never loads them

        return worstcase.judge_unpredicted(req, before, environ, window, "")
    return judge(req.path, before, after, environ, window, req.tool, seen)


def trace_prediction(req: "edits.Request", after: "bytes | None", env: "Mapping[str, str]") -> None:
    """Test-only: append the prediction for a guarded index to $ENGRAMORY_TRACE_FILE (adapters
    that predict their own bytes call this too, so the e2e suites can compare)."""
    target = env.get(TRACE_ENV)
    if target:
        _trace(target, req, after)


def _trace(target: str, req: "edits.Request", after: "bytes | None") -> None:
    from engramory import jsonlite  # lazy: test-only tracing

    line = jsonlite.dumps(
        {"path": req.path, "tool": req.tool, "refused": after is None, "after": after.hex() if after is not None else None}
    )
    try:
        with open(target, "a", encoding="utf-8") as f:
            f.write(line + "\n")
    except OSError:
        pass
