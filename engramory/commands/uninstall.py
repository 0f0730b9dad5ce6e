"""`engramory uninstall [--host H] [--scope S] [--dry-run]`: take out exactly what
`engramory install` put in; the memory store itself is never touched."""

from __future__ import annotations

import sys

from engramory.commands.install import other_host, parser
from engramory.hosts.claude import install as claude
from engramory.install.settings import SettingsError
from engramory.install.steps import refused

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    args = parser("engramory uninstall", uninstall=True).parse_args(argv)
    if args.host != "claude":
        return other_host(args, uninstall=True)
    try:
        target = claude.Target(args.scope)
        try:  # before the skill folder (and the entry's record in it) goes
            claude.mcp_step(target, args, uninstall=True)
        except SettingsError as exc:  # a config we cannot edit must not keep the hooks in
            sys.stderr.write("engramory uninstall: the memory MCP server entry was left in place: %s\n" % exc)
        return claude.uninstall(target, dry_run=args.dry_run)
    except SettingsError as exc:
        return refused("uninstall", exc)


if __name__ == "__main__":
    raise SystemExit(main())
