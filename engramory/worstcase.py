"""The guard's rarer paths, imported only when one is taken: the worst-case judgement of an
edit whose result cannot be predicted (`judge_bound`: Claude Code 2.1.332 applies every Edit
that reaches PreToolUse) and of an index that cannot be read or is too large to read in
time. It asks engramory.judge for the caps and the messages, never engramory.guard (which
calls in here), so the modules do not cycle.
"""

from engramory import edits
from engramory.judge import COMPACT_STEPS, DENY, NUDGE, Decision, decide, judge, masked, prelude
from engramory.size import BYTES, STANDARD
from engramory.size import n as _n

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from engramory.size import Window


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
    large to read: its lines are then unknown and treated as already over the cap."""
    ro, caps, notes, win = prelude(path, env, window, tool)
    if caps is None:
        return ro
    if before is not None:
        b_lines, b_units = win.measure(before)
        crlf = b"\r\n" in before
    elif before_size is not None:
        b_lines = before_size[0] if before_size[0] is not None else caps.hard_lines + 1
        b_units, crlf = before_size[1], True
    else:
        b_lines, b_units, crlf = 0, 0, False
    add_lines = added.count("\n") + (0 if b_lines else 1)
    add_units = _worst_units(added, win.unit, crlf)
    a_lines, a_units = b_lines + add_lines, b_units + add_units
    grows_lines = add_lines > 0 and a_lines > caps.hard_lines
    grows_units = add_units > 0 and a_units > caps.hard_bytes
    tail = (" " + " ".join(notes)) if notes else ""
    shown, why, tail = masked(path), masked(why), masked(tail)  # what the messages show of the edit
    if grows_lines or grows_units:
        parts = []
        if grows_lines:
            parts.append("%s lines (hard cap %s)" % (_n(a_lines), _n(caps.hard_lines)))
        if grows_units:
            parts.append("%s %s (hard cap %s)" % (_n(a_units), win.unit, _n(caps.hard_bytes)))
        d = Decision(
            DENY,
            "engramory blocked this %s: %s, so its result was judged by the worst case, the "
            "new text added in full: %s would then be up to %s, over its hard cap. Retry with "
            "an old_string copied exactly from the file as it is now (no \\u escapes), or "
            "rewrite the whole index with Write, kept inside %s lines and %s %s. %s%s"
            % (
                tool or "edit", why or "engramory cannot predict what the host will make of it",
                shown, " and ".join(parts), _n(caps.hard_lines), _n(caps.hard_bytes), win.unit,
                COMPACT_STEPS, tail,
            ),
            path,
        )
    elif a_lines > caps.warn_lines or a_units > caps.warn_bytes or notes:
        d = Decision(
            NUDGE,
            "engramory: %s, so this %s was judged by its worst case (the new text added in "
            "full): %s would be at most %s lines / %s %s (warn cap %s / %s, hard cap %s / %s). "
            "Run `engramory check %s` after it.%s"
            % (
                why or "engramory cannot predict this edit exactly", tool or "edit", shown,
                _n(a_lines), _n(a_units), win.unit, _n(caps.warn_lines), _n(caps.warn_bytes),
                _n(caps.hard_lines), _n(caps.hard_bytes), shown, tail,
            ),
            path,
        )
    else:
        return None
    d.before, d.after, d.caps, d.unit = (b_lines, b_units), (a_lines, a_units), caps, win.unit
    return d


def _worst_units(added: str, unit: str, crlf: bool) -> int:
    """The most `added` can add to an index, in `unit`: as given, or with its non-ASCII
    characters written as \\uXXXX escapes (which the host does when it matched that way),
    its straight quotes written curly (3 bytes each), and its line breaks as CRLF."""
    from engramory.edits import escape_non_ascii  # lazy: only a call that may change an index needs this
    from engramory.size import text_units  # lazy: sizes only when a change is judged, not on the ignored path

    units = max(text_units(added, unit), text_units(escape_non_ascii(added), unit))
    if unit == BYTES:
        units += 2 * (added.count("'") + added.count('"'))
    if crlf:
        units += added.count("\n")
    return units


def _added_text(req: "edits.Request") -> str:
    if req.kind == edits.WRITE:
        return req.content or ""
    return "".join(new for _, new, _ in req.edits)


def judge_unpredicted(
    req: "edits.Request",
    before: "bytes | None",
    env: "Mapping[str, str]",
    window: "Window | None",
    why: str,
    before_size: "tuple[int | None, int] | None" = None,
) -> "Decision | None":
    if req.kind == edits.DELETE:
        return None
    if req.kind == edits.WRITE and req.content is not None and before_size is None and before is None:
        return judge(req.path, None, edits.encode(req.content), env, window, req.tool)
    if not why:
        why = (
            "its old_string does not match the file the way engramory models the host's "
            "matching, yet the host applies every Edit that reaches this hook"
        )
    return judge_bound(req.path, before, _added_text(req), env, window, req.tool, why, before_size)


def judge_unread(
    req: "edits.Request", env: "Mapping[str, str]", window: "Window | None", why: str, size_only: "int | None"
) -> "Decision | None":
    """An index that cannot be read (in time): a Write is judged from its content (its
    result is known); an Edit from the worst case. Its size on disk is the lower bound of
    what it holds now (bytes / 3 in UTF-16 units or characters)."""
    win = window or STANDARD
    if size_only is not None:
        why = "the index is %s bytes, too large to read within the host's hook timeout" % _n(size_only)
        units = size_only if win.unit == BYTES else size_only // 3
        before_size: tuple[int | None, int] = (None, units)
    else:
        why = "the index could not be read (%s)" % why
        before_size = (None, 0)
    if req.kind == edits.WRITE and req.content is not None:
        after = edits.encode(req.content)
        ro, caps, notes, win = prelude(req.path, env, window, req.tool)
        if caps is None:
            return ro
        # What it holds now is unknown: any size over a cap counts as growth.
        unknown = b"" if size_only is None else None
        d = decide(req.path, req.tool, unknown or b"", after, caps, notes, win)
        if d is not None:
            d.message += " (%s; judged from the Write's own content.)" % why
        return d
    if req.kind == edits.DELETE:
        return None
    return judge_unpredicted(req, None, env, window, why, before_size)
