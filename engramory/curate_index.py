"""The index side of `new`, `update`, `archive` and `restore`: which file is the store's index,
one bounded read of it, and the one judgement of a write to it.

- The index is the file the guard keeps for that store (`store.index_name_for`): an
  ENGRAMORY_INDEX_PATH entry in ROOT, else ENGRAMORY_INDEX_NAME, else MEMORY.md. The doctor,
  compact and search read the same file, so a command never grows one file while the others
  judge another.
- It is read once through the one bounded reader, at most INDEX_MAX bytes: past that the
  command refuses with the numbers before anything else is read or parsed (a 40 MB index used
  to cost 442 MB of memory just to refuse).
- What a command writes there is judged as an index, always, whatever the environment calls
  an index: the guard's own caps and rule (`guard.caps_for` + `guard.decide`, counted through
  Claude Code's window), then the host's layout: a write after which the host would load fewer
  of the entries it loads now (frontmatter or an HTML comment now swallowing them, or lines
  pushed past the window), or would not load the entry it adds, is refused with the lines.
"""

from __future__ import annotations

import os

from engramory import guard, layout, notes, scope, store
from engramory.excerpt import quote
from engramory.notes import Refusal, n

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from engramory import journal
    from engramory.size import Window

INDEX_MAX = store.INDEX_READ_MAX  # what the doctor and compact read of an index, too
SHOW = 3  # lost entries named in a refusal


def window() -> Window:
    """The load window the commands judge by: Claude Code's, whose auto-memory folder is the
    default store."""
    from engramory.hosts import claude

    return claude.window()


def index_rel(root: str) -> str:
    return store.index_name_for(root)


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
          removed: Sequence[str] = (), added: Sequence[str] = ()) -> list[str]:
    """Refuse the write of `after` over `before` when the guard would deny it or when it hides
    entries the host loads (`removed`: the lines the command meant to take out or replace;
    `added`: the lines it puts in, which must be loaded); otherwise the guard's warnings."""
    win = window()
    path = os.path.join(root, rel)
    caps, cap_notes = guard.caps_for(path, None, win)
    decision = guard.decide(path, "engramory " + command, before or b"", after, caps, cap_notes, win)
    if decision is not None and decision.action == guard.DENY:
        raise Refusal(decision.message.replace("engramory blocked this", "engramory refused this", 1)
                      + " Nothing was written; run `engramory " + command + "` again once the index has room.")
    _judge_layout(win, rel, before or b"", after, command, removed, added)
    return [decision.message] if decision is not None else []


def _judge_layout(win: Window, rel: str, before: bytes, after: bytes, command: str,
                  removed: Sequence[str], added: Sequence[str]) -> None:
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
                  "skips), then run `engramory %s` again" % (command, rel, what, where, command))
