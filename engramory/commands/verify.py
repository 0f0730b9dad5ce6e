"""`engramory verify [ROOT] [--repo DIR] [--json] [--mark NOTE...]`: check what the store's
notes say about the code (paths, line spans, symbols, packages, commands, commits) against
the repository it describes. Reads only; `--mark` writes `verified:` through the journal.
Parse, call engramory.verify.run, render."""

from __future__ import annotations

import json
import os
import sys

from engramory.commands.parser import Parser
from engramory.curate import notes
from engramory.doctor.codes import shown
from engramory.exitcodes import EX_NOINPUT, EX_USAGE
from engramory.store import journal
from engramory.verify import mark, run

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from engramory.verify.run import Result

EXIT_HELP = (
    "Output: one line per stale or moved anchor, `note.md:12: moved path scripts/deploy.sh: ops/deploy.py "
    "(renamed in a1b2c3d)` or `note.md:14: stale symbol render_invoice(): not in the work tree`, then a "
    "summary line. Unverifiable anchors (URLs, binaries on PATH, paths outside the repository, a shallow "
    "clone) are counted, not listed; --json lists every anchor (schemas/verify.schema.json). "
    "Exit status: 0 nothing stale or moved; 1 something is; 64 usage error (an unknown --mark note "
    "included: nothing is written); 66 ROOT cannot be read."
)


def parser() -> Parser:
    p = Parser(
        prog="engramory verify",
        description="Check the paths, line spans, symbols, packages, commands and commit ids the live notes "
        "name against the repository the store describes: --repo DIR, else the project whose auto memory "
        "the store is, else the git work tree holding ROOT. Resolved against the work tree and git (renames "
        "are followed), never fetched. Writes nothing but its cache in ROOT/.engramory/, unless --mark.",
        epilog=EXIT_HELP,
    )
    p.add_root("the store folder (default: this project's Claude Code auto-memory folder)")
    p.add_argument("--repo", metavar="DIR", help="the repository the notes describe")
    p.add_argument("--json", action="store_true", help="print one JSON document (schemas/verify.schema.json)")
    p.add_argument("--mark", nargs="+", metavar="NOTE",
                   help="record that these notes were checked: `verified: YYYY-MM-DD` in their frontmatter "
                   "(`updated:` untouched), one journal entry (`engramory undo` takes it back)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    return p


def main(argv: Sequence[str] | None = None) -> int:

    raw = list(sys.argv[1:] if argv is None else argv)
    args = parser().parse_args(raw)
    marks = list(args.mark or [])
    if marks and args.root is None:
        marks, args.root = notes.split_names(marks)
        if not marks:
            parser().error("--mark needs at least one note name")
    if args.repo is not None and not os.path.isdir(args.repo):
        return _fail(args.json, "--repo %s is not a folder" % args.repo, EX_NOINPUT)
    try:
        root, chosen = notes.resolve_root(args.root)
    except notes.Refusal as exc:
        return _fail(args.json, str(exc), exc.code)
    if chosen:
        sys.stderr.write("engramory verify: no ROOT given; verifying this project's auto memory: %s\n" % root)

    try:
        result = run.verify(root, args.repo, os.getcwd(), None, None, not args.no_cache)
    except OSError as exc:
        return _fail(args.json, "cannot read the store folder %s: %s; pass the folder that holds MEMORY.md"
                     % (root, exc.strerror or exc.__class__.__name__), EX_NOINPUT)
    if marks:
        return _mark(root, marks, result, raw, args.json)
    if result.repo is None:
        sys.stderr.write("engramory verify: %s: every anchor is unverifiable\n" % result.why)
    if args.json:
        sys.stdout.write(json.dumps(document(result), indent=2) + "\n")
    else:
        sys.stdout.write(render_text(result))
    return 1 if result.broken() else 0


def document(result: Result) -> dict[str, object]:
    """The --json document (schemas/verify.schema.json)."""
    return {
        "root": os.path.abspath(result.root),
        "repo": result.repo.top if result.repo is not None else None,
        "anchors": [i.as_dict() for i in result.items],
        "summary": result.summary(),
    }


def summary_line(result: Result) -> str:
    c = result.summary()
    where = ("repository %s at %s (%s)" % (result.repo.top, result.repo.short_head, result.how)
             if result.repo is not None else "no repository")
    total = sum(c.values())
    return "verify: %d anchor%s in %d live note%s: %d stale, %d moved, %d fresh, %d unverifiable; %s" % (
        total, "" if total == 1 else "s", len(result.notes), "" if len(result.notes) == 1 else "s",
        c["stale"], c["moved"], c["fresh"], c["unverifiable"], where)


def render_text(result: Result) -> str:

    broken = result.broken()
    out = [shown(i.line_text()) for i in broken]
    out.append(summary_line(result))
    if broken:
        names = sorted({i.note for i in broken})
        out.append("Check these before acting on them: update a note that is out of date (`engramory update NAME "
                   "--body ...`), archive one that no longer holds (`engramory archive NAME`), then `engramory "
                   "verify --mark NAME` once it is right (%s)." % ", ".join(names[:5] + (["..."] if len(names) > 5 else [])))
    return "\n".join(out) + "\n"


def _mark(root: str, names: list[str], result: Result, argv: list[str], as_json: bool) -> int:

    try:
        rels = mark.find_notes(root, names, result.notes)
        entry, spans = mark.mark(root, rels, result, argv, notes.today())
    except mark.MarkError as exc:
        return _fail(as_json, str(exc), exc.code)
    except journal.JournalError as exc:
        return _fail(as_json, str(exc), 3)
    today = notes.today()
    still = {rel: [i for i in result.broken() if i.note == rel] for rel in rels}
    if as_json:
        sys.stdout.write(json.dumps({
            "ok": True, "command": "verify", "root": os.path.abspath(root), "entry": entry.id if entry else None,
            "marked": [{"note": rel, "verified": today, "spans": spans[rel], "stale": len(still[rel])} for rel in rels],
        }, indent=2) + "\n")
        return 0
    lines = []
    for rel in rels:
        lines.append("marked %s verified: %s (%d line span%s hashed)" % (rel, today, spans[rel], "" if spans[rel] == 1 else "s"))
        lines += ["  still %s" % i.line_text() for i in still[rel]]
    lines.append("journal entry %d; `engramory undo %d` takes it back" % (entry.id, entry.id) if entry
                 else "every note already said verified: %s; nothing changed" % today)
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


def _fail(as_json: bool, message: str, code: int) -> int:
    if as_json:
        sys.stdout.write(json.dumps({"ok": False, "error": message, "exit": code}) + "\n")
    sys.stderr.write("engramory verify: %s\n" % message)
    return code


__all__ = ["EX_USAGE", "document", "main", "parser", "render_text", "summary_line"]


if __name__ == "__main__":
    raise SystemExit(main())
