"""`engramory search QUERY [ROOT]`: ranked lexical search over the notes of a store, live and
archived (engramory.curate.search).

An agent runs it from its shell several times a task, so its start is kept close to the
interpreter's: a command line of the usual shapes is read by `quick` (no argparse), and
anything else (--help, an error, an abbreviated flag, `--`, a word starting with '-') goes to
the argparse parser, which is the one definition of the command line: `quick` answers only
what it would answer the same (tests/unit/curate/test_search_cli.py holds every shape to it)."""

from __future__ import annotations

import sys

from engramory.curate import root as store_root
from engramory.curate.search import LIMIT, cut_note, render
from engramory.curate.searchindex import search
from engramory.exitcodes import EX_NO_MATCH, EX_OK
from engramory.store.secrets import emit, emit_json, quote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace
    from collections.abc import Sequence

    from engramory.commands.parser import Parser

EXIT_HELP = ("exit codes: 0 at least one match; 1 no match; 64 usage error; 66 the store folder "
             "cannot be read.")


class Args:
    """What the command line asks for: the argparse namespace's fields, however it was read."""

    def __init__(self) -> None:
        self.query: list[str] = []
        self.root: str | None = None
        self.type: str | None = None
        self.limit = LIMIT
        self.live = False
        self.json = False
        self.no_index = False


def parser() -> Parser:
    # argparse only for --help, errors and unusual shapes: it costs a warm search a fifth of its time
    from engramory.commands.parser import Parser
    from engramory.store.reader import TYPES  # the note types, for --type's choices and its help

    p = Parser(prog="engramory search", epilog=EXIT_HELP, description=(
        "Ranked lexical search over a memory store's notes (name, description weighted highest, "
        "and body), live and archived (marked). Read the index first; search when nothing in it fits. "
        "Prints each hit with its path, type, description and a snippet as path:line. A search index "
        "is kept in the store's .engramory/ folder and checked against the notes on every search."))
    p.add_argument("query", nargs="+", metavar="QUERY",
                   help="words, an error string or a file name; quote it or give several words")
    p.add_argument("--root", help="the store folder (also accepted as the last argument when it names one: it has a '/', or is a folder holding MEMORY.md)")
    p.add_argument("--type", choices=TYPES, help="only notes of this type")
    p.add_argument("--limit", type=int, default=LIMIT, help="at most this many hits (default %d)" % LIMIT)
    p.add_argument("--live", action="store_true", help="leave out archive/")
    p.add_argument("--json", action="store_true", help="print a JSON object with the hits")
    p.add_argument("--no-index", action="store_true",
                   help="read every note instead of using the search index in .engramory/ (same results; "
                        "for comparing, or to rule the index out)")
    return p


FLAGS = {"--live": "live", "--json": "json", "--no-index": "no_index"}
VALUED = ("--root", "--type", "--limit")


def quick(argv: Sequence[str]) -> Args | None:
    """The command line read without argparse, or None when argparse must read it: the query
    words in one run, the flags spelt out whole, each value not starting with '-', the limit a
    whole number of at least 1 and the type one of the note types."""
    a = Args()
    run_ended = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if not arg.startswith("-"):
            if run_ended:
                return None  # words after a flag that follow other words: argparse's error
            a.query.append(arg)
            continue
        if a.query:
            run_ended = True
        if arg in FLAGS:
            setattr(a, FLAGS[arg], True)
            continue
        name, eq, value = arg.partition("=")
        if name not in VALUED:
            return None
        if not eq:
            if i == len(argv) or argv[i].startswith("-"):
                return None
            value = argv[i]
            i += 1
        if not _value(a, name, value):
            return None
    return a if a.query else None


def _value(a: Args, name: str, value: str) -> bool:
    if name == "--root":
        a.root = value
        return True
    if name == "--limit":
        try:
            a.limit = int(value)
        except ValueError:
            return False
        return a.limit >= 1
    from engramory.store.reader import TYPES  # the note types; only when --type is given

    a.type = value
    return value in TYPES


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    args = quick(given)
    if args is not None:
        return run(args)
    p = parser()
    ns = p.parse_args(given)
    if ns.limit < 1:
        p.error("--limit must be at least 1")
    return run(ns)


def run(args: Args | Namespace) -> int:
    words = list(args.query)
    given = args.root
    if given is None and len(words) > 1 and store_root.is_path_like(words[-1]):
        given = words.pop()
    query = " ".join(words)
    try:
        root, chosen = store_root.resolve_root(given)
    except store_root.Refusal as exc:
        return store_root.fail(args.json, str(exc), exc.code)
    cut: list[tuple[str, int]] = []
    hits = search(root, query, args.type, args.limit, not args.live, cut, use_index=not args.no_index)
    if cut:
        emit(cut_note(root, cut), sys.stderr)
    if args.json:
        emit_json({"query": query, "root": root, "default_root": chosen,
                   "results": [h.as_dict(i) for i, h in enumerate(hits, 1)]},
                  indent=2)  # ASCII: an undecodable query survives
    elif hits:
        if chosen:
            emit("searching %s (this project's memory folder)\n" % root)
        emit(render(hits, root))
    else:
        emit("no note matches %s in %s; not finding a note proves nothing: the store is a "
             "curated selection\n" % (quote(query, 60), root))
    return EX_OK if hits else EX_NO_MATCH


if __name__ == "__main__":
    raise SystemExit(main())
