"""`engramory new | update | archive | restore`: the mechanical part of curating a store, done
exactly. Each command plans every byte first, checks it (slug rules, types, Why:/How to apply:,
absolute dates, secrets, the per-note size cap, the index caps through the guard's own rule,
near-duplicates), then writes the note and the index in ONE journal transaction under the
store lock: all of it lands, or none of it does, and `engramory undo` takes it back.
"""

from __future__ import annotations

import fnmatch
import os
import re
import sys

from engramory import config, guard, journal, notes, store
from engramory.cliutil import EX_NOINPUT
from engramory.notes import EX_BUSY, EX_OK, NEEDS_LABELS, Refusal, n, pointer_line
from engramory.store import TYPES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

INDEX = "MEMORY.md"


class _DryRun(Exception):
    """Raised inside the transaction once every check passed, so that nothing is written; it
    carries the receipt of what would have been written (`engramory <cmd> --dry-run [--json]`)."""

    def __init__(self, receipt: Callable[[], int]) -> None:
        super().__init__("dry run")
        self.receipt = receipt


def _dry_run_or(work: Callable[[], int]) -> Callable[[], int]:
    def run() -> int:
        try:
            return work()
        except _DryRun as dry:
            return dry.receipt()

    return run


# -- checks every writing command shares ----------------------------------------------------------

def _read_only(root: str, rels: Sequence[str]) -> None:
    cfg = config.load_store_config(root)
    for rel in rels:
        for pattern in cfg.read_only:
            if fnmatch.fnmatchcase(rel, pattern.strip().lstrip("/")):
                raise Refusal("%s is read-only: the store config %s lists it under \"readOnly\" (%r); ask the "
                              "user to change it themselves" % (rel, cfg.path, pattern))


def _index_lines(data: bytes | None) -> notes.IndexLines:
    try:
        return notes.IndexLines(data or b"")
    except UnicodeDecodeError as exc:
        raise Refusal("%s is not UTF-8 (byte %d); fix it first (`engramory doctor` shows it)" % (INDEX, exc.start)) from None


def _judge_index(root: str, before: bytes | None, after: bytes, command: str) -> list[str]:
    """The guard's own judgement (guard.judge: caps in force, read-only rules, counted through
    the load window of Claude Code, whose auto-memory folder is the default store) on the
    index change: refused when it denies; its warning (warn zone, still over) returned."""
    from engramory.hosts import claude

    path = os.path.join(root, INDEX)
    decision = guard.judge(path, before, after, window=claude.window(), tool="engramory " + command)
    if decision is None:
        return []
    if decision.action == guard.DENY:
        raise Refusal(decision.message.replace("engramory blocked this", "engramory refused this", 1)
                      + " Nothing was written; run `engramory " + command + "` again once the index has room.")
    return [decision.message]


def _labels_ok(body: str) -> bool:
    from engramory.doctor import has_label

    low = body.lower()
    return has_label(low, "why") and has_label(low, "how to apply")


def _check_content(type_: str, text: str, body: str, cap: int, force: bool, rel: str) -> None:
    from engramory import doctor
    from engramory.store import Note

    size = len(text.encode("utf-8"))
    if size > cap:
        raise Refusal("the note would be %s bytes, over the %s-byte cap per note (noteMaxBytes): one note holds "
                      "one fact; split it or trim the body by %s bytes" % (n(size), n(cap), n(size - cap)))
    if type_ in NEEDS_LABELS and not _labels_ok(body):
        raise Refusal("a %s note needs a Why: line (the reason) and a How to apply: line (what to do next time): "
                      "give --why and --how" % type_)
    probe = Note("", rel, False)
    probe.text = text
    secrets = [f for f in doctor.scan_note(probe) if f.code == "secret"]
    if secrets:
        raise Refusal("the note holds what looks like a secret at line %d: %s. Memory is plain text loaded into "
                      "sessions; record only where the secret lives (an environment variable name, a password "
                      "manager entry)" % (secrets[0].line, secrets[0].message))
    if type_ == "project" and not force:
        spans = doctor.relative_dates(body.lower())
        if spans:
            a, b = spans[0]
            raise Refusal("a project note must use absolute dates: %s is relative and wrong tomorrow; write the "
                          "calendar date (today is %s), or pass --force" % (notes._q(body[a:b]), notes.today()))


def _links_to(st: store.Store, slugs: set[str], skip: set[str]) -> list[str]:
    """`path:line: [[target]]` for every live note's link to one of `slugs`."""
    out = []
    for note in st.live:
        if note.rel in skip:
            continue
        for target, line in note.link_list():
            key = target.strip().lower()
            key = key[:-3] if key.endswith(".md") else key
            if key in slugs:
                out.append("%s:%d: [[%s]]" % (note.rel, line, target.strip()))
    return out


def _body_arg(args_body: str | None, cap: int) -> str | None:
    try:
        piped = args_body is None and sys.stdin is not None and not sys.stdin.isatty()
    except (OSError, ValueError):
        piped = False
    if args_body == "-" or piped:
        try:
            text = notes.read_stdin(cap)
        except (OSError, ValueError, AttributeError):
            if args_body == "-":
                raise Refusal("stdin cannot be read; give the body with --body") from None
            return None
        return text if (args_body == "-" or text.strip()) else None
    return args_body


def _run(as_json: bool, work: object) -> int:
    """Run a command body, turning refusals and store conflicts into messages and exit codes."""
    try:
        return int(work())  # type: ignore[operator]
    except Refusal as exc:
        return notes.fail(as_json, str(exc), exc.code)
    except (journal.JournalConflict, journal.LockTimeout) as exc:
        return notes.fail(as_json, str(exc), EX_BUSY)
    except journal.StoreDamaged as exc:
        return notes.fail(as_json, str(exc), EX_NOINPUT)
    except journal.JournalError as exc:
        return notes.fail(as_json, str(exc), notes.EX_REFUSED)
    except UnicodeError:
        return notes.fail(as_json, "an argument is not valid UTF-8 text (undecodable bytes); nothing was written: "
                          "pass the text as UTF-8", notes.EX_REFUSED)
    except OSError as exc:
        return notes.fail(as_json, "%s: %s; nothing was written" % (exc.filename or "the store", exc.strerror or exc),
                          notes.EX_REFUSED)


NO_UNDO_HELP = ("write even when its undo cannot be kept (a prior version over the blob store's caps); the "
                "receipt and `engramory log` then say it cannot be undone")


def _receipt_text(root: str, entry: journal.Entry | None, lines: list[str], warnings: list[str],
                  dry: bool) -> str:
    out = list(lines)
    if dry:
        out.append("dry run: nothing was written")
    elif entry is not None and entry.undoable:
        out.append("journal entry %d: `engramory undo %d` takes it back" % (entry.id, entry.id))
    elif entry is not None:
        out.append("journal entry %d: undo is NOT possible for it (%s)" % (entry.id, entry.undo_blocker()))
    out.extend("warning: " + w for w in warnings)
    return "\n".join(out)


# -- new ------------------------------------------------------------------------------------------------

def new_main(argv: Sequence[str] | None = None) -> int:
    p = notes.parser("new", (
        "Save one durable fact as a note and add its pointer under the type's heading in MEMORY.md, "
        "in one atomic, journaled step. Refuses (changing nothing) a path-like or malformed name, a "
        "feedback/project note without --why and --how, a relative date in a project note, a secret, "
        "a note over its size cap, an index that would pass its hard cap, and a near-duplicate of an "
        "existing note of the same type (update that one instead, or --force). Prints a receipt: the "
        "note's path and sha256, and the pointer's line in MEMORY.md."))
    p.add_argument("root", nargs="?", metavar="ROOT",
                   help="the store folder holding MEMORY.md (default: this project's Claude Code auto-memory folder)")
    p.add_argument("--type", required=True, choices=TYPES, help="user, feedback, project or reference")
    p.add_argument("--description", required=True,
                   help="one line: the recall key a future session reads in the index")
    p.add_argument("--name", help="file name without .md: lowercase letters, digits, single hyphens "
                                  "(default: made from the description)")
    p.add_argument("--body", help="the note's text (default: read from stdin when it is not a terminal; '-' forces stdin)")
    p.add_argument("--why", help="the reason (required for feedback and project notes)")
    p.add_argument("--how", help="how to apply it next time (required for feedback and project notes)")
    p.add_argument("--title", help="the pointer's label in MEMORY.md (default: the description)")
    p.add_argument("--hook", help="a few words after the pointer's link")
    p.add_argument("--force", action="store_true", help="save even when a near-duplicate exists or a project note has a relative date")
    p.add_argument("--no-undo", action="store_true", help=NO_UNDO_HELP)
    p.add_argument("--dry-run", action="store_true", help="check and show what would be written; write nothing")
    p.add_argument("--json", action="store_true", help="print the receipt as JSON")
    raw = list(sys.argv[1:] if argv is None else argv)
    args = p.parse_args(raw)

    def work() -> int:
        root, chosen = notes.resolve_root(args.root, create=not args.dry_run)
        cap = config.load_store_config(root).note_max_bytes
        desc = " ".join(args.description.split())
        notes.scalar("description", desc)  # refuses what frontmatter cannot hold
        if not desc:
            raise Refusal("the description is empty: write one line a future session would search for")
        body = _body_arg(args.body, cap) or ""
        body = notes.compose_body(body, args.why, args.how)
        if not body.strip():
            raise Refusal("the note has no body: give --body, pipe it on stdin, or give --why/--how")
        if args.name is not None:
            name = notes.check_slug(args.name)
            derived = False
        else:
            name = notes.suggest_slug(desc)
            if not name:
                raise Refusal("the description has no ASCII letters or digits to make a file name from: give "
                              "--name, e.g. --name deploy-checklist")
            derived = True
        date = notes.today()
        warnings: list[str] = []
        with journal.transaction(root, "new", raw, no_undo=args.no_undo) as tx:
            st = store.load(root)
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
            rel = name + ".md"
            _read_only(root, [rel, INDEX])
            text = notes.render_note(name, desc, args.type, body, date, date)
            _check_content(args.type, text, body, st.config.note_max_bytes, args.force, rel)
            dup = notes.near_duplicate(st, args.type, desc, body)
            if dup is not None and not args.force:
                raise Refusal("%s already says nearly the same (%s note: %s): update it with `engramory update %s "
                              "--description ... --body ...` instead, or pass --force if they are two facts"
                              % (dup.rel, dup.type, notes._q(dup.description or "", 80), dup.slug))
            before = tx.read(INDEX)
            index = _index_lines(before)
            pline = pointer_line(name, args.title or desc, args.hook)
            if len(pline) > notes.INDEX_LINE_MAX:
                raise Refusal("the pointer line would be %d characters (the doctor's limit is %d): give a shorter "
                              "--title" % (len(pline), notes.INDEX_LINE_MAX))
            line_no = index.insert_pointer(args.type, pline)
            after = index.encode()
            warnings += _judge_index(root, before, after, "new")
            if tx.read(rel) is not None:
                raise Refusal("%s exists but is not a note the store could read; move it aside" % rel)
            data = text.encode("utf-8")
            tx.write(rel, data)
            tx.write(INDEX, after)
            if args.dry_run:
                raise _DryRun(lambda: _new_receipt(args.json, root, chosen, rel, data, after, line_no, args.type, None,
                                                   warnings, True))
        return _new_receipt(args.json, root, chosen, rel, data, after, line_no, args.type, tx.entry, warnings, False)

    return _run(args.json, _dry_run_or(work))


def _new_receipt(as_json: bool, root: str, chosen: bool, rel: str, data: bytes, index: bytes, line_no: int,
                 type_: str, entry: journal.Entry | None, warnings: list[str], dry: bool) -> int:
    from engramory.hosts import claude
    from engramory.size import count_lines

    # The index's size as the guard counts it (the window _judge_index judges by), so the
    # receipt and `engramory check` say the same numbers.
    win = claude.window()
    w_lines, w_units = win.measure(index)
    caps, _ = guard.caps_for(os.path.join(root, INDEX), None, win)
    sha = journal.sha256(data) or ""
    obj: dict[str, object] = {
        "ok": True, "command": "new", "root": root, "default_root": chosen, "path": rel,
        "file": os.path.join(root, rel), "sha256": sha, "bytes": len(data),
        "index": {"path": INDEX, "line": line_no, "heading": type_, "lines": count_lines(index), "bytes": len(index),
                  "sha256": journal.sha256(index),
                  "window": {"lines": w_lines, "units": w_units, "unit": win.unit,
                             "hard_lines": caps.hard_lines, "hard_units": caps.hard_bytes}},
        "entry": entry.id if entry else None, "undoable": bool(entry and entry.undoable), "warnings": warnings,
        "dry_run": dry,
    }
    lines = ["%s %s (%s bytes, sha256 %s)" % ("would save" if dry else "saved", os.path.join(root, rel), n(len(data)), sha),
             "pointer: %s:%d under \"## %s\" (index now %s lines, %s %s; hard cap %s / %s)" % (
                 INDEX, line_no, type_, n(w_lines), n(w_units), win.unit, n(caps.hard_lines), n(caps.hard_bytes))]
    notes.emit(as_json, obj, _receipt_text(root, entry, lines, warnings, dry))
    return EX_OK


# -- update ----------------------------------------------------------------------------------------------

_LABEL_LINE = {
    "why": re.compile(r"[ \t]*(?:[-*+][ \t]+)?(?:#{1,6}[ \t]+)?(?:\*\*|__)?why(?:\*\*|__)?[ \t]*[:\uff1a]", re.I),
    "how": re.compile(r"[ \t]*(?:[-*+][ \t]+)?(?:#{1,6}[ \t]+)?(?:\*\*|__)?how[ \t]+to[ \t]+apply(?:\*\*|__)?[ \t]*[:\uff1a]",
                      re.I),
}


def _set_label(body: str, key: str, value: str) -> str:
    label = "**Why:** " if key == "why" else "**How to apply:** "
    new = label + " ".join(value.split())
    lines = body.split("\n")
    for i, line in enumerate(lines):
        if _LABEL_LINE[key].match(line):
            lines[i] = new
            return "\n".join(lines)
    trimmed = body.rstrip("\n")
    return (trimmed + "\n\n" if trimmed.strip() else "") + new + "\n"


def update_main(argv: Sequence[str] | None = None) -> int:
    p = notes.parser("update", (
        "Change an existing live note: its description, type, body, Why:/How to apply: lines or its "
        "pointer's label. Bumps `updated` to today and keeps the pointer in MEMORY.md in step (label, "
        "heading of the type). Same checks and receipt as `new`; one journaled step."))
    p.add_argument("name", metavar="NAME", help="the note's name (its file name, with or without .md)")
    p.add_argument("root", nargs="?", metavar="ROOT", help="the store folder (default: the project's auto-memory folder)")
    p.add_argument("--description", help="a new one-line description")
    p.add_argument("--type", choices=TYPES, help="a new type: the pointer moves under that heading")
    p.add_argument("--body", help="a new body, replacing the old one ('-' reads it from stdin)")
    p.add_argument("--why", help="set the Why: line (replaced in place, or added)")
    p.add_argument("--how", help="set the How to apply: line (replaced in place, or added)")
    p.add_argument("--title", help="a new label for the pointer")
    p.add_argument("--force", action="store_true", help="save even when the new description nearly duplicates another note")
    p.add_argument("--no-undo", action="store_true", help=NO_UNDO_HELP)
    p.add_argument("--dry-run", action="store_true", help="check and show what would be written; write nothing")
    p.add_argument("--json", action="store_true", help="print the receipt as JSON")
    raw = list(sys.argv[1:] if argv is None else argv)
    args = p.parse_args(raw)
    if not any(v is not None for v in (args.description, args.type, args.body, args.why, args.how, args.title)):
        p.error("nothing to change: give --description, --type, --body, --why, --how or --title")

    def work() -> int:
        def receipt(entry: journal.Entry | None, dry: bool) -> int:
            from engramory.size import count_lines

            sha = journal.sha256(data) or ""
            obj: dict[str, object] = {
                "ok": True, "command": "update", "root": root, "default_root": chosen, "path": rel, "sha256": sha,
                "bytes": len(data), "index": {"path": INDEX, "line": line_no, "heading": type_, "lines": count_lines(after),
                                              "bytes": len(after), "sha256": journal.sha256(after)},
                "entry": entry.id if entry else None, "undoable": bool(entry and entry.undoable),
                "warnings": warnings, "dry_run": dry,
            }
            lines = ["%s %s (%s bytes, sha256 %s)" % ("would update" if dry else "updated", os.path.join(root, rel),
                                                      n(len(data)), sha),
                     "pointer: %s:%d under \"## %s\"" % (INDEX, line_no, type_)]
            if entry is None and not dry:
                lines = ["%s already says that; nothing changed" % rel]
            notes.emit(args.json, obj, _receipt_text(root, entry, lines, warnings, dry))
            return EX_OK

        root, chosen = notes.resolve_root(args.root)
        name = notes.note_arg(args.name)
        rel = name + ".md"
        cap = config.load_store_config(root).note_max_bytes
        new_body = _body_arg(args.body, cap) if args.body is not None else None
        warnings: list[str] = []
        with journal.transaction(root, "update", raw, no_undo=args.no_undo) as tx:
            st = store.load(root)
            note = st.by_rel.get(rel)
            if note is None:
                if (store.ARCHIVE + "/" + rel) in st.by_rel:
                    raise Refusal("%s is archived; restore it first with `engramory restore %s`" % (rel, name))
                raise Refusal("no live note %s in %s; `engramory search` finds notes by their words" % (rel, root))
            _read_only(root, [rel, INDEX])
            raw_note = tx.read(rel)
            if raw_note is None or note.text is None or note.fm is None:
                raise Refusal("%s cannot be read as UTF-8 text; fix it by hand" % rel)
            text = raw_note.decode("utf-8")
            fm = note.fm
            old_type = note.type
            type_ = args.type or old_type
            if type_ not in TYPES:
                raise Refusal("%s has no valid type; give --type (%s)" % (rel, notes.types_text()))
            desc = " ".join(args.description.split()) if args.description is not None else (note.description or "")
            if not desc:
                raise Refusal("the description would be empty")
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
                body = _set_label(body, "why", args.why)
            if args.how is not None:
                body = _set_label(body, "how", args.how)
            text_after = updated[:head_len] + body
            if not body.strip():
                raise Refusal("the body would be empty")
            _check_content(type_, text_after, body, st.config.note_max_bytes, args.force, rel)
            if args.description is not None and not args.force:
                dup = notes.near_duplicate(st, type_, desc, body, skip=name)
                if dup is not None:
                    raise Refusal("%s already says nearly the same (%s): merge the two by hand, or pass --force"
                                  % (dup.rel, notes._q(dup.description or "", 80)))
            before = tx.read(INDEX)
            index = _index_lines(before)
            found = index.pointer_lines(rel)
            old_desc = " ".join((note.description or "").split())
            label = args.title
            line_no = 0
            if found and (args.type is not None and args.type != old_type):
                keep = index.lines[found[0]].rstrip("\r\n")
                index.remove_lines(found)
                if label is not None or (args.description is not None and _label(keep) == old_desc):
                    keep = _relabel(keep, label or desc)
                line_no = index.insert_pointer(type_, keep)
            elif found:
                for i in found:
                    line = index.lines[i]
                    if label is not None or (args.description is not None and _label(line) == old_desc):
                        end = line[len(line.rstrip("\r\n")):]
                        index.lines[i] = _relabel(line.rstrip("\r\n"), label or desc) + end
                line_no = found[0] + 1
            else:
                line_no = index.insert_pointer(type_, pointer_line(name, label or desc))
                warnings.append("%s had no pointer in %s; one was added" % (rel, INDEX))
            after = index.encode()
            warnings += _judge_index(root, before, after, "update")
            data = text_after.encode("utf-8")
            tx.write(rel, data)
            tx.write(INDEX, after)
            if args.dry_run:
                raise _DryRun(lambda: receipt(None, True))
        return receipt(tx.entry, False)

    return _run(args.json, _dry_run_or(work))


_LABEL_RE = re.compile(r"\[([^\]\n]*)\]\(")


def _label(line: str) -> str:
    m = _LABEL_RE.search(line)
    return " ".join(m.group(1).split()) if m else ""


def _relabel(line: str, label: str) -> str:
    label = " ".join(label.split()).replace("[", "(").replace("]", ")")
    return _LABEL_RE.sub(lambda m: "[" + label.replace("\\", "\\\\") + "](", line, count=1)


# -- archive / restore ----------------------------------------------------------------------------------

def _move_main(argv: Sequence[str] | None, restoring: bool) -> int:
    cmd = "restore" if restoring else "archive"
    p = notes.parser(cmd, (
        "Move notes back from archive/ and add their pointers under their type's heading in MEMORY.md "
        "(refused when the index would pass its hard cap)." if restoring else
        "Move notes into archive/ (kept on disk, searchable, out of the index) and drop their pointers "
        "from MEMORY.md.") + " The notes' bytes are not changed. [[links]] in other notes that point at "
        "them are reported. One journaled step for all the names.")
    p.add_argument("names", nargs="+", metavar="NAME",
                   help="note names (file names, with or without .md); a last argument containing '/' is ROOT")
    p.add_argument("--root", help="the store folder (default: the project's auto-memory folder)")
    p.add_argument("--no-undo", action="store_true", help=NO_UNDO_HELP)
    p.add_argument("--dry-run", action="store_true", help="show what would move; write nothing")
    p.add_argument("--json", action="store_true", help="print the receipt as JSON")
    raw = list(sys.argv[1:] if argv is None else argv)
    args = p.parse_args(raw)
    names_in, root_arg = notes.split_names(args.names)
    if not names_in:
        p.error("name at least one note")

    def work() -> int:
        def receipt(entry: journal.Entry | None, dry: bool) -> int:
            obj: dict[str, object] = {"ok": True, "command": cmd, "root": root, "default_root": chosen, "moved": moved,
                                      "links": links, "entry": entry.id if entry else None,
                                      "undoable": bool(entry and entry.undoable), "warnings": warnings,
                                      "dry_run": dry}
            lines: list[str] = []
            for m in moved:
                if restoring:
                    lines.append("%s %s -> %s; pointer at %s:%s" % ("would restore" if dry else "restored", m["from"], m["to"], INDEX, m["index_line"]))
                else:
                    removed = [str(x) for x in m["removed_lines"]]  # type: ignore[attr-defined]
                    lines.append("%s %s -> %s; %s" % ("would archive" if dry else "archived", m["from"], m["to"], (
                        "pointer removed from %s line %s" % (INDEX, ", ".join(removed)))
                        if removed else "it had no pointer in %s" % INDEX))
            if links:
                lines.append("%d link%s point%s at %s note%s:" % (
                    len(links), "" if len(links) == 1 else "s", "s" if len(links) == 1 else "",
                    "the restored" if restoring else "the archived", "" if len(moved) == 1 else "s"))
                lines.extend("  " + x for x in links)
                if not restoring:
                    lines.append("  they now lead into archive/: point them elsewhere, or drop them")
            notes.emit(args.json, obj, _receipt_text(root, entry, lines, warnings, dry))
            return EX_OK

        root, chosen = notes.resolve_root(args.root or root_arg)
        names = list(dict.fromkeys(notes.note_arg(x) for x in names_in))
        moved: list[dict[str, object]] = []
        warnings: list[str] = []
        with journal.transaction(root, cmd, raw, no_undo=args.no_undo) as tx:
            st = store.load(root)
            before = tx.read(INDEX)
            index = _index_lines(before)
            for name in names:
                live, arch = name + ".md", store.ARCHIVE + "/" + name + ".md"
                src, dst = (arch, live) if restoring else (live, arch)
                if tx.read(src) is None:
                    other = tx.read(dst) is not None
                    raise Refusal("%s: %s" % (src, (
                        "already live" if restoring else "already archived") if other else
                        "no such note; `engramory search` finds notes by their words"))
                if tx.read(dst) is not None:
                    raise Refusal("%s exists already; archive or rename one of the two by hand" % dst)
                _read_only(root, [src, dst, INDEX])
                note = st.by_rel.get(src)
                item: dict[str, object] = {"name": name, "from": src, "to": dst}
                if restoring:
                    t = note.type if note is not None else None
                    if t not in TYPES:
                        raise Refusal("%s has no valid type, so it has no heading in the index; fix its frontmatter "
                                      "first" % src)
                    clash = [x.rel for x in st.live if x.slug.lower() == name.lower() or (x.name or "").lower() == name]
                    if clash:
                        raise Refusal("%s already uses the name %s; rename one of them first" % (clash[0], name))
                    line_no = index.insert_pointer(t, pointer_line(name, (note.description if note else "") or name))
                    item["index_line"] = line_no
                else:
                    found = index.pointer_lines(src)
                    item["removed_lines"] = [i + 1 for i in found]
                    index.remove_lines(found)
                tx.move(src, dst)
                moved.append(item)
            after = index.encode()
            if restoring:
                warnings += _judge_index(root, before, after, cmd)
                # line numbers shift as later pointers go in: report the final ones
                final = notes.IndexLines(after)
                for item in moved:
                    at = final.pointer_lines(str(item["to"]))
                    item["index_line"] = at[0] + 1 if at else 0
            tx.write(INDEX, after)
            slugs = {x.lower() for x in names}
            links = _links_to(st, slugs, {str(m["from"]) for m in moved})
            if args.dry_run:
                raise _DryRun(lambda: receipt(None, True))
        return receipt(tx.entry, False)

    return _run(args.json, _dry_run_or(work))


def archive_main(argv: Sequence[str] | None = None) -> int:
    return _move_main(argv, restoring=False)


def restore_main(argv: Sequence[str] | None = None) -> int:
    return _move_main(argv, restoring=True)


if __name__ == "__main__":
    raise SystemExit(new_main())
