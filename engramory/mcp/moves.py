"""memory_edit's delete and rename.

- delete of a note ARCHIVES it (engramory.curate.move_notes, `engramory archive`'s own step):
  the note moves to archive/ unchanged, its pointer leaves the index, and the receipt names the
  journal entry that undoes it. The index itself cannot be deleted, nor can a note already in
  archive/ (it is what keeps undo and search whole).
- rename of a live note moves the file, sets its `name:` to the new name and points its index
  line at the new file, in one step; the [[links]] other notes hold to the old name are named
  in the receipt. Renaming archive/<name>.md to <name>.md restores it (`engramory restore`'s
  step: its pointer returns under its type's heading); <name>.md to archive/<name>.md archives.
"""

from __future__ import annotations

from engramory import scope
from engramory.curate import common, indexline, notes
from engramory.curate import index as curate_index
from engramory.curate import operations as curate
from engramory.mcp import notecheck, paths, receipt
from engramory.mcp.result import Answer, ToolError
from engramory.store import journal
from engramory.store import reader as store
from engramory.store.pointers import note_links

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def delete(root: str, irel: str, target: paths.Target) -> Answer:
    if target.kind == paths.INDEX:
        raise ToolError("the index %s cannot be deleted: it is what the host loads. Shrink it with str_replace, or "
                        "delete the notes you no longer need (each delete archives a note and drops its line)"
                        % target.shown)
    if target.kind == paths.ARCHIVED:
        raise ToolError("%s is archived already: archived notes stay on disk for undo and search. To remove it "
                        "for good, the user deletes the file by hand" % target.shown)
    if target.kind != paths.NOTE:
        raise ToolError("%s is not a note: memory_edit delete archives one note (/memories/<name>.md)" % target.shown)
    return _move(root, irel, target, restoring=False)


def _move(root: str, irel: str, note: paths.Target, restoring: bool) -> Answer:
    slug = note.slug
    with receipt.transaction(root, "restore" if restoring else "delete", note.shown) as tx:
        move = curate.move_notes(tx, root, False, irel, [slug], restoring, receipt.RETRY)
        after = tx.read(irel)
    item = move.moved[0]
    src, dst = paths.shown(str(item["from"])), paths.shown(str(item["to"]))
    if restoring:
        lines = ["restored %s -> %s; its pointer is back in the index" % (src, dst)]
    else:
        removed = item.get("removed_lines") or []
        lines = ["archived %s -> %s (kept on disk, searchable, out of the index); %s" % (src, dst, (
            "its pointer was removed from %s line %s" % (paths.shown(irel), ", ".join(str(x) for x in removed)))  # type: ignore[attr-defined]
            if removed else "it had no pointer in the index")]
    warnings = list(move.warnings)
    if move.links:
        warnings.append("%d [[link]]%s point%s at it: %s; %s" % (
            len(move.links), "" if len(move.links) == 1 else "s", "s" if len(move.links) == 1 else "",
            "; ".join(move.links[:5]), "they lead into archive/ now: point them elsewhere" if not restoring
            else "they lead to it again"))
    facts = receipt.index_facts(root, irel, after, str(item["to"]) if restoring else None)
    data = store_data(root, str(item["to"]))
    data.update({"path": dst, "from": src})
    return receipt.answer("rename" if restoring else "delete", lines, data, facts, tx.entry, warnings)


def store_data(root: str, rel: str) -> dict[str, Any]:
    """sha256 and size of a file as the write left it."""
    import os


    try:
        data, _ = scope.read_bounded(os.path.join(root, rel), 1 << 22)
    except OSError:
        return {}
    return {"sha256": journal.sha256(data), "bytes": len(data)}


def rename(root: str, irel: str, args: dict[str, Any]) -> Answer:
    old = paths.resolve(root, args.get("old_path"), irel)
    new = paths.resolve(root, args.get("new_path"), irel)
    if old.kind == paths.ARCHIVED and new.kind == paths.NOTE:
        if old.slug != new.slug:
            raise ToolError("an archived note comes back under its own name: rename %s -> %s (then rename it again "
                            "if it needs another)" % (old.shown, paths.shown(old.slug + ".md")))
        return _move(root, irel, new, restoring=True)
    if old.kind == paths.NOTE and new.kind == paths.ARCHIVED:
        if old.slug != new.slug:
            raise ToolError("archive keeps the note's name: rename %s -> %s, or use delete"
                            % (old.shown, paths.shown(store.ARCHIVE + "/" + old.slug + ".md")))
        return _move(root, irel, old, restoring=False)
    if old.kind != paths.NOTE or new.kind != paths.NOTE:
        raise ToolError("rename moves a note to another name in /memories (old_path and new_path both "
                        "/memories/<name>.md); the index cannot be renamed")
    if old.rel == new.rel:
        raise ToolError("old_path and new_path are the same")
    return _rename_live(root, irel, old, new)


def _rename_live(root: str, irel: str, old: paths.Target, new: paths.Target) -> Answer:
    slug = notes.check_slug(new.slug)
    with receipt.transaction(root, "rename", old.shown, new.shown) as tx:
        before = curate_index.read(tx, root, irel)
        raw = tx.read(old.rel)
        if raw is None:
            raise ToolError("%s does not exist; memory_view /memories lists the notes" % old.shown)
        st = store.load(root)
        low = slug.lower()
        clash = [x.rel for x in st.notes if x.rel != old.rel and (x.slug.lower() == low or (x.name or "").lower() == low)]
        if tx.read(new.rel) is not None or clash:
            raise ToolError("%s is taken (%s): pick another name" % (new.shown, paths.shown(clash[0]) if clash else new.shown))
        common.read_only(root, [old.rel, new.rel, irel])
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError("%s is not UTF-8: it cannot be renamed here; fix it by hand" % old.shown) from None
        renamed = notes.set_fields(text, {"name": slug})
        size = len(renamed.encode("utf-8"))
        cap = st.config.note_max_bytes
        problems = notecheck.Problems(notecheck.probe(new.rel, renamed), size, cap).added_since(
            notecheck.Problems(notecheck.probe(old.rel, text), len(raw), cap))
        if problems:
            raise ToolError(notecheck.refusal(problems, "the rename of " + old.shown))
        index = curate_index.lines(irel, before)
        removed, added = _repoint(index, old.rel, new.rel)
        after = index.encode()
        warnings = curate_index.judge(root, irel, before, after, "rename", removed, added, receipt.RETRY)
        tx.move(old.rel, new.rel)
        data = renamed.encode("utf-8")
        tx.write(new.rel, data)
        tx.write(irel, after)
        links = common.links_to(st, {old.slug.lower()}, {old.rel})
    if not removed:
        warnings.append("%s had no pointer in the index: add one with memory_edit insert into %s"
                        % (old.shown, paths.shown(irel)))
    if links:
        warnings.append("%d [[link]]%s still name %s: %s; change them with str_replace to [[%s]]" % (
            len(links), "" if len(links) == 1 else "s", old.slug, "; ".join(links[:5]), slug))
    facts = receipt.index_facts(root, irel, after, new.rel)
    return receipt.answer("rename", ["renamed %s -> %s (name: %s)" % (old.shown, new.shown, slug)],
                          {"path": new.shown, "from": old.shown, "sha256": journal.sha256(data), "bytes": len(data)},
                          facts, tx.entry, warnings)


def _repoint(index: notes.IndexLines, old_rel: str, new_rel: str) -> tuple[list[str], list[str]]:
    """Point the note's index lines at `new_rel`: (lines taken out, lines put in)."""
    removed, added = [], []
    for i in index.pointer_lines(old_rel):
        line = index.lines[i]
        bare = line.rstrip("\r\n")
        m, _ = note_links(bare)[0]
        changed = bare[:m.start(2)] + new_rel + bare[m.end(2):]
        indexline.check_line(changed, curate_index.window().unit, bare, "line")
        index.lines[i] = changed + line[len(bare):]
        removed.append(bare)
        added.append(changed)
    return removed, added
