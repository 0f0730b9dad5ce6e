"""Zed's agent: its tool permissions match `edit_file` by path only and it runs no tool hooks
(zed-industries/zed#52688, open), so an MCP server is the only enforcement point there: the
caps hold by construction when memory is written through engramory.mcp.

Unverified: Zed cannot be installed here. Facts, and where they come from: custom servers go in
`settings.json` under `context_servers`, `{"<name>": {"command": ..., "args": [...], "env": {}}}`,
and Zed supports MCP tools and prompts (zed.dev/docs/ai/mcp, docs/src/ai/mcp.md in
zed-industries/zed); the settings file is `~/.config/zed/settings.json` on Linux and macOS
(`$XDG_CONFIG_HOME/zed` when that is set) and `%APPDATA%\\Zed\\settings.json` on Windows, and it
is JSON with comments and trailing commas (zed.dev/docs/configuring-zed). Zed reloads its
settings when the file changes.
"""

from __future__ import annotations

from engramory.hosts import mcponly
from engramory.hosts.mcponly import index_paths, respond, window

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

NAME = "zed"
TITLE = "Zed"
VERIFIED = ""
UNVERIFIED_WHY = ("Zed cannot be installed from a package registry; its settings format and place are from its docs, "
                  "and the server itself is verified with the official MCP client and on Claude Code")
INSTALLER = "engramory.hosts.zed.install"


def config_dir(env: Mapping[str, str] | None = None, platform: str | None = None) -> str:
    """The folder of Zed's settings.json on this system (~/.config/zed on macOS too)."""
    return mcponly.app_dir(env, platform, linux="zed", windows="Zed")


# the registry reads these from the host's module; they are the same for every MCP-only host
__all__ = ["NAME", "TITLE", "VERIFIED", "UNVERIFIED_WHY", "INSTALLER", "config_dir", "index_paths", "respond", "window"]


if TYPE_CHECKING:  # mypy checks this module against the registry's Host Protocol; never run
    from engramory.hosts import zed as _self
    from engramory.hosts.protocol import Host

    _host: Host = _self
