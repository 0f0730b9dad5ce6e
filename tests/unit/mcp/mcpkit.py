"""What the MCP tests share: a store to serve (near its caps when asked), an in-process client
that speaks the protocol through the server's own Session (no process, so fuzzing is fast),
and the server as a real process over stdio."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

from engramory.curate.notes import scalar
from engramory.mcp import protocol, tools
from tests.conftest import ROOT

ENTRY = [sys.executable, "-I", "-S", str(ROOT / "tools" / "engramory.py"), "mcp"]


def note_text(name: str, description: str, type_: str = "reference", body: str = "",
              created: str = "2026-11-01", updated: str = "2026-11-02") -> str:
    if not body:
        body = "Where the %s lives and what it is for." % name
    if type_ in ("feedback", "project") and "**Why:**" not in body:
        body += "\n\n**Why:** it cost a day once.\n**How to apply:** check it first next time."
    return ("---\nname: %s\ndescription: %s\ntype: %s\ncreated: %s\nupdated: %s\n---\n%s\n"
            % (name, scalar("description", description), type_, created, updated, body))


def make_store(root: Path, notes: int = 3, pad: int = 0) -> Path:
    """A clean store: `notes` reference notes, each with its pointer (padded by `pad`
    characters, to bring the index near its caps)."""
    root.mkdir(parents=True, exist_ok=True)
    lines = ["# Memory Index", "", "## reference"]
    for i in range(notes):
        name = "ref-%03d" % i
        (root / (name + ".md")).write_text(note_text(name, "Reference %03d, the %s dashboard %s" % (
            i, ["alpha", "beta", "gamma", "delta"][i % 4], "z" * (i % 7))), encoding="utf-8")
        lines.append("- [Reference %03d](%s.md)%s" % (i, name, (" \u2014 " + "w" * pad) if pad else ""))
    (root / "MEMORY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


class Client:
    """A protocol session over the store at `root`, in this process."""

    def __init__(self, root: Path, version: str = "2025-11-25") -> None:
        self.session = protocol.Session(tools.definitions, tools.Tools(str(root)).call)
        self.ids = 0
        if version:
            got = self.request("initialize", {"protocolVersion": version, "capabilities": {},
                                              "clientInfo": {"name": "test", "version": "0"}})
            assert got["result"]["protocolVersion"] == version
            self.notify("notifications/initialized")

    def send(self, message: Any) -> Optional[Any]:
        raw = self.session.handle(json.dumps(message).encode("utf-8"))
        return json.loads(raw) if raw else None

    def request(self, method: str, params: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        self.ids += 1
        msg: Dict[str, Any] = {"jsonrpc": "2.0", "id": self.ids, "method": method}
        if params is not None:
            msg["params"] = params
        got = self.send(msg)
        assert isinstance(got, dict)
        return got

    def notify(self, method: str) -> None:
        assert self.send({"jsonrpc": "2.0", "method": method}) is None

    def call(self, name: str, **arguments: Any) -> Dict[str, Any]:
        got = self.request("tools/call", {"name": name, "arguments": arguments})
        assert "result" in got, got
        result: Dict[str, Any] = got["result"]
        return result


def text(result: Dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


def serve(root: Path, lines: List[bytes], timeout: float = 120, env: Optional[Dict[str, str]] = None,
          argv: Optional[List[str]] = None) -> subprocess.CompletedProcess[bytes]:
    """The real server (tools/engramory.py under -I -S) answering `lines` then end of input."""
    return subprocess.run((argv or ENTRY) + ["--root", str(root)], input=b"".join(lines), capture_output=True,
                          timeout=timeout, env=dict(os.environ, **(env or {})))


def msg(mid: Any, method: str, params: Optional[Dict[str, Any]] = None) -> bytes:
    m: Dict[str, Any] = {"jsonrpc": "2.0", "id": mid, "method": method}
    if params is not None:
        m["params"] = params
    return (json.dumps(m) + "\n").encode("utf-8")


def init(version: str = "2025-11-25") -> List[bytes]:
    return [msg(0, "initialize", {"protocolVersion": version, "capabilities": {},
                                  "clientInfo": {"name": "test", "version": "0"}}),
            b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n']
