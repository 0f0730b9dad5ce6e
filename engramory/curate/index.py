"""The index side of `new`, `update`, `archive` and `restore`: which file is the store's index,
one bounded read of it, and the one judgement of a write to it.

- The index is the file the guard keeps for that store (`scope.index_name_for`): an
  ENGRAMORY_INDEX_PATH entry in ROOT, else ENGRAMORY_INDEX_NAME, else MEMORY.md. The doctor,
  compact and search read the same file, so a command never grows one file while the others
  judge another.
- It is read once through the one bounded reader, at most INDEX_MAX bytes: past that the
  command refuses with the numbers before anything else is read or parsed (a 40 MB index used
  to cost 442 MB of memory just to refuse).
- `unloaded` is the same view after an undo, which is never refused (it is the way back): the
  notes still in the store whose entry the host no longer loads are named in a warning.
- What a command writes there is judged as an index, always, whatever the environment calls
  an index: the guard's own caps and rule (`guard.caps_for` + `guard.decide`, counted through
  Claude Code's window), then the host's layout: a write after which the host would load fewer
  of the entries it loads now (frontmatter or an HTML comment now swallowing them, or lines
  pushed past the window), or would not load the entry it adds, is refused with the lines.
"""

from __future__ import annotations

import os

from engramory import guard, layout, scope
from engramory.curate import notes
from engramory.curate.notes import Refusal, n
from engramory.size import claude_code_window
from engramory.store import reader as store
from engramory.store.pointers import note_links
from engramory.store.secrets import quote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from engramory.size import Window
    from engramory.store import journal

INDEX_MAX = store.INDEX_READ_MAX  # what the doctor and compact read of an index, too
SHOW = 3  # lost entries named in a refusal


def window() -> Window:
    """The load window the commands judge by: Claude Code's, whose auto-memory folder is the
    default store."""

    return claude_code_window()


def index_rel(root: str) -> str:
    return scope.index_name_for(root)


def read(tx: journal.Transaction, root: str, rel: str) -> bytes | None:
    """The index's bytes (None: absent), read bounded first: a FIFO is refused by the
    transaction unread, and a file over INDEX_MAX is refused here with its size."""
    try:
        head, st = scope.read_bounded(os.path.join(root, rel), INDEX_MAX)
    except OSError:
        head, st = b"", None  # absent, or not a regular file: the transaction says which
    if st is not None and len(head) > INDEX_MAX:
        size = max(st.st_size, len(head))
        raise Refusal("%s is %s bytes, more than the %s bytes engramory reads of an index (the host loads at most "
                      "%s %s of it); nothing was written: cut it down by hand first (an edit that shrinks the "
                      "index is always allowed; `engramory doctor %s` shows where)"
                      % (rel, n(size), n(INDEX_MAX), n(window().size or 0), window().unit, root))
    return tx.read(rel)


def lines(rel: str, data: bytes | None) -> notes.IndexLines:
    try:
        return notes.IndexLines(data or b"")
    except UnicodeDecodeError as exc:
        raise Refusal("%s is not UTF-8 (byte %d); fix it first (`engramory doctor` shows it)" % (rel, exc.start)) from None


def judge(root: str, rel: str, before: bytes | None, after: bytes, command: str,
          removed: Sequence[str] = (), added: Sequence[str] = (), retry: str | None = None) -> list[str]:
    """Refuse the write of `after` over `before` when the guard would deny it or when it hides
    entries the host loads (`removed`: the lines the command meant to take out or replace;
    `added`: the lines it puts in, which must be loaded); otherwise the guard's warnings.
    `retry` is what a refusal says to do once there is room (default: run the command again;
    the MCP server, whose callers have no shell, says how to make room through its tools)."""
    win = window()
    path = os.path.join(root, rel)
    caps, cap_notes = guard.caps_for(path, None, win)
    decision = guard.decide(path, "engramory " + command, before or b"", after, caps, cap_notes, win)
    again = retry or "run `engramory " + command + "` again"
    if decision is not None and decision.action == guard.DENY:
        raise Refusal(decision.message.replace("engramory blocked this", "engramory refused this", 1)
                      + " Nothing was written; " + again + " once the index has room.")
    _judge_layout(win, rel, before or b"", after, command, removed, added, again)
    return [decision.message] if decision is not None else []


def _judge_layout(win: Window, rel: str, before: bytes, after: bytes, command: str,
                  removed: Sequence[str], added: Sequence[str], again: str = "") -> None:
    lost, missing = layout.lost_entries(win, before, after, list(removed), list(added))
    if not lost and not missing:
        return
    spans = layout.skipped_spans(win, after)
    where = "; ".join(layout.why_skipped(spans, first) for first, _, _ in spans) or "past the window"
    if lost:
        shown = ["line %d %s" % (number, quote(text, 60)) for number, text in lost[:SHOW]]
        more = " and %s more" % n(len(lost) - SHOW) if len(lost) > SHOW else ""
        what = "%s entr%s the host loads now would be hidden: %s%s" % (
            n(len(lost)), "y" if len(lost) == 1 else "ies", "; ".join(shown), more)
    else:
        what = "the line it adds would not be loaded: %s" % quote(missing[0], 60)
    raise Refusal("engramory refused this %s: in %s as it would be written, %s (as written, the lines would lie %s). "
                  "Nothing was written: fix the index by hand first (`engramory doctor` lists the lines the host "
                  "skips), then %s" % (command, rel, what, where, again or "run `engramory %s` again" % command))


def read_quietly(root: str, rel: str) -> bytes | None:
    """The index's bytes for a warning (None: absent, unreadable or past INDEX_MAX)."""
    try:
        data, _ = scope.read_bounded(os.path.join(root, rel), INDEX_MAX)
    except OSError:
        return None
    return data if len(data) <= INDEX_MAX else None


def _entries(data: bytes | None) -> dict[str, tuple[int, bool]]:
    """note -> (file line of its first entry, whether the host loads that line whole), by the
    host's layout; a loaded entry wins over an earlier one that is not."""
    out: dict[str, tuple[int, bool]] = {}
    for number, text, whole, loaded in layout.counted_lines(window(), data or b""):
        links = note_links(text) if not store.HEADING_RE.match(text) else []
        if links:
            target = os.path.normpath(links[0][1])
            if target not in out or (whole and loaded and not out[target][1]):
                out[target] = (number, whole and loaded)
    return out


def unloaded(root: str, rel: str, before: bytes | None, after: bytes | None,
             came_back: Sequence[str] = ()) -> list[str]:
    """A warning naming the notes still live in the store whose entry the host loaded in
    `before` and does not in `after` (taken out, hidden, or pushed past the window), and the
    notes in `came_back` (put back by the undo) that no loaded entry reaches, or []."""
    then, now = _entries(before), _entries(after)
    lost = []
    for target in sorted(set(came_back)):
        if now.get(target, (0, False))[1]:
            continue
        if os.path.isfile(os.path.join(root, target)):
            line = now.get(target)
            lost.append("%s (%s)" % (target, "it is back without an entry in the index" if line is None else
                                     "it is back, its entry line %d past the window or hidden" % line[0]))
    for target, (_line, was) in sorted(then.items()):
        if not was or now.get(target, (0, False))[1] or target.startswith(store.ARCHIVE + os.sep) \
                or target in came_back:
            continue
        if os.path.isfile(os.path.join(root, target)):
            line = now.get(target)
            lost.append("%s (%s)" % (target, "its entry is gone" if line is None else
                                     "its entry is now line %d, past the window or hidden" % line[0]))
    if not lost:
        return []
    return ["the host does not load an entry in %s for %d note%s in the store: %s; `engramory doctor %s` "
            "lists the notes the index does not reach, and `engramory compact %s` makes room when the index is past "
            "its window" % (rel, len(lost), "" if len(lost) == 1 else "s", "; ".join(lost[:SHOW]) +
                            (" and %s more" % n(len(lost) - SHOW) if len(lost) > SHOW else ""), root, root)]
