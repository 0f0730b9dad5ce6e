"""`engramory search QUERY [ROOT]`: ranked lexical search over the notes of a store, live and
archived (engramory.curate.search)."""

from __future__ import annotations

import sys

from engramory.commands.parser import Parser
from engramory.curate import notes
from engramory.curate.search import LIMIT, cut_note, render
from engramory.curate.searchindex import search
from engramory.exitcodes import EX_NO_MATCH, EX_OK
from engramory.store.reader import TYPES
from engramory.store.secrets import emit, emit_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

EXIT_HELP = ("exit codes: 0 at least one match; 1 no match; 64 usage error; 66 the store folder "
             "cannot be read.")


def main(argv: Sequence[str] | None = None) -> int:
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
    args = p.parse_args(list(sys.argv[1:] if argv is None else argv))
    words = list(args.query)
    given = args.root
    if given is None and len(words) > 1 and notes.is_path_like(words[-1]):
        given = words.pop()
    if args.limit < 1:
        p.error("--limit must be at least 1")
    query = " ".join(words)
    try:
        root, chosen = notes.resolve_root(given)
    except notes.Refusal as exc:
        return notes.fail(args.json, str(exc), exc.code)
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
             "curated selection\n" % (notes._q(query), root))
    return EX_OK if hits else EX_NO_MATCH


if __name__ == "__main__":
    raise SystemExit(main())
