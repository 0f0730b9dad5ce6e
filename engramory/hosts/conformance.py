"""mypy --strict checks every registry entry against `protocol.Host` here (one line a host;
tests/unit/hosts/test_host_protocol.py holds these lines to REGISTRY). Nothing imports this module at
run time: it is for the type checker only."""

from __future__ import annotations

import engramory.hosts.auggie
import engramory.hosts.claude
import engramory.hosts.claude_desktop
import engramory.hosts.cline
import engramory.hosts.codex
import engramory.hosts.copilot
import engramory.hosts.crush
import engramory.hosts.cursor
import engramory.hosts.droid
import engramory.hosts.gemini
import engramory.hosts.hermes
import engramory.hosts.kilo
import engramory.hosts.kiro
import engramory.hosts.openclaw
import engramory.hosts.opencode
import engramory.hosts.qwen
import engramory.hosts.trae
import engramory.hosts.windsurf
import engramory.hosts.zed
from engramory.hosts.protocol import Host

_claude: Host = engramory.hosts.claude
_cursor: Host = engramory.hosts.cursor
_hermes: Host = engramory.hosts.hermes
_codex: Host = engramory.hosts.codex
_gemini: Host = engramory.hosts.gemini
_qwen: Host = engramory.hosts.qwen
_droid: Host = engramory.hosts.droid
_copilot: Host = engramory.hosts.copilot
_opencode: Host = engramory.hosts.opencode
_cline: Host = engramory.hosts.cline
_openclaw: Host = engramory.hosts.openclaw
_kilo: Host = engramory.hosts.kilo
_crush: Host = engramory.hosts.crush
_windsurf: Host = engramory.hosts.windsurf
_kiro: Host = engramory.hosts.kiro
_trae: Host = engramory.hosts.trae
_auggie: Host = engramory.hosts.auggie
_claude_desktop: Host = engramory.hosts.claude_desktop
_zed: Host = engramory.hosts.zed
