"""`engramory install --help` names every host of the registry, from the registry: a new host
shows there without an edit of the help text."""

from __future__ import annotations

import re

import pytest

from engramory import hosts
from engramory.commands import install as install_cmd
from engramory.hosts import mcponly


def test_the_help_names_every_registry_host_once_and_mcp_only_ones_as_such() -> None:
    text = " ".join(install_cmd.epilog().split())
    assert text in " ".join(install_cmd.parser("engramory install", uninstall=False).format_help().split())
    listed = re.findall(r"--host ([a-z-]+(?:, [a-z-]+)*):", text)
    named = [n for group in listed for n in group.split(", ")]
    assert sorted(named) == sorted(set(hosts.names()) - {"claude"}), listed  # claude: the default, no --host
    mcp = re.search(r"--host ([a-z, -]+): no hook, the memory MCP server", text)
    assert mcp and mcp.group(1).split(", ") == [n for n in hosts.names() if hosts.load(n).respond is mcponly.respond]


def test_parsing_the_arguments_does_not_write_the_help(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom() -> str:
        raise AssertionError("the epilog was built for a plain parse")

    monkeypatch.setattr(install_cmd, "epilog", boom)
    args = install_cmd.parser("engramory install", uninstall=False).parse_args(["--host", "kiro", "--dry-run"])
    assert args.host == "kiro" and args.dry_run
