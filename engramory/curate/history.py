"""How a journal entry is told: one line per file it changed (`change_text`), its JSON form
(`entry_dict`) and the flags `engramory log` shows beside it (`flags`), for `engramory log`
and `engramory undo` (engramory.commands.log, .undo).

Nothing printed shows a secret: the journal keeps a command's arguments masked and without
bodies, and what is printed is masked again (engramory.store.secrets.redact, the one masker),
for journals written before that.
"""

from __future__ import annotations

from engramory.curate import notes
from engramory.store import journal, journalfile
from engramory.store.secrets import redact

TYPE_CHECKING = False
if TYPE_CHECKING:
    pass


def change_text(c: journal.FileChange) -> str:
    if c.before is None:
        what = "created (%s bytes)" % notes.n(c.after_size or 0)
    elif c.after is None:
        what = "removed (was %s bytes)" % notes.n(c.before_size or 0)
    else:
        what = "changed %s -> %s bytes" % (notes.n(c.before_size or 0), notes.n(c.after_size or 0))
    kept = "" if c.kept or c.before is None else " [prior bytes not kept: %s]" % (c.why_not or "pruned")
    return redact("%s %s%s" % (c.path, what, kept))


def entry_dict(e: journal.Entry) -> dict[str, object]:
    d = e.as_dict()
    d.pop("format", None)
    d["argv"] = journalfile.slim_argv(e.argv)
    for c in d["changes"]:  # type: ignore[attr-defined]
        c["path"] = redact(c["path"])
    d["undone"] = e.undone
    d["undoable"] = e.undoable and not e.undone
    if e.rotated:
        d["rotated"] = True
    blocker = e.undo_blocker()
    if blocker is not None:
        d["why_no_undo"] = blocker
    return d


def flags(e: journal.Entry) -> list[str]:
    out = []
    if e.undone:
        out.append("undone")
    if e.undoes is not None:
        out.append("undoes %d" % e.undoes)
    if e.interrupted:
        out.append("interrupted")
    if e.command == journal.EXTERNAL:
        out.append("made outside engramory; `engramory undo %d` takes it back" % e.id
                     if e.undoable and not e.undone else "made outside engramory")
    if e.rotated:
        out.append("history: older than undo reaches")
    elif not e.undoable:
        out.append("cannot be undone: %s" % e.undo_blocker())
    return out


