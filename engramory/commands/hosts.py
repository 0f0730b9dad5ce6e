"""`engramory hosts`: every host in the registry, the version it was verified on, its load
window and how to install it."""

from __future__ import annotations

import sys

from engramory import hosts, jsonlite
from engramory.commands.parser import Parser

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


def rows() -> list[dict[str, Any]]:
    out = []
    for name in hosts.names():
        mod = hosts.load(name)
        window = mod.window()
        out.append(
            {
                "name": name,
                "title": mod.TITLE,
                "verified": mod.VERIFIED or None,
                "unverified_why": getattr(mod, "UNVERIFIED_WHY", None) if not mod.VERIFIED else None,
                "window": {
                    "unit": window.unit,
                    "lines": window.lines,
                    "size": window.size,
                    "keep": window.keep,
                    "text": window.describe(),
                    "note": window.note,
                },
                "install": "engramory install --host %s" % name,
            }
        )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = Parser(
        prog="engramory hosts",
        description="List the agent hosts engramory guards, the host version each was verified on "
        "(end to end, on the real host), the window each loads an index through, and its install "
        "command. Exit status: 0; 64 usage error.",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document (a list of hosts)")
    args = parser.parse_args(argv)
    table = rows()
    if args.json:
        sys.stdout.write(jsonlite.dumps(table) + "\n")
        return 0
    width = max(len(r["name"]) for r in table)
    for r in table:
        verified = ("verified on %s" % r["verified"]) if r["verified"] else "not verified on the real host"
        sys.stdout.write(
            "%s  %s: %s; window %s\n" % (r["name"].ljust(width), r["title"], verified, r["window"]["text"])
        )
        # what the window means for this host (most load no index of their own, so the caps
        # are engramory's policy there, not the host's), then why it is not verified
        for why in (r["window"]["note"], r["unverified_why"]):
            if why:
                sys.stdout.write("%s  (%s)\n" % (" " * width, why))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
