"""memory_edit's create, str_replace and insert (delete and rename: engramory.mcp.moves),
over the curation library, each one journal transaction under the store lock:

- create of a note takes the whole note in `file_text` and holds it to `engramory new`'s rules
  (the name is the file name, type, description, Why:/How to apply:, absolute dates in a project
  note, no secret, the size cap, no near-duplicate of a note of its type), then adds its pointer
  under its type's heading: the index judged by the guard's caps and by what the host loads.
- str_replace and insert on a note keep it valid (engramory.mcp.notecheck: no new problem),
  keep its `name:` (rename changes it), bump `updated` of a protocol note, and keep its pointer
  in step with a new type or description (engramory.curate.update.keep_pointer).
- str_replace, insert and create of the index itself are judged by the guard's own rule
  (engramory.guard.judge): growth past the window is refused with its numbers, shrinking is
  always allowed; no secret may enter it, and a pointer line it gains is held to the index-line
  rules.
"""

from __future__ import annotations

from engramory import guard
from engramory.curate import common, indexline, notes
from engramory.curate import index as curate_index
from engramory.curate import update as curate_update
from engramory.curate.notes import Refusal
from engramory.mcp import indexcheck, moves, notecheck, paths, receipt
from engramory.mcp.result import Answer, ToolError
from engramory.store import journal
from engramory.store import reader as store
from engramory.store.pointers import note_links
from engramory.store.reader import TYPES
from engramory.store.secrets import quote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

    Change = Callable[[str], str]

COMMANDS = ("create", "str_replace", "insert", "delete", "rename")
BOM = "\ufeff"


def run(root: str, args: dict[str, Any]) -> Answer:
    command = args.get("command")
    if command not in COMMANDS:
        raise ToolError("command must be one of %s, not %s" % (", ".join(COMMANDS), _q(str(command))))
    irel = curate_index.index_rel(root)

    if command == "rename":
        return moves.rename(root, irel, args)
    target = paths.resolve(root, args.get("path"), irel)
    if command == "delete":
        return moves.delete(root, irel, target)
    if command == "create":
        return create(root, irel, target, text_arg(args, "file_text", command))
    if command == "str_replace":
        change = replacer(text_arg(args, "old_str", command), text_arg(args, "new_str", command, empty=True),
                          target.shown)
    else:
        change = inserter(args.get("insert_line"), text_arg(args, "insert_text", command), target.shown)
    if target.kind == paths.INDEX:
        return edit_index(root, irel, target, command, change)
    if target.kind == paths.NOTE:
        return edit_note(root, irel, target, command, change)
    raise ToolError(_not_editable(target))


def text_arg(args: dict[str, Any], key: str, command: str, empty: bool = False) -> str:
    value = args.get(key)
    if not isinstance(value, str):
        raise ToolError("memory_edit %s needs %s (a string)" % (command, key))
    if not value and not empty:
        raise ToolError("memory_edit %s: %s is empty" % (command, key))
    return value


def _not_editable(target: paths.Target) -> str:
    if target.kind == paths.ARCHIVED:
        return ("%s is archived: notes in archive/ are kept as they are; bring it back first with memory_edit "
                "rename %s -> %s" % (target.shown, target.shown, paths.shown(target.rel.split("/", 1)[1])))
    return ("%s is not a note: memory_edit changes notes (/memories/<name>.md) and the index (/memories/MEMORY.md)"
            % target.shown)


def _q(text: str, limit: int = 60) -> str:

    return quote(text, limit)


# -- what str_replace and insert do to a text --------------------------------------------------


def replacer(old: str, new: str, where: str) -> Change:
    def apply(text: str) -> str:
        count = text.count(old)
        if count == 1:
            return text.replace(old, new, 1)
        if count == 0:
            raise ToolError("No replacement was performed: old_str %s does not appear verbatim in %s; memory_view "
                            "it and copy the exact text, white space included" % (_q(old), where))
        lines: list[str] = []
        pos = text.find(old)
        while pos >= 0 and len(lines) < 10:
            lines.append(str(text.count("\n", 0, pos) + 1))
            pos = text.find(old, pos + 1)
        raise ToolError("No replacement was performed: old_str occurs %d times in %s (lines %s); include enough "
                        "of the text around it to make it unique" % (count, where, ", ".join(lines)))

    return apply


def inserter(line: Any, insert_text: str, where: str) -> Change:
    if not isinstance(line, int) or isinstance(line, bool):
        raise ToolError("memory_edit insert needs insert_line: the line after which to insert (0: at the top)")

    def apply(text: str) -> str:
        ends = text.endswith("\n") or not text
        body = text[:-1] if text.endswith("\n") else text
        lines = body.split("\n") if body else []
        if not 0 <= line <= len(lines):
            raise ToolError("insert_line %d is outside %s: it must be within [0, %d] (0 inserts at the top, %d "
                            "after the last line)" % (line, where, len(lines), len(lines)))
        crlf = "\r\n" in text
        new = insert_text.replace("\r\n", "\n")
        added = (new[:-1] if new.endswith("\n") else new).split("\n")
        if crlf:
            added = [a + "\r" for a in added]
        lines[line:line] = added
        return "\n".join(lines) + ("\n" if ends else "")

    return apply


def _decode(data: bytes, where: str) -> tuple[str, str]:
    """(the text without a BOM, the BOM or "")."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError("%s is not UTF-8 (byte %d): it cannot be edited as text; fix it by hand" % (where, exc.start)) \
            from None
    return (text[1:], BOM) if text.startswith(BOM) else (text, "")


# -- create ---------------------------------------------------------------------------------------


def create(root: str, irel: str, target: paths.Target, file_text: str) -> Answer:
    if target.kind == paths.INDEX:
        return create_index(root, irel, target, file_text)
    if target.kind != paths.NOTE:
        raise ToolError("a note is created directly in /memories as /memories/<name>.md (lowercase words and "
                        "hyphens), not as %s; archive/ holds only notes that memory_edit delete retired" % target.shown)
    slug = notes.check_slug(target.slug)
    rel = target.rel
    with receipt.transaction(root, "create", target.shown) as tx:
        before = curate_index.read(tx, root, irel)
        st = store.load(root)
        _name_free(st, tx, slug, rel)
        common.read_only(root, [rel, irel])
        note = notecheck.probe(rel, file_text)
        data = file_text.encode("utf-8")
        _check_new(st, note, len(data), target.shown)
        desc = " ".join((note.description or "").split())
        pline = indexline.pointer_line(slug, indexline.field("description", desc))
        indexline.check_line(pline, curate_index.window().unit, None, "description")
        index = curate_index.lines(irel, before)
        index.insert_pointer(str(note.type), pline)
        after = index.encode()
        warnings = curate_index.judge(root, irel, before, after, "create", added=[pline], retry=receipt.RETRY)
        warnings += [m for _, m in notecheck.Problems(note, len(data), st.config.note_max_bytes).warnings]
        warnings += common.description_warnings(desc, slug)
        tx.write(rel, data)
        tx.write(irel, after)
    facts = receipt.index_facts(root, irel, after, rel)
    lines = ["saved %s (%s bytes, sha256 %s)" % (target.shown, "{:,}".format(len(data)), journal.sha256(data))]
    return receipt.answer("create", lines, {"path": target.shown, "sha256": journal.sha256(data), "bytes": len(data)},
                          facts, tx.entry, warnings)


def _name_free(st: store.Store, tx: journal.Transaction, slug: str, rel: str) -> None:
    if tx.read(rel) is not None:
        raise ToolError("%s exists already: change it with memory_edit str_replace or insert (memory_view it "
                        "first)" % paths.shown(rel))
    low = slug.lower()
    for x in st.notes:
        if x.slug.lower() == low or (not x.archived and (x.name or "").lower() == low):
            if x.archived:
                raise ToolError("an archived note is named %s (%s): bring it back with memory_edit rename %s -> %s, "
                                "or pick another name" % (slug, paths.shown(x.rel), paths.shown(x.rel),
                                                          paths.shown(rel)))
            raise ToolError("a note named %s exists (%s): change it with str_replace, or pick another name"
                            % (slug, paths.shown(x.rel)))


def _check_new(st: store.Store, note: store.Note, size: int, where: str) -> None:
    found = notecheck.Problems(note, size, st.config.note_max_bytes)
    problems = [m for _, m in found.errors]
    fm = note.fm
    if fm is not None and fm.closed:
        name = fm.fields.get("name")
        if name != note.slug:
            problems.insert(0, "the frontmatter needs `name: %s` (the file name without .md)" % note.slug)
    if not problems and note.type in TYPES:
        dup = notes.near_duplicate(st, str(note.type), note.description or "", note.body)
        if dup is not None:
            problems.append("%s already says nearly the same (%s note: %s): change that note with str_replace "
                            "instead, or write a description that tells the two facts apart"
                            % (paths.shown(dup.rel), dup.type, _q(dup.description or "", 80)))
    if problems:
        raise ToolError(notecheck.refusal(problems, where) + ". A note is `---`, then name, description, type "
                        "(user, feedback, project or reference), created and updated (YYYY-MM-DD), then `---` and "
                        "the body.")


def create_index(root: str, irel: str, target: paths.Target, file_text: str) -> Answer:
    with receipt.transaction(root, "create", target.shown) as tx:
        if tx.read(irel) is not None:
            raise ToolError("%s exists already: change it with str_replace or insert (memory_view shows it as the "
                            "host loads it)" % target.shown)
        common.read_only(root, [irel])
        after = file_text.encode("utf-8")
        warnings = _judge_index(target, None, after, "create", "")
        indexline.refuse_secret("the index", file_text)
        _no_new_error(root, irel, None, after, "", file_text, target.shown)
        tx.write(irel, after)
    facts = receipt.index_facts(root, irel, after)
    return receipt.answer("create", ["created %s (%s bytes)" % (target.shown, "{:,}".format(len(after)))],
                          {"path": target.shown, "sha256": journal.sha256(after), "bytes": len(after)},
                          facts, tx.entry, warnings)


# -- str_replace and insert ----------------------------------------------------------------------


def _judge_index(target: paths.Target, before: bytes | None, after: bytes, command: str, old_text: str) -> list[str]:
    """The guard's own decision on this write of the index (caps in the host's unit, the
    read-only rules), then the index-line rules for the pointer lines it gains."""
    decision = guard.judge(target.full, before, after, None, curate_index.window(), "memory_edit " + command)
    if decision is not None and decision.action == guard.DENY:
        raise ToolError(decision.message.replace("engramory blocked this", "engramory refused this", 1)
                        + " Nothing was written: " + receipt.RETRY + ".")
    text = after.decode("utf-8", "replace")
    known = set(old_text.split("\n"))
    unit = curate_index.window().unit
    for line in text.split("\n"):
        line = line.rstrip("\r")
        if line not in known and note_links(line):
            indexline.check_line(line, unit, None, "line")
    return [decision.message] if decision is not None else []


def _no_new_error(root: str, irel: str, before: bytes | None, after: bytes, old_text: str, new_text: str,
                  where: str) -> None:
    """Refuse an index edit after which the doctor would find an error it did not find before
    (engramory.mcp.indexcheck), or the host would load fewer of the entries it loads now
    (curate_index.judge's layout rule: frontmatter or a comment swallowing lines)."""

    found = indexcheck.problems(store.load(root, visit=lambda note: None), old_text, new_text)
    if found:
        raise ToolError(notecheck.refusal(found, "the edit of " + where) + "; the index is as it was")
    old_lines, new_lines = old_text.split("\n"), new_text.split("\n")
    removed, added = _minus(old_lines, new_lines), _minus(new_lines, old_lines)
    curate_index.judge(root, irel, before, after, "edit", removed, added, receipt.RETRY)


def _minus(a: list[str], b: list[str]) -> list[str]:
    """The lines of `a` that `b` lacks, counted (a multiset difference), without line ends."""
    left: dict[str, int] = {}
    for line in b:
        left[line.rstrip("\r")] = left.get(line.rstrip("\r"), 0) + 1
    out = []
    for line in a:
        key = line.rstrip("\r")
        if left.get(key, 0) > 0:
            left[key] -= 1
        else:
            out.append(key)
    return out


def edit_index(root: str, irel: str, target: paths.Target, command: str, change: Change) -> Answer:
    with receipt.transaction(root, command, target.shown) as tx:
        before = curate_index.read(tx, root, irel)
        if before is None:
            raise ToolError("%s does not exist yet: memory_edit create of a note starts it" % target.shown)
        text, bom = _decode(before, target.shown)
        after_text = change(text)
        after = (bom + after_text).encode("utf-8")
        common.read_only(root, [irel])
        warnings = _judge_index(target, before, after, command, text)
        indexline.refuse_secret("the index", after_text, text)
        _no_new_error(root, irel, before, after, text, after_text, target.shown)
        tx.write(irel, after)
    facts = receipt.index_facts(root, irel, after)
    lines = ["edited %s (%s -> %s bytes)" % (target.shown, "{:,}".format(len(before)), "{:,}".format(len(after)))]
    lines += snippet(text, after_text)
    return receipt.answer(command, lines, {"path": target.shown, "sha256": journal.sha256(after), "bytes": len(after)},
                          facts, tx.entry, warnings)


def snippet(before: str, after: str, context: int = 2, most: int = 12) -> list[str]:
    """The lines around the first change, numbered as in the file now."""
    a, b = before.split("\n"), after.split("\n")
    first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    grown = max(len(b) - len(a), 0)
    lo, hi = max(first - context, 0), min(first + grown + context + 1, len(b), first + most)
    shown = ["%6d\t%s" % (i + 1, b[i].rstrip("\r")[:300]) for i in range(lo, hi)]
    return ["it now reads, lines %d-%d:" % (lo + 1, hi)] + shown if shown else []


def edit_note(root: str, irel: str, target: paths.Target, command: str, change: Change) -> Answer:
    rel = target.rel
    with receipt.transaction(root, command, target.shown) as tx:
        before_index = curate_index.read(tx, root, irel)
        raw = tx.read(rel)
        if raw is None:
            raise ToolError("%s does not exist; memory_view /memories lists the notes" % target.shown)
        st = store.load(root)
        text, bom = _decode(raw, target.shown)
        after_text = _dated(text, change(text))
        data = (bom + after_text).encode("utf-8")
        old, new = notecheck.probe(rel, text), notecheck.probe(rel, after_text)
        warnings = _check_edit(st, old, new, len(raw), len(data), target.shown)
        common.read_only(root, [rel, irel])
        after_index = _pointer_in_step(tx, st, root, irel, before_index, rel, old, new, warnings)
        tx.write(rel, data)
    facts = receipt.index_facts(root, irel, after_index, rel)
    lines = ["edited %s (%s -> %s bytes, sha256 %s)" % (target.shown, "{:,}".format(len(raw)), "{:,}".format(len(data)),
                                                       journal.sha256(data))]
    lines += snippet(text, after_text)
    return receipt.answer(command, lines, {"path": target.shown, "sha256": journal.sha256(data), "bytes": len(data)},
                          facts, tx.entry, warnings)


def _dated(before: str, after: str) -> str:
    """`after` with `updated:` set to today when the note is in the protocol's form and the
    edit changed it without touching that date."""
    if after == before:
        return after
    old, new = notecheck.probe("x.md", before), notecheck.probe("x.md", after)
    if new.form != store.PROTOCOL or new.fm is None or not new.fm.closed:
        return after
    if old.fm is None or old.fm.fields.get("updated") != new.fm.fields.get("updated"):
        return after
    created = new.fm.fields.get("created")
    today = notes.today()
    if isinstance(created, str) and created > today:
        return after
    try:
        return notes.set_fields(after, {"updated": today})
    except Refusal:
        return after


def _check_edit(st: store.Store, old: store.Note, new: store.Note, size_before: int, size_after: int,
                where: str) -> list[str]:
    cap = st.config.note_max_bytes
    before, after = notecheck.Problems(old, size_before, cap), notecheck.Problems(new, size_after, cap)
    problems = after.added_since(before)
    if _name_of(old) != _name_of(new):
        problems.insert(0, "the name: line changes only with memory_edit rename (the file name and the pointer "
                           "move with it)")
    desc_changed = " ".join((old.description or "").split()) != " ".join((new.description or "").split())
    if not problems and new.type in TYPES and (desc_changed or old.type != new.type):
        dup = notes.near_duplicate(st, str(new.type), new.description or "", new.body, skip=new.slug)
        if dup is not None:
            problems.append("%s already says nearly the same (%s): merge the two facts into one note instead"
                            % (paths.shown(dup.rel), _q(dup.description or "", 80)))
    if problems:
        raise ToolError(notecheck.refusal(problems, "the edit of " + where) + "; the note is as it was.")
    return [m for _, m in after.errors + after.warnings]


def _name_of(note: store.Note) -> object:
    return note.fm.fields.get("name") if note.fm is not None else None


def _pointer_in_step(tx: journal.Transaction, st: store.Store, root: str, irel: str, before: bytes | None, rel: str,
                     old: store.Note, new: store.Note, warnings: list[str]) -> bytes | None:
    """The index after the note's pointer follows a new type or description (None: no index)."""

    desc = " ".join((new.description or "").split())
    type_changed = old.type != new.type
    desc_changed = " ".join((old.description or "").split()) != desc
    known = st.by_rel.get(rel)
    if known is None or new.type not in TYPES or not (type_changed or desc_changed) or not desc:
        return before
    index = curate_index.lines(irel, before)
    entry = curate_update.keep_pointer(index, irel, known, str(new.type), desc, type_changed, desc_changed)
    after = index.encode()
    warnings += entry.warnings
    warnings += curate_index.judge(root, irel, before, after, "edit", entry.removed, entry.added, receipt.RETRY)
    tx.write(irel, after)
    return after
