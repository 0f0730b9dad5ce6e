"""`new`, `archive` and `restore`, the mechanical part of curating a store, done exactly. Each
plans every byte first, checks it (slug rules, types, Why:/How to apply:, absolute dates,
secrets, the per-note size cap, the index caps through the guard's own rule, near-duplicates),
then writes the note and the index in ONE journal transaction under the store lock: all of it
lands, or none of it does, and `engramory undo` takes it back.

`new(args, raw)` and `move(args, raw, names, root, restoring)` are the work of the commands
of the same names (engramory.commands.new, .archive, .restore), which parse the arguments;
`update`'s work is in curate.update, the index side (which file, one bounded read, the
judgement of a write by the guard's caps and by what the host loads) in curate.index, every
text that goes on an index line in curate.indexline, and what they share in curate.common.
"""

from __future__ import annotations

import os

from engramory import config, guard
from engramory.curate import common, indexline, notes
from engramory.curate import index as curate_index
from engramory.curate.notes import Refusal, n
from engramory.exitcodes import EX_OK
from engramory.size import count_lines
from engramory.store import journal
from engramory.store import reader as store
from engramory.store.reader import TYPES

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


# -- new ------------------------------------------------------------------------------------------------


def _new_fields(args: argparse.Namespace) -> tuple[str, str, str | None]:
    """(description, the pointer's label, its hook), each checked as index-line text."""
    desc = " ".join(args.description.split())
    notes.scalar("description", desc)  # refuses what frontmatter cannot hold
    if not desc:
        raise Refusal("the description is empty: write one line a future session would search for")
    title = indexline.field("--title", args.title) if args.title is not None else ""
    label = title or indexline.field("--description", desc)  # an empty --title: the description, as before
    hook = indexline.field("--hook", args.hook) if args.hook else None
    return desc, label, hook


def _new_name(args: argparse.Namespace, desc: str) -> tuple[str, bool]:
    """(the note's name, whether it was made from the description)."""
    if args.name is not None:
        return notes.check_slug(args.name), False
    name = notes.suggest_slug(desc)
    if not name:
        raise Refusal("the description has no ASCII letters or digits to make a file name from: give "
                      "--name, e.g. --name deploy-checklist")
    return name, True


def _free_name(st: store.Store, name: str, derived: bool) -> str:
    taken = {x.slug.lower() for x in st.notes} | {(x.name or "").lower() for x in st.live}
    if derived:
        base, k = name, 2
        while name in taken:
            name, k = "%s-%d" % (base, k), k + 1
    elif name in taken:
        where = next((x.rel for x in st.notes if x.slug.lower() == name or (x.name or "").lower() == name),
                     name + ".md")
        hint = ("restore it with `engramory restore %s`, or pick another --name" % name
                if where.startswith("archive/") else
                "change it with `engramory update %s`, or pick another --name" % name)
        raise Refusal("a note named %s already exists (%s): %s" % (name, where, hint))
    return name


def new(args: argparse.Namespace, raw: list[str]) -> int:
    root, chosen = notes.resolve_root(args.root, create=not args.dry_run)
    cap = config.load_store_config(root).note_max_bytes
    desc, label, hook = _new_fields(args)
    body = notes.compose_body(common.body_arg(args.body, cap) or "", args.why, args.how)
    if not body.strip():
        raise Refusal("the note has no body: give --body, pipe it on stdin, or give --why/--how")
    name, derived = _new_name(args, desc)
    date = notes.today()
    irel = curate_index.index_rel(root)
    with journal.transaction(root, "new", raw, no_undo=args.no_undo) as tx:
        before = curate_index.read(tx, root, irel)
        st = store.load(root)
        name = _free_name(st, name, derived)
        rel = name + ".md"
        common.read_only(root, [rel, irel])
        text = notes.render_note(name, desc, args.type, body, date, date)
        common.check_content(args.type, text, body, st.config.note_max_bytes, args.force)
        dup = notes.near_duplicate(st, args.type, desc, body)
        if dup is not None and not args.force:
            raise Refusal("%s already says nearly the same (%s note: %s): update it with `engramory update %s "
                          "--description ... --body ...` instead, or pass --force if they are two facts"
                          % (dup.rel, dup.type, notes._q(dup.description or "", 80), dup.slug))
        index = curate_index.lines(irel, before)
        pline = indexline.pointer_line(name, label, hook)
        indexline.check_line(pline, curate_index.window().unit, None, "--title" if args.title else "--description")
        line_no = index.insert_pointer(args.type, pline)
        after = index.encode()
        warnings = curate_index.judge(root, irel, before, after, "new", added=[pline])
        warnings += common.description_warnings(desc, name)
        if tx.read(rel) is not None:
            raise Refusal("%s exists but is not a note the store could read; move it aside" % rel)
        data = text.encode("utf-8")
        tx.write(rel, data)
        tx.write(irel, after)
        receipt = _NewReceipt(args.json, root, chosen, rel, data, irel, after, line_no, args.type, warnings)
        if args.dry_run:
            raise common.DryRun(lambda: receipt.emit(None, True))
    return receipt.emit(tx.entry, False)


class _NewReceipt:
    def __init__(self, as_json: bool, root: str, chosen: bool, rel: str, data: bytes, irel: str, index: bytes,
                 line_no: int, type_: str, warnings: list[str]) -> None:
        self.as_json, self.root, self.chosen, self.rel, self.data = as_json, root, chosen, rel, data
        self.irel, self.index, self.line_no, self.type, self.warnings = irel, index, line_no, type_, warnings

    def emit(self, entry: journal.Entry | None, dry: bool) -> int:

        # The index's size as the guard counts it (the window curate_index judges by), so the
        # receipt and `engramory check` say the same numbers.
        root, rel, data, index = self.root, self.rel, self.data, self.index
        win = curate_index.window()
        w_lines, w_units = win.measure(index)
        caps, _ = guard.caps_for(os.path.join(root, self.irel), None, win)
        sha = journal.sha256(data) or ""
        obj: dict[str, object] = {
            "ok": True, "command": "new", "root": root, "default_root": self.chosen, "path": rel,
            "file": os.path.join(root, rel), "sha256": sha, "bytes": len(data),
            "index": {"path": self.irel, "line": self.line_no, "heading": self.type, "lines": count_lines(index),
                      "bytes": len(index), "sha256": journal.sha256(index),
                      "window": {"lines": w_lines, "units": w_units, "unit": win.unit,
                                 "hard_lines": caps.hard_lines, "hard_units": caps.hard_bytes}},
            "entry": entry.id if entry else None, "undoable": bool(entry and entry.undoable),
            "warnings": self.warnings, "dry_run": dry,
        }
        lines = ["%s %s (%s bytes, sha256 %s)" % ("would save" if dry else "saved", os.path.join(root, rel),
                                                  n(len(data)), sha),
                 "pointer: %s:%d under \"## %s\" (index now %s lines, %s %s; hard cap %s / %s)" % (
                     self.irel, self.line_no, self.type, n(w_lines), n(w_units), win.unit, n(caps.hard_lines),
                     n(caps.hard_bytes))]
        notes.emit(self.as_json, obj, common.receipt_text(root, entry, lines, self.warnings, dry))
        return EX_OK



# -- archive / restore ----------------------------------------------------------------------------------


class _Move:
    """One archive or restore: the notes it moves and what the index and receipt say of them."""

    def __init__(self, restoring: bool, root: str, chosen: bool, irel: str, index: notes.IndexLines) -> None:
        self.restoring, self.root, self.chosen, self.irel, self.index = restoring, root, chosen, irel, index
        self.cmd = "restore" if restoring else "archive"
        self.moved: list[dict[str, object]] = []
        self.warnings: list[str] = []
        self.links: list[str] = []
        self.removed: list[str] = []  # index lines taken out
        self.added: list[str] = []  # index lines put in

    def check(self, tx: journal.Transaction, name: str) -> tuple[str, str]:
        live, arch = name + ".md", store.ARCHIVE + "/" + name + ".md"
        src, dst = (arch, live) if self.restoring else (live, arch)
        if tx.read(src) is None:
            other = tx.read(dst) is not None
            raise Refusal("%s: %s" % (src, (
                "already live" if self.restoring else "already archived") if other else
                "no such note; `engramory search` finds notes by their words"))
        if tx.read(dst) is not None:
            raise Refusal("%s exists already; archive or rename one of the two by hand" % dst)
        common.read_only(self.root, [src, dst, self.irel])
        return src, dst

    def restore(self, st: store.Store, name: str, src: str, item: dict[str, object]) -> None:
        note = st.by_rel.get(src)
        t = note.type if note is not None else None
        if note is None or t not in TYPES:
            raise Refusal("%s has no valid type, so it has no heading in the index; fix its frontmatter first" % src)
        clash = [x.rel for x in st.live if x.slug.lower() == name.lower() or (x.name or "").lower() == name]
        if clash:
            raise Refusal("%s already uses the name %s; rename one of them first" % (clash[0], name))
        if note.text is not None:
            common.check_secret(note.text, src)
        what = "description of %s" % src
        line = indexline.pointer_line(name, indexline.field(what, note.description or "") or name)
        indexline.check_line(line, curate_index.window().unit, None, "description (in %s)" % src)
        item["index_line"] = self.index.insert_pointer(t, line)
        self.added.append(line)

    def archive(self, src: str, item: dict[str, object]) -> None:
        found = self.index.pointer_lines(src)
        item["removed_lines"] = [i + 1 for i in found]
        self.removed += [self.index.lines[i] for i in found]
        self.index.remove_lines(found)

    def finish(self, after: bytes) -> None:
        """Line numbers as they end up, and the index lines that still mention an archived note."""
        final = notes.IndexLines(after)
        for item in self.moved:
            if self.restoring:  # line numbers shift as later pointers go in: report the final ones
                at = final.pointer_lines(str(item["to"]))
                item["index_line"] = at[0] + 1 if at else 0
                continue
            for i in final.reference_lines(str(item["from"])):
                self.warnings.append(
                    "%s:%d still links to %s in a line that is another note's entry; that link now leads nowhere: "
                    "point it at %s or drop it" % (self.irel, i + 1, item["from"], item["to"]))

    def receipt(self, as_json: bool, entry: journal.Entry | None, dry: bool) -> int:
        moved, links, irel = self.moved, self.links, self.irel
        obj: dict[str, object] = {"ok": True, "command": self.cmd, "root": self.root, "default_root": self.chosen,
                                  "moved": moved, "links": links, "entry": entry.id if entry else None,
                                  "undoable": bool(entry and entry.undoable),
                                  "warnings": self.warnings, "dry_run": dry}
        lines: list[str] = []
        for m in moved:
            if self.restoring:
                lines.append("%s %s -> %s; pointer at %s:%s" % ("would restore" if dry else "restored", m["from"],
                                                                 m["to"], irel, m["index_line"]))
            else:
                removed = [str(x) for x in m["removed_lines"]]  # type: ignore[attr-defined]
                lines.append("%s %s -> %s; %s" % ("would archive" if dry else "archived", m["from"], m["to"], (
                    "pointer removed from %s line %s" % (irel, ", ".join(removed)))
                    if removed else "it had no pointer in %s" % irel))
        if links:
            lines.append("%d link%s point%s at %s note%s:" % (
                len(links), "" if len(links) == 1 else "s", "s" if len(links) == 1 else "",
                "the restored" if self.restoring else "the archived", "" if len(moved) == 1 else "s"))
            lines.extend("  " + x for x in links)
            if not self.restoring:
                lines.append("  they now lead into archive/: point them elsewhere, or drop them")
        notes.emit(as_json, obj, common.receipt_text(self.root, entry, lines, self.warnings, dry))
        return EX_OK


BIG_MOVE_HINT = ("split it into notes under the cap or trim it by hand first (`engramory doctor` shows it), or move "
                 "it with `mv` yourself: `engramory review` then journals the move")


def move(args: argparse.Namespace, raw: list[str], names_in: list[str], root_arg: str | None,
          restoring: bool) -> int:
    root, chosen = notes.resolve_root(args.root or root_arg)
    names = list(dict.fromkeys(notes.note_arg(x) for x in names_in))
    irel = curate_index.index_rel(root)
    cmd = "restore" if restoring else "archive"
    with journal.transaction(root, cmd, raw, no_undo=args.no_undo) as tx:
        move = move_notes(tx, root, chosen, irel, names, restoring)
        if args.dry_run:
            raise common.DryRun(lambda: move.receipt(args.json, None, True))
    return move.receipt(args.json, tx.entry, False)


def move_notes(tx: journal.Transaction, root: str, chosen: bool, irel: str, names: list[str], restoring: bool,
               retry: str | None = None) -> _Move:
    """Stage, inside `tx`, the archive (or restore) of the notes `names`: each note moved,
    its pointer dropped (or added under its type's heading), the index judged by the guard's
    rule; the _Move says what it did. Shared by `archive`/`restore` and the MCP server's
    delete; `retry` is curate_index.judge's."""
    cmd = "restore" if restoring else "archive"
    before = curate_index.read(tx, root, irel)
    st = store.load(root)
    move = _Move(restoring, root, chosen, irel, curate_index.lines(irel, before))
    for name in names:
        common.within_read(st, (store.ARCHIVE + "/" if restoring else "") + name + ".md",
                           store.READ_MAX if restoring else common.MOVE_MAX, BIG_MOVE_HINT)
        src, dst = move.check(tx, name)
        item: dict[str, object] = {"name": name, "from": src, "to": dst}
        if restoring:
            move.restore(st, name, src, item)
        else:
            move.archive(src, item)
        tx.move(src, dst)
        move.moved.append(item)
    after = move.index.encode()
    move.warnings += curate_index.judge(root, irel, before, after, cmd, move.removed, move.added, retry)
    move.finish(after)
    tx.write(irel, after)
    move.links = common.links_to(st, {x.lower() for x in names}, {str(m["from"]) for m in move.moved})
    return move

