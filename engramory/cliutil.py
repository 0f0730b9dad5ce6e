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
        self.print_usage(sys.stderr)
        sys.stderr.write("%s: error: %s\n" % (self.prog, message))
        raise SystemExit(self.usage_exit)
