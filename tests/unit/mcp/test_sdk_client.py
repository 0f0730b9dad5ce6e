"""Conformance with the official client: the `mcp` Python SDK (a test dependency only, pinned in
pyproject's test extras) starts `tools/engramory.py mcp` over stdio, negotiates (its default
connect probes `server/discover`, gets -32601 and falls back to `initialize`), lists the three
tools and calls each one; then the same with the SDK offering an older protocol version, which
the server answers with that version."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

from tests.unit.mcp.mcpkit import ENTRY, make_store, note_text

if sys.version_info < (3, 10):  # the SDK needs 3.10; the server itself runs on 3.9 (test_py39)
    pytest.skip("the mcp SDK needs Python 3.10 or later", allow_module_level=True)

try:
    import anyio
    import mcp  # noqa: F401 - the official SDK: `pip install -e '.[test]'` brings it
except ImportError as exc:  # CI installs the test extras: a missing SDK there is a failure, not a skip
    if os.environ.get("ENGRAMORY_REQUIRE_E2E", "") not in ("", "0"):
        raise
    pytest.skip("the mcp SDK is not installed (%s): pip install -e '.[test]'" % exc, allow_module_level=True)
from mcp import Client, StdioServerParameters  # noqa: E402

NOTE = note_text("sdk-saved", "A fact the SDK client saved through memory_edit", "user", "The user reads diffs first.")


async def session(root: Path) -> Dict[str, Any]:
    params = StdioServerParameters(command=ENTRY[0], args=ENTRY[1:] + ["--root", str(root)])
    out: Dict[str, Any] = {}
    async with Client(params, mode="auto") as client:
        out["version"] = client.session.protocol_version
        listed = await client.list_tools()
        out["tools"] = [t.name for t in listed.tools]
        out["annotations"] = [t.annotations.read_only_hint if t.annotations else None for t in listed.tools]
        calls: List[Any] = [
            await client.call_tool("memory_view", {"path": "/memories"}),
            await client.call_tool("memory_edit", {"command": "create", "path": "/memories/sdk-saved.md",
                                                   "file_text": NOTE}),
            await client.call_tool("memory_search", {"query": "diffs first"}),
            await client.call_tool("memory_edit", {"command": "delete", "path": "/memories/MEMORY.md"}),
        ]
        out["errors"] = [c.is_error for c in calls]
        out["texts"] = [c.content[0].text for c in calls]
        out["structured"] = [c.structured_content for c in calls]
    return out


def run(root: Path) -> Dict[str, Any]:
    result: Dict[str, Any] = anyio.run(session, root)
    return result


def test_the_sdk_negotiates_lists_and_calls_each_tool(tmp_path: Path) -> None:
    root = make_store(tmp_path / "store")
    got = run(root)
    assert got["version"] == "2025-11-25"
    assert got["tools"] == ["memory_view", "memory_edit", "memory_search"]
    assert got["annotations"] == [True, False, True]
    assert got["errors"] == [False, False, False, True]
    assert str(root) in got["texts"][0]
    assert got["structured"][1]["path"] == "/memories/sdk-saved.md" and got["structured"][1]["entry"] == 1
    assert "/memories/sdk-saved.md" in got["texts"][2]
    assert "cannot be deleted" in got["texts"][3]
    assert (root / "sdk-saved.md").read_text(encoding="utf-8") == NOTE


@pytest.mark.parametrize("older", ["2025-06-18", "2024-11-05"])
def test_an_older_client_is_answered_with_its_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     older: str) -> None:
    import mcp.client.session as sdk_session

    monkeypatch.setattr(sdk_session, "LATEST_HANDSHAKE_VERSION", older)
    root = make_store(tmp_path / "store")
    got = run(root)
    assert got["version"] == older
    assert got["tools"] == ["memory_view", "memory_edit", "memory_search"]
    assert got["errors"] == [False, False, False, True]
    if older == "2024-11-05":
        assert got["annotations"] == [None, None, None]  # no annotations in that version
        assert got["structured"] == [None, None, None, None]
    else:
        assert got["structured"][1]["path"] == "/memories/sdk-saved.md"
