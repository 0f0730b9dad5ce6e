"""JSON-RPC 2.0 over stdio as MCP has it: version negotiation, the lifecycle, batches where the
negotiated version has them, and an error of the right code for every malformed message."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any, Dict

import pytest

from engramory.mcp import protocol
from tests.unit.mcp.mcpkit import Client, make_store


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_store(tmp_path / "store")


def error_code(answer: Any) -> int:
    assert isinstance(answer, dict) and "error" in answer, answer
    return int(answer["error"]["code"])


@pytest.mark.parametrize("asked", ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"])
def test_a_version_it_speaks_is_echoed(root: Path, asked: str) -> None:
    c = Client(root, version="")
    got = c.request("initialize", {"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}})
    result = got["result"]
    assert result["protocolVersion"] == asked
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result["serverInfo"]["name"] == "engramory" and result["instructions"]


@pytest.mark.parametrize("asked", ["2099-01-01", "2024-01-01", "draft"])
def test_any_other_version_is_answered_with_the_newest(root: Path, asked: str) -> None:
    c = Client(root, version="")
    got = c.request("initialize", {"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}})
    assert got["result"]["protocolVersion"] == protocol.VERSIONS[0] == "2025-11-25"


def test_the_tool_list_follows_the_version(root: Path) -> None:
    new = Client(root, "2025-11-25").request("tools/list")["result"]["tools"]
    assert [t["name"] for t in new] == ["memory_view", "memory_edit", "memory_search"]
    assert all("title" in t and "annotations" in t for t in new)
    mid = Client(root, "2025-03-26").request("tools/list")["result"]["tools"]
    assert all("title" not in t and "annotations" in t for t in mid)
    old = Client(root, "2024-11-05").request("tools/list")["result"]["tools"]
    assert all("title" not in t and "annotations" not in t and "inputSchema" in t for t in old)


def test_structured_content_only_where_the_version_has_it(root: Path) -> None:
    assert "structuredContent" in Client(root, "2025-06-18").call("memory_view", path="/memories")
    assert "structuredContent" not in Client(root, "2025-03-26").call("memory_view", path="/memories")


def test_before_initialize_only_ping_is_answered(root: Path) -> None:
    c = Client(root, version="")
    assert c.request("ping")["result"] == {}
    assert error_code(c.request("tools/list")) == protocol.INVALID_REQUEST


def test_notifications_get_no_answer(root: Path) -> None:
    c = Client(root)
    for method in ("notifications/initialized", "notifications/cancelled", "notifications/whatever"):
        assert c.send({"jsonrpc": "2.0", "method": method, "params": {"requestId": 1}}) is None
    assert c.send({"jsonrpc": "2.0", "id": 5, "result": {}}) is None  # a response: nothing to answer


@pytest.mark.parametrize("message, code", [
    ([], protocol.INVALID_REQUEST),
    ("just a string", protocol.INVALID_REQUEST),
    ({"jsonrpc": "2.0", "id": None, "method": "ping"}, protocol.INVALID_REQUEST),
    ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, protocol.INVALID_REQUEST),
    ({"jsonrpc": "2.0", "id": True, "method": "ping"}, protocol.INVALID_REQUEST),
    ({"jsonrpc": "1.0", "id": 1, "method": "ping"}, protocol.INVALID_REQUEST),
    ({"jsonrpc": "2.0", "id": 1}, protocol.INVALID_REQUEST),
    ({"jsonrpc": "2.0", "id": 1, "method": 7}, protocol.INVALID_REQUEST),
    ({"jsonrpc": "2.0", "id": 1, "method": "resources/list"}, protocol.METHOD_NOT_FOUND),
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [1]}, protocol.INVALID_PARAMS),
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}}, protocol.INVALID_PARAMS),
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "rm_rf"}}, protocol.INVALID_PARAMS),
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "memory_view", "arguments": "x"}},
     protocol.INVALID_PARAMS),
    ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}, protocol.INVALID_PARAMS),
])
def test_each_malformed_request_gets_its_error_code(root: Path, message: Any, code: int) -> None:
    c = Client(root)
    answer = c.send(message)
    assert error_code(answer) == code
    assert answer["error"]["message"]
    assert c.request("ping")["result"] == {}  # and the session goes on


@pytest.mark.parametrize("raw, code", [
    (b"{not json", protocol.PARSE_ERROR),
    (b"\xff\xfe{}", protocol.PARSE_ERROR),
    (b"[" * 100000 + b"]" * 100000, protocol.PARSE_ERROR),
    (b" " * (protocol.MESSAGE_MAX + 1), protocol.PARSE_ERROR),
])
def test_bytes_that_are_not_a_message_get_a_parse_error(root: Path, raw: bytes, code: int) -> None:
    c = Client(root)
    answer = json.loads(c.session.handle(raw))
    assert answer["id"] is None and answer["error"]["code"] == code


def test_batches_only_where_the_version_has_them(root: Path) -> None:
    batch = [{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "method": "notifications/x"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    old = Client(root, "2025-03-26").send(batch)
    assert isinstance(old, list) and [a["id"] for a in old] == [1, 2]
    assert Client(root, "2025-03-26").send([{"jsonrpc": "2.0", "method": "notifications/x"}]) is None
    new = Client(root, "2025-06-18").send(batch)
    assert error_code(new) == protocol.INVALID_REQUEST and "batch" in new["error"]["message"]
    init = Client(root, "2024-11-05").send([{"jsonrpc": "2.0", "id": 3, "method": "initialize",
                                               "params": {"protocolVersion": "2024-11-05"}}])
    assert isinstance(init, list) and init[0]["error"]["code"] == protocol.INVALID_REQUEST


def test_encode_keeps_one_message_on_one_line() -> None:
    for text in ("a\nb", "\u2028\u2029\x85", "\ud800 lone surrogate", "caf\u00e9"):
        line = protocol.encode({"t": text})
        assert line.endswith(b"\n") and line.count(b"\n") == 1
        assert b"\xe2\x80\xa8" not in line and b"\xc2\x85" not in line
        assert json.loads(line)["t"] == text


def test_serve_reads_an_over_long_line_in_pieces_and_goes_on(root: Path) -> None:
    c = Client(root)
    big = b'{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":"' + b"a" * (protocol.MESSAGE_MAX + 10) + b'"}}\n'
    out = io.BytesIO()
    assert protocol.serve(c.session, io.BytesIO(big + b'{"jsonrpc":"2.0","id":10,"method":"ping"}\n'), out) == 0
    first, second = [json.loads(x) for x in out.getvalue().splitlines()]
    assert first["error"]["code"] == protocol.PARSE_ERROR and "over" in first["error"]["message"]
    assert second == {"jsonrpc": "2.0", "id": 10, "result": {}}


def test_a_bug_in_a_tool_is_an_internal_error_not_a_crash(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    c = Client(root)

    def broken(args: Dict[str, Any]) -> Any:
        raise ZeroDivisionError("boom")

    c.session.call = lambda name, arguments, version: broken(arguments)  # type: ignore[assignment]
    answer = c.request("tools/call", {"name": "memory_view", "arguments": {"path": "/memories"}})
    assert answer["error"]["code"] == protocol.INTERNAL_ERROR
    assert c.request("ping")["result"] == {}
