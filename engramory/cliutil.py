"""Small pieces every command shares: an argument parser whose usage errors exit 64
(EX_USAGE) instead of argparse's 2, which `check` uses for OVER."""

from __future__ import annotations

import argparse
import sys

EX_USAGE = 64
EX_NOINPUT = 66


class Parser(argparse.ArgumentParser):
    def __init__(self, *args: object, usage_exit: int = EX_USAGE, **kwargs: object) -> None:
        self.usage_exit = usage_exit
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def error(self, message: str) -> None:  # type: ignore[override]
        from engramory.excerpt import emit  # argparse echoes the bad value: it may be a token

        self.print_usage(sys.stderr)
        emit("%s: error: %s\n" % (self.prog, message), sys.stderr)
        raise SystemExit(self.usage_exit)
