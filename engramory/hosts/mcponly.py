"""What every host without a pre-write hook declares alike: the MCP server (engramory.mcp) is
its only way to the store, so it loads no index file, has no hook to answer, and keeps its
config in a per-user app folder. Claude Desktop and Zed take these from here; their own
folders hold only their names, their sources and the folder names of their config."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from engramory.size import Window


def window() -> Window:
    from engramory import size  # the registry imports hosts for their names; size only when asked

    return size.Window(note="loads no index file: memory_edit holds the store to Claude Code's window")


def index_paths(cwd: str, env: Mapping[str, str]) -> list[str]:
    return []


def respond(raw: bytes, env: Mapping[str, str] | None = None) -> tuple[str, str, int]:
    """No hook runs here: the MCP server is where the caps hold. Nothing to say."""
    return "", "", 0


def app_dir(env: Mapping[str, str] | None, platform: str | None, linux: str, windows: str,
            mac: str | None = None) -> str:
    """The app's config folder: `mac` under ~/Library/Application Support (when given, else the
    XDG folder as on Linux), `windows` under %APPDATA%, `linux` under $XDG_CONFIG_HOME or ~/.config."""
    env = os.environ if env is None else env
    platform = platform or sys.platform
    home = env.get("HOME") or os.path.expanduser("~")
    if platform == "darwin" and mac is not None:
        return os.path.join(home, "Library", "Application Support", mac)
    if platform.startswith("win"):
        return os.path.join(env.get("APPDATA") or os.path.join(home, "AppData", "Roaming"), windows)
    return os.path.join(env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config"), linux)
