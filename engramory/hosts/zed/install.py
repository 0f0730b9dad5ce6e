"""`engramory install --host zed --root DIR` / `uninstall --host zed`: the memory MCP server into
Zed's `settings.json` (`context_servers.engramory`; the file is JSON with comments, which the
byte-keeping editor keeps), the runtime copied beside it in `engramory/`; engramory.mcp.wiring
does the rest. Unverified: see engramory.hosts.zed for where each fact comes from."""

from __future__ import annotations

import os

from engramory.hosts import zed as host
from engramory.mcp import wiring


class Zed(wiring.McpWiring):
    host, title = host.NAME, host.TITLE
    path = ("context_servers",)
    comments = True  # Zed's settings are JSON with comments and trailing commas
    restart = "Zed reloads settings.json when it changes: open the Agent Panel's settings to see the server."

    def __init__(self, root: str | None) -> None:
        base = host.config_dir()
        super().__init__(settings=os.path.join(base, "settings.json"), bundle_dir=os.path.join(base, "engramory"),
                         root=root)


install, uninstall, check = wiring.verbs(Zed, host.TITLE)
