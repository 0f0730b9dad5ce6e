"""Claude Desktop (the chat app): no pre-write hook and no memory file of its own, so the MCP
server is its only way to the store, and the caps hold by construction (engramory.mcp).

Unverified: the app cannot be installed here. Facts, and where they come from: the config is
`claude_desktop_config.json` with an `mcpServers` map of `{command, args, env}` entries (the MCP
docs' "Connect to local MCP servers" page, modelcontextprotocol.io/docs/develop/connect-local-servers),
in `~/Library/Application Support/Claude/` on macOS and `%APPDATA%\\Claude\\` on Windows (the
same page); Linux builds are community ports that read `~/.config/Claude/` (their READMEs; the
path the brief names). The app starts local servers over stdio and reads a config change only
when it restarts (the same page).
"""

from __future__ import annotations

from engramory.hosts import mcponly
from engramory.hosts.mcponly import index_paths, respond, window

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

NAME = "claude-desktop"
TITLE = "Claude Desktop"
VERIFIED = ""
UNVERIFIED_WHY = ("the app cannot be installed from a package registry; its config format and place are from the "
                  "MCP docs, and the server itself is verified with the official MCP client and on Claude Code")
INSTALLER = "engramory.hosts.claude_desktop.install"
CONFIG = "claude_desktop_config.json"


def config_dir(env: Mapping[str, str] | None = None, platform: str | None = None) -> str:
    """The folder of claude_desktop_config.json on this system."""
    return mcponly.app_dir(env, platform, linux="Claude", windows="Claude", mac="Claude")


# the registry reads these from the host's module; they are the same for every MCP-only host
__all__ = ["NAME", "TITLE", "VERIFIED", "UNVERIFIED_WHY", "INSTALLER", "config_dir", "index_paths", "respond", "window"]


if TYPE_CHECKING:  # mypy checks this module against the registry's Host Protocol; never run
    from engramory.hosts import claude_desktop as _self
    from engramory.hosts.protocol import Host

    _host: Host = _self
