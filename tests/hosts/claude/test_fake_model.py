"""The scripted model server on its own (no CLI needed): it speaks the streaming
Messages API the way the CLI reads it and records what it was sent."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any, Dict, List, Tuple

import pytest
from fake_model import OVERRUN_TEXT, SIDE_TEXT, FakeModel, Text, ToolUse

TOOLS = [{"name": "Write", "input_schema": {"type": "object"}}]


def post(model: FakeModel, path: str, body: Dict[str, Any] | None) -> Tuple[int, str, bytes]:
    data = json.dumps(body).encode() if body is not None else b""
    req = urllib.request.Request(model.base_url + path, data=data, method="POST")
    req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.headers.get("Content-Type", ""), resp.read()
    except urllib.error.HTTPError as err:
        with err:
            return err.code, err.headers.get("Content-Type", ""), err.read()


def sse_events(raw: bytes) -> List[Tuple[str, Dict[str, Any]]]:
    events = []
    for chunk in raw.decode().split("\n\n"):
        if not chunk.strip():
            continue
        name, data = chunk.split("\n", 1)
        assert name.startswith("event: ") and data.startswith("data: ")
        events.append((name[len("event: ") :], json.loads(data[len("data: ") :])))
    return events


def user(text: str) -> Dict[str, Any]:
    return {"role": "user", "content": text}


def assistant() -> Dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": "earlier"}]}


def test_tool_use_turn_streams_in_api_order() -> None:
    tool_input = {"file_path": "/p/MEMORY.md", "content": "caf\u00e9\r\n"}
    with FakeModel([ToolUse("Write", tool_input, id="toolu_x"), Text("done")]) as model:
        body = {"model": "m", "stream": True, "tools": TOOLS, "messages": [user("go")]}
        status, ctype, raw = post(model, "/v1/messages?beta=true", body)

    assert status == 200 and ctype == "text/event-stream"
    events = sse_events(raw)
    assert [name for name, _ in events] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert all(data["type"] == name for name, data in events)
    start, delta = events[1][1], events[2][1]
    assert start["content_block"] == {"type": "tool_use", "id": "toolu_x", "name": "Write", "input": {}}
    assert delta["delta"]["type"] == "input_json_delta"
    assert json.loads(delta["delta"]["partial_json"]) == tool_input
    assert events[4][1]["delta"]["stop_reason"] == "tool_use"
    (recorded,) = model.requests
    assert (recorded.kind, recorded.turn_index, recorded.query) == ("turn", 0, "beta=true")
    assert recorded.body == body


def test_turn_is_chosen_by_assistant_message_count() -> None:
    seen: List[Dict[str, Any]] = []

    def pick(body: Dict[str, Any]) -> Text:
        seen.append(body)
        return Text("picked")

    with FakeModel([Text("first"), pick]) as model:
        body = {"model": "m", "tools": TOOLS, "messages": [user("go"), assistant(), user("more")]}
        status, ctype, raw = post(model, "/v1/messages", body)  # not streamed: plain JSON

    assert status == 200 and ctype == "application/json"
    message = json.loads(raw)
    assert message["content"] == [{"type": "text", "text": "picked"}]
    assert message["stop_reason"] == "end_turn"
    assert seen == [body]


def test_side_requests_do_not_consume_turns() -> None:
    with FakeModel([Text("only turn")]) as model:
        _, _, raw = post(model, "/v1/messages", {"model": "m", "messages": [user("title?")]})
        assert json.loads(raw)["content"][0]["text"] == SIDE_TEXT
        _, _, raw = post(model, "/v1/messages", {"model": "m", "tools": TOOLS, "messages": [user("go")]})
        assert json.loads(raw)["content"][0]["text"] == "only turn"
    assert [r.kind for r in model.requests] == ["side", "turn"]


def test_past_the_script_end_answers_and_counts_overrun() -> None:
    with FakeModel([]) as model:
        _, _, raw = post(model, "/v1/messages", {"model": "m", "tools": TOOLS, "messages": [user("go")]})
    assert json.loads(raw)["content"][0]["text"] == OVERRUN_TEXT
    assert model.overruns == 1


def test_a_raising_script_is_a_400_and_is_recorded() -> None:
    def broken(body: Dict[str, Any]) -> Text:
        raise ValueError("bad script")

    with FakeModel([broken]) as model:
        status, _, raw = post(model, "/v1/messages", {"model": "m", "tools": TOOLS, "messages": [user("go")]})
    assert status == 400
    assert json.loads(raw)["error"]["type"] == "invalid_request_error"
    assert "ValueError: bad script" in model.errors[0]


@pytest.mark.parametrize(
    "path, status",
    [("/v1/messages/count_tokens", 200), ("/v1/unknown", 404)],
)
def test_other_endpoints_answer_and_are_recorded(path: str, status: int) -> None:
    with FakeModel([]) as model:
        got, _, _ = post(model, path, {"messages": [user("x")]})
        head = urllib.request.Request(model.base_url + "/", method="HEAD")
        with urllib.request.urlopen(head, timeout=10) as resp:
            assert resp.status == 200
    assert got == status
    assert [(r.method, r.path, r.kind) for r in model.requests] == [
        ("POST", path, "other"),
        ("HEAD", "/", "other"),
    ]


def test_a_turn_may_send_several_blocks() -> None:
    turn = (Text("two writes"), ToolUse("Write", {"file_path": "/a"}), ToolUse("Write", {"file_path": "/b"}))
    with FakeModel([turn]) as model:
        _, _, raw = post(
            model, "/v1/messages", {"model": "m", "stream": True, "tools": TOOLS, "messages": []}
        )
    starts = [data for name, data in sse_events(raw) if name == "content_block_start"]
    assert [(s["index"], s["content_block"]["type"]) for s in starts] == [
        (0, "text"),
        (1, "tool_use"),
        (2, "tool_use"),
    ]
    ids = {s["content_block"].get("id") for s in starts[1:]}
    assert len(ids) == 2  # generated ids are distinct
