"""`engramory install --host claude-desktop --root DIR` / `uninstall --host claude-desktop`: the
memory MCP server into Claude Desktop's `claude_desktop_config.json` (`mcpServers.engramory`),
the runtime copied beside it in `engramory/`; engramory.mcp.wiring does the rest (bytes kept,
--dry-run, --check runs the server and lists its tools, uninstall byte-exact). Unverified: see
engramory.hosts.claude_desktop for where each fact comes from."""

from __future__ import annotations

import os

from engramory.hosts import claude_desktop as host
from engramory.mcp import wiring


class ClaudeDesktop(wiring.McpWiring):
    host, title = host.NAME, host.TITLE
    restart = "Quit Claude Desktop completely and start it again: it reads its MCP servers at start."

    def __init__(self, root: str | None) -> None:
        base = host.config_dir()
        super().__init__(settings=os.path.join(base, host.CONFIG), bundle_dir=os.path.join(base, "engramory"), root=root)


install, uninstall, check = wiring.verbs(ClaudeDesktop, host.TITLE)
