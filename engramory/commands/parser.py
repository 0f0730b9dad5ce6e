"""What every command's parsing shares: an argument parser whose usage errors exit 64
(EX_USAGE) instead of argparse's 2, which `check` uses for OVER, and the curation commands'
parser with their exit codes."""

from __future__ import annotations

import argparse
import sys

from engramory.exitcodes import EX_USAGE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Parser(argparse.ArgumentParser):
    def __init__(self, *args: object, usage_exit: int = EX_USAGE, **kwargs: object) -> None:
        self.usage_exit = usage_exit
        self._adding = False
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def add_argument(self, *args: Any, **kwargs: Any) -> Any:
        self._adding = True
        try:
            return super().add_argument(*args, **kwargs)
        finally:
            self._adding = False

    def _get_formatter(self) -> argparse.HelpFormatter:
        """While an argument is added, argparse makes a formatter only to check its metavar;
        a formatter with no width given imports shutil (bz2, lzma, fnmatch) to ask the
        terminal's. That check needs no width: help and usage still get the terminal's."""
        if self._adding:
            return self.formatter_class(prog=self.prog, width=80)  # type: ignore[call-arg]
        return super()._get_formatter()

    def error(self, message: str) -> None:  # type: ignore[override]
        from engramory.store.secrets import emit  # argparse echoes the bad value: it may be a token

        self.print_usage(sys.stderr)
        emit("%s: error: %s\n" % (self.prog, message), sys.stderr)
        raise SystemExit(self.usage_exit)

    def add_root(self, text: str) -> None:
        """The store folder as the optional last argument ROOT, and as `--root DIR` too: search,
        archive and restore take `--root` (their positionals are words and names), so a user who
        learnt it there may type it to any store command."""
        self.add_argument("root", nargs="?", metavar="ROOT", help=text)
        self.add_root_flag()

    def add_root_flag(self) -> None:
        self.add_argument("--root", dest="root_flag", metavar="DIR", help="the same as ROOT")

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        ns, rest = super().parse_known_args(args, namespace)
        flag = getattr(ns, "root_flag", None)
        if flag is not None:
            given = getattr(ns, "root", None)
            if given is not None and given != flag:
                self.error("the store folder is given twice (ROOT %r and --root %r): give one" % (given[:80], flag[:80]))
            ns.root = flag
        return ns, rest


# exit codes shared by new, update, archive, restore, undo
CURATION_EXIT_HELP = (
    "exit codes: 0 done; 1 refused (nothing changed; the message says why and what to do next); "
    "3 the store was busy or changed while the command ran (nothing changed; run it again); "
    "64 usage error; 66 the store folder cannot be read."
)


def curation(prog: str, description: str) -> Parser:
    """The parser of a curation command (new, update, archive, restore, log, undo): their exit codes."""
    return Parser(prog="engramory " + prog, description=description, epilog=CURATION_EXIT_HELP)
