"""`engramory install [--host H] [--scope S] [--dry-run] [--link] [--check [--json]]`: wire
the guard and the skill into a host, or tell whether the wiring acts. Claude Code's installer
is engramory.hosts.claude.install; every other host's is the module its registry entry names
(INSTALLER). `engramory uninstall` (engramory.commands.uninstall) shares the parser."""

from __future__ import annotations

import importlib
import sys

from engramory import hosts
from engramory.commands.parser import Parser
from engramory.hosts import mcponly
from engramory.hosts.claude import install as claude
from engramory.install.settings import SettingsError
from engramory.install.steps import refused

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

SCOPES = ("user", "project", "local")
HOSTS = tuple(hosts.names())  # the registry decides which hosts exist (engramory/hosts/__init__.py)


# described one by one in the epilog; every other host is listed from the registry
DESCRIBED = ("claude", "cursor", "hermes", "codex", "gemini")


def epilog() -> str:
    """The help's closing text. The hosts it lists after the ones it describes come from the
    registry, so a new host shows here without an edit (loading every host module costs about
    0.1 s, so only `--help` pays it: see InstallParser)."""
    rest = [n for n in HOSTS if n not in DESCRIBED]
    mcp = [n for n in rest if hosts.load(n).respond is mcponly.respond]
    hooked = [n for n in rest if n not in mcp]
    return (
        "Scopes: user = $CLAUDE_CONFIG_DIR or ~/.claude (skills/engramory, settings.json); "
        "project = ./.claude (skills/engramory, settings.json; committed: the hooks run python3 "
        "from PATH and find the bundle through $CLAUDE_PROJECT_DIR, so every clone works); local = "
        "./.claude/skills/engramory with the hooks in ./.claude/settings.local.json. --host cursor: the preToolUse guard into "
        "~/.cursor/hooks.json (user) or ./.cursor/hooks.json (project), first in its list. --host "
        "hermes: the plugin into $HERMES_HOME/plugins/engramory (HERMES_HOME, else ~/.hermes), "
        "enabled in its config.yaml; user scope only, no --link. --host codex: the hooks into "
        "$CODEX_HOME/hooks.json (CODEX_HOME, else ~/.codex; project: ./.codex/hooks.json), trusted in "
        "$CODEX_HOME/config.toml (Codex runs no untrusted hook). --host gemini: BeforeTool, AfterTool "
        "and SessionStart hooks into $GEMINI_CLI_HOME/.gemini/settings.json (else ~/.gemini; project: "
        "./.gemini/settings.json), the runtime beside it in engramory/. --host %s: each host's own hook or "
        "plugin file, as PORTING.md says per host; --host %s: no hook, the memory MCP server (`engramory mcp`) "
        "into the app's config, with --root DIR. `engramory hosts` lists every host with the version it was "
        "verified on. Exit status: 0 done (or healthy, for --check), 1 refused with "
        "nothing changed, a write that failed (the message says what was left) or, for --check, "
        "a problem found; 64 usage error." % (", ".join(hooked), ", ".join(mcp))
    )


class InstallParser(Parser):
    """The install/uninstall parser: its epilog is written when the help is shown, not when
    every `engramory install` parses its arguments."""

    def format_help(self) -> str:
        self.epilog = epilog()
        return super().format_help()


def parser(prog: str, uninstall: bool) -> Parser:
    what = "Take out exactly what `engramory install` put in" if uninstall else (
        "Install the engramory skill and its hooks into Claude Code"
    )
    parser = InstallParser(prog=prog, description=what + ". The memory store itself is never touched.")
    parser.add_argument("--scope", choices=SCOPES, default="user", help="where to install (default: user)")
    parser.add_argument("--host", choices=HOSTS, default="claude", help="which host to wire (default: claude)")
    parser.add_argument("--dry-run", action="store_true", help="show what would change (a diff) and write nothing")
    parser.add_argument(
        "--root", metavar="DIR",
        help="the memory folder the MCP server serves (absolute, existing): required with --host claude-desktop "
        "and --host zed; with --mcp, default this project's auto memory",
    )
    parser.add_argument(
        "--mcp", action="store_true",
        help="--host claude: also write the memory MCP server (`engramory mcp`) into Claude Code's MCP config "
        "(user scope: ~/.claude.json; local: this project's entry in it); uninstall always takes it out",
    )
    if not uninstall:
        parser.add_argument(
            "--link", action="store_true",
            help="link the skill's files to this checkout instead of copying them (for development: "
            "edits show at once)",
        )
        parser.add_argument(
            "--check", action="store_true",
            help="tell whether the guard would act here, and change nothing: every settings file "
            "Claude Code reads for this folder (managed, user, project, local), disableAllHooks, env "
            "blocks setting ENGRAMORY_*, matchers, async handlers, every bundle module, and a smoke "
            "run of each hook that must deny or report; exit 1 with the reason and the fix if not",
        )
        parser.add_argument("--json", action="store_true", help="with --check: the report as one JSON object")
    return parser


def other_host(args: argparse.Namespace, uninstall: bool) -> int:
    """Hand over to the host's installer module, as its registry entry names it
    (INSTALLER): install(args) / uninstall(args) -> int."""
    name = hosts.load(args.host).INSTALLER
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        sys.stderr.write(
            "engramory: --host %s is not available in this bundle yet (%s.py is missing); "
            "only --host claude can be installed from here\n" % (args.host, name.replace(".", "/"))
        )
        return 1
    entry = getattr(module, "uninstall" if uninstall else "install")
    return int(entry(args))


def main(argv: Sequence[str] | None = None) -> int:
    args = parser("engramory install", uninstall=False).parse_args(argv)
    if args.host != "claude":
        return other_host(args, uninstall=False)
    target = claude.Target(args.scope)
    if args.check:
        return claude.run_check(target, as_json=args.json, mcp=args.mcp)
    try:
        done = claude.install(target, dry_run=args.dry_run, link=args.link)
        if done == 0 and args.mcp:
            done = claude.mcp_step(target, args, uninstall=False)
        return done
    except SettingsError as exc:
        return refused("install", exc)


if __name__ == "__main__":
    raise SystemExit(main())
