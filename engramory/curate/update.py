"""`engramory update`'s work, planned in two parts under the store lock: the note's new text
(frontmatter fields set in place, body, Why:/How to apply: lines) and its index entry kept in
step (relabelled, moved under the heading of a new type, or added when missing). Only the
note's own entry is touched: a line's pointer is its first note link (pointers.note_links), so a
line that merely mentions the note is left as it is."""

from __future__ import annotations

import os
import re

from engramory import config
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

_LABEL_LINE = {
    "why": re.compile(r"[ \t]*(?:[-*+][ \t]+)?(?:#{1,6}[ \t]+)?(?:\*\*|__)?why(?:\*\*|__)?[ \t]*[:\uff1a]", re.I),
    "how": re.compile(r"[ \t]*(?:[-*+][ \t]+)?(?:#{1,6}[ \t]+)?(?:\*\*|__)?how[ \t]+to[ \t]+apply(?:\*\*|__)?[ \t]*[:\uff1a]",
                      re.I),
}


def set_label(body: str, key: str, value: str) -> str:
    label = "**Why:** " if key == "why" else "**How to apply:** "
    new = label + " ".join(value.split())
    lines = body.split("\n")
    for i, line in enumerate(lines):
        if _LABEL_LINE[key].match(line):
            lines[i] = new
            return "\n".join(lines)
    trimmed = body.rstrip("\n")
    return (trimmed + "\n\n" if trimmed.strip() else "") + new + "\n"


def _find(st: store.Store, rel: str, name: str, root: str) -> store.Note:
    note = st.by_rel.get(rel)
    if note is None:
        if (store.ARCHIVE + "/" + rel) in st.by_rel:
            raise Refusal("%s is archived; restore it first with `engramory restore %s`" % (rel, name))
        raise Refusal("no live note %s in %s; `engramory search` finds notes by their words" % (rel, root))
    return note


def _note_text(args: argparse.Namespace, note: store.Note, text: str, new_body: str | None,
               desc: str) -> tuple[str, str]:
    """(the note's text after the update, its body)."""
    fm = note.fm
    assert fm is not None
    changes: dict[str, str] = {}
    nested = None
    if args.description is not None:
        changes["description"] = notes.scalar("description", desc)
    protocol = note.form == store.PROTOCOL
    if args.type is not None:
        if protocol or "type" in fm.fields:
            changes["type"] = args.type
        if fm.nested("metadata", "type") is not None:
            nested = args.type
    if protocol:
        changes["updated"] = notes.today()
    updated = notes.set_fields(text, changes, nested)
    head_len = len(updated) - len(text[fm.body_start:])
    body = updated[head_len:]
    if new_body is not None:
        body = notes.compose_body(new_body, None, None) + "\n"
    if args.why is not None:
        body = set_label(body, "why", args.why)
    if args.how is not None:
        body = set_label(body, "how", args.how)
    if not body.strip():
        raise Refusal("the body would be empty")
    return updated[:head_len] + body, body


class Entry:
    """The note's entry in the index as the update leaves it: the line number, the lines it took
    out or replaced and those it put in (for the layout judgement), and its warnings."""

    def __init__(self) -> None:
        self.line_no = 0
        self.removed: list[str] = []
        self.added: list[str] = []
        self.warnings: list[str] = []


def _new_label(args: argparse.Namespace, desc: str, old_desc: str, line: str) -> str | None:
    """The label `line` gets: --title, or the new description when the old label was the old
    description; None to keep it."""
    if args.title is not None:
        return indexline.field("--title", args.title) or None
    if args.description is not None and indexline.label_of(line) == indexline.label(old_desc):
        return indexline.field("--description", desc)
    return None


def _rewrite(line: str, new_label: str | None, unit: str, field_name: str) -> str:
    if new_label is None:
        return line
    out = indexline.relabel(line, new_label)
    indexline.check_line(out, unit, line, field_name)
    return out


def _entry(args: argparse.Namespace, index: notes.IndexLines, irel: str, note: store.Note, type_: str,
           desc: str) -> Entry:
    rel, name = note.rel, note.slug
    unit = curate_index.window().unit
    field_name = "--title" if args.title is not None else "--description"
    old_desc = " ".join((note.description or "").split())
    found = index.pointer_lines(rel)
    out = Entry()
    if found and args.type is not None and args.type != note.type:
        out.removed = [index.lines[i] for i in found]
        keep = index.lines[found[0]].rstrip("\r\n")
        keep = _rewrite(keep, _new_label(args, desc, old_desc, keep), unit, field_name)
        index.remove_lines(found)
        out.line_no = index.insert_pointer(type_, keep)
        out.added = [keep]
    elif found:
        for i in found:
            line = index.lines[i]
            text = line.rstrip("\r\n")
            new = _rewrite(text, _new_label(args, desc, old_desc, text), unit, field_name)
            if new != text:
                index.lines[i] = new + line[len(text):]
                out.removed.append(text)
                out.added.append(new)
        out.line_no = found[0] + 1
    else:
        label = (indexline.field("--title", args.title) if args.title is not None else "") or \
            indexline.field("the description", desc)
        line = indexline.pointer_line(name, label)
        indexline.check_line(line, unit, None, field_name)
        out.line_no = index.insert_pointer(type_, line)
        out.added = [line]
        out.warnings.append("%s had no pointer in %s; one was added" % (rel, irel))
    return out


def keep_pointer(index: notes.IndexLines, irel: str, note: store.Note, type_: str, desc: str,
                 type_changed: bool, desc_changed: bool) -> Entry:
    """The note's index entry kept in step with a change made to the note's text by another
    writer than `update` (the MCP server's str_replace and insert): moved under the heading of
    a new type, relabelled when its label was the old description, added when missing; the
    same rule as `update` applies, without a --title."""
    import types

    changes = types.SimpleNamespace(type=type_ if type_changed else None, title=None,
                                    description=desc if desc_changed else None)
    return _entry(changes, index, irel, note, type_, desc)  # type: ignore[arg-type]


def run(args: argparse.Namespace, raw: list[str]) -> int:
    root, chosen = notes.resolve_root(args.root)
    name = notes.note_arg(args.name)
    rel = name + ".md"
    cap = config.load_store_config(root).note_max_bytes
    new_body = common.body_arg(args.body, cap) if args.body is not None else None
    if args.title is not None:
        indexline.field("--title", args.title)  # refused before anything is read
    irel = curate_index.index_rel(root)
    with journal.transaction(root, "update", raw, no_undo=args.no_undo) as tx:
        before = curate_index.read(tx, root, irel)
        st = store.load(root)
        note = _find(st, rel, name, root)
        common.read_only(root, [rel, irel])
        common.within_read(st, rel, store.READ_MAX, "split it into notes under the cap or trim it by hand first (`engramory doctor` "
                                    "shows it)")
        raw_note = tx.read(rel)
        if raw_note is None or note.text is None or note.fm is None:
            raise Refusal("%s cannot be read as UTF-8 text; fix it by hand" % rel)
        type_ = args.type or note.type
        if type_ not in TYPES:
            raise Refusal("%s has no valid type; give --type (%s)" % (rel, notes.types_text()))
        desc = " ".join(args.description.split()) if args.description is not None else (note.description or "")
        if not desc:
            raise Refusal("the description would be empty")
        text_after, body = _note_text(args, note, raw_note.decode("utf-8"), new_body, desc)
        common.check_content(type_, text_after, body, st.config.note_max_bytes, args.force)
        if args.description is not None and not args.force:
            dup = notes.near_duplicate(st, type_, desc, body, skip=name)
            if dup is not None:
                raise Refusal("%s already says nearly the same (%s): merge the two by hand, or pass --force"
                              % (dup.rel, notes._q(dup.description or "", 80)))
        index = curate_index.lines(irel, before)
        entry = _entry(args, index, irel, note, type_, desc)
        after = index.encode()
        entry.warnings += curate_index.judge(root, irel, before, after, "update", entry.removed, entry.added)
        if args.description is not None:
            entry.warnings += common.description_warnings(desc, note.slug)
        data = text_after.encode("utf-8")
        tx.write(rel, data)
        tx.write(irel, after)
        receipt = _Receipt(args.json, root, chosen, rel, data, irel, after, entry, type_)
        if args.dry_run:
            raise common.DryRun(lambda: receipt.emit(None, True))
    return receipt.emit(tx.entry, False)


class _Receipt:
    def __init__(self, as_json: bool, root: str, chosen: bool, rel: str, data: bytes, irel: str, after: bytes,
                 entry: Entry, type_: str) -> None:
        self.as_json, self.root, self.chosen, self.rel, self.data = as_json, root, chosen, rel, data
        self.irel, self.after, self.entry, self.type = irel, after, entry, type_

    def emit(self, entry: journal.Entry | None, dry: bool) -> int:

        root, rel, data, after = self.root, self.rel, self.data, self.after
        sha = journal.sha256(data) or ""
        warnings = self.entry.warnings
        obj: dict[str, object] = {
            "ok": True, "command": "update", "root": root, "default_root": self.chosen, "path": rel, "sha256": sha,
            "bytes": len(data), "index": {"path": self.irel, "line": self.entry.line_no, "heading": self.type,
                                          "lines": count_lines(after), "bytes": len(after),
                                          "sha256": journal.sha256(after)},
            "entry": entry.id if entry else None, "undoable": bool(entry and entry.undoable),
            "warnings": warnings, "dry_run": dry,
        }
        lines = ["%s %s (%s bytes, sha256 %s)" % ("would update" if dry else "updated", os.path.join(root, rel),
                                                  n(len(data)), sha),
                 "pointer: %s:%d under \"## %s\"" % (self.irel, self.entry.line_no, self.type)]
        if entry is None and not dry:
            lines = ["%s already says that; nothing changed" % rel]
        notes.emit(self.as_json, obj, common.receipt_text(root, entry, lines, warnings, dry))
        return EX_OK
