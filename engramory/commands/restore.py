"""`engramory restore NAME... [--root ROOT]`: move archived notes back and re-add their
pointers, in one journaled step (engramory.commands.archive.move_main)."""

from __future__ import annotations

from engramory.commands.archive import move_main

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    return move_main(argv, restoring=True)


if __name__ == "__main__":
    raise SystemExit(main())
