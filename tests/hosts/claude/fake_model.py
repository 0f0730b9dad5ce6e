"""A scripted stand-in for the Anthropic Messages API, served on loopback.

The real Claude Code CLI is pointed at this server (``ANTHROPIC_BASE_URL``) so an
end-to-end test decides every model turn itself and can read back everything the
CLI showed the model. Standard library only.

Turn selection: the CLI resends the whole conversation on every call, so the
number of assistant messages in a request says which scripted turn comes next.
Requests without ``tools`` are side calls (session title, summaries); they get a
short plain text and never consume a turn.
"""

from __future__ import annotations

import itertools
import json
import threading
import traceback
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Mapping, Sequence, Tuple, Union
from urllib.parse import urlsplit

__all__ = [
    "FakeModel",
    "RecordedRequest",
    "Script",
    "Text",
    "ToolUse",
    "Turn",
]

JSON = Dict[str, Any]


@dataclass(frozen=True)
class Text:
    """A model turn that only says something; ends the agent loop (``end_turn``)."""

    text: str


@dataclass(frozen=True)
class ToolUse:
    """A model turn that calls one tool; the CLI runs it and asks again."""

    name: str
    input: Mapping[str, Any]
    id: str | None = None  # generated when None


Block = Union[Text, ToolUse]
# A turn is one block, several blocks sent in one message (text then parallel
# tool calls), or a function that picks the reply after looking at the request.
Turn = Union[Block, Sequence[Block], Callable[[JSON], Union[Block, Sequence[Block]]]]
Script = Sequence[Turn]

# Sent when the CLI asks for more turns than the script has, so a wrong script
# ends the run quickly instead of looping; the harness reports it as an overrun.
OVERRUN_TEXT = "[fake model: script exhausted]"
SIDE_TEXT = "Scripted session"


@dataclass
class RecordedRequest:
    """One HTTP request the CLI made, as received."""

    method: str
    path: str  # without the query string
    query: str
    headers: Dict[str, str]
    body: JSON | None  # parsed JSON body, None when absent or not JSON
    kind: str  # "turn" (has tools), "side" (messages without tools) or "other"
    turn_index: int | None = None  # script index answered, for kind == "turn"

    @property
    def messages(self) -> List[JSON]:
        return list((self.body or {}).get("messages") or [])

    @property
    def system_text(self) -> str:
        """The system prompt as one string (it arrives as a string or text blocks)."""
        return text_of((self.body or {}).get("system"))

    @property
    def tool_names(self) -> List[str]:
        return [str(t.get("name")) for t in (self.body or {}).get("tools") or []]


def text_of(value: Any) -> str:
    """The text a content value carries: a string, a block, or a list of blocks
    (tool results included, tool_use inputs as JSON)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(filter(None, (text_of(v) for v in value)))
    if isinstance(value, dict):
        if value.get("type") == "text":
            return str(value.get("text", ""))
        if value.get("type") == "tool_result":
            return text_of(value.get("content"))
        if value.get("type") == "tool_use":
            return json.dumps(value.get("input"), ensure_ascii=False)
    return ""


def count_assistant_messages(body: Mapping[str, Any]) -> int:
    return sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant")


def _blocks(turn: Turn, body: JSON) -> List[Block]:
    if callable(turn) and not isinstance(turn, (Text, ToolUse)):
        turn = turn(body)
    if isinstance(turn, (Text, ToolUse)):
        return [turn]
    blocks = list(turn)
    for b in blocks:
        if not isinstance(b, (Text, ToolUse)):
            raise TypeError(f"script turn holds {b!r}; expected Text or ToolUse")
    return blocks


def _sse(event: str, data: JSON) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


class FakeModel:
    """Threaded loopback server answering ``POST /v1/messages`` from a script.

    Use as a context manager; ``base_url`` goes into ``ANTHROPIC_BASE_URL``.
    ``requests`` holds every request in arrival order, ``errors`` any failure
    inside the server (a script bug shows up there, not as a hung CLI).
    """

    def __init__(self, script: Script, *, side_text: str = SIDE_TEXT) -> None:
        self.script: Tuple[Turn, ...] = tuple(script)
        self.side_text = side_text
        self.requests: List[RecordedRequest] = []
        self.errors: List[str] = []
        self.overruns = 0
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------

    def start(self) -> FakeModel:
        handler = _make_handler(self)
        # Port 0: the OS picks a free port, so parallel runs never collide.
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-model", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeModel:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeModel is not running")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- answering ---------------------------------------------------------

    def _next_id(self, prefix: str) -> str:
        with self._lock:
            return f"{prefix}_fake{next(self._ids):04d}"

    def record(self, req: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(req)

    def classify(self, body: JSON) -> Tuple[str, int | None]:
        """("side", None) for a request without tools, else ("turn", script index)."""
        if not body.get("tools"):
            return "side", None
        return "turn", count_assistant_messages(body)

    def reply_blocks(self, kind: str, index: int | None, body: JSON) -> List[Block]:
        """What to answer; may raise when a scripted function does."""
        if kind == "side" or index is None:
            return [Text(self.side_text)]
        if index >= len(self.script):
            with self._lock:
                self.overruns += 1
            return [Text(OVERRUN_TEXT)]
        return _blocks(self.script[index], body)

    def message_json(self, model: str, blocks: Sequence[Block]) -> JSON:
        """A complete non-streaming Messages API response."""
        content: List[JSON] = []
        for b in blocks:
            if isinstance(b, Text):
                content.append({"type": "text", "text": b.text})
            else:
                content.append(
                    {
                        "type": "tool_use",
                        "id": b.id or self._next_id("toolu"),
                        "name": b.name,
                        "input": dict(b.input),
                    }
                )
        stop = "tool_use" if any(c["type"] == "tool_use" for c in content) else "end_turn"
        return {
            "id": self._next_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": 20},
        }

    @staticmethod
    def sse_stream(message: JSON) -> bytes:
        """The same message as the event sequence the streaming API sends."""
        head = dict(message, content=[], stop_reason=None)
        head["usage"] = {"input_tokens": message["usage"]["input_tokens"], "output_tokens": 1}
        out = [_sse("message_start", {"type": "message_start", "message": head})]
        for i, block in enumerate(message["content"]):
            if block["type"] == "text":
                start: JSON = {"type": "text", "text": ""}
                delta: JSON = {"type": "text_delta", "text": block["text"]}
            else:
                start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
                # One delta carrying the whole input is valid and keeps bytes exact.
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            out.append(
                _sse(
                    "content_block_start", {"type": "content_block_start", "index": i, "content_block": start}
                )
            )
            out.append(
                _sse("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta})
            )
            out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": i}))
        out.append(
            _sse(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                    "usage": {"output_tokens": message["usage"]["output_tokens"]},
                },
            )
        )
        out.append(_sse("message_stop", {"type": "message_stop"}))
        return b"".join(out)


def _make_handler(model: FakeModel) -> type:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the CLI's HTTP client expects
        server_version = "fake-model/1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass  # the recorded requests are the log; keep test output clean

        def _read_body(self) -> Tuple[bytes, JSON | None]:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                parsed = json.loads(raw) if raw else None
            except ValueError:
                parsed = None
            return raw, parsed if isinstance(parsed, dict) else None

        def _send(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("request-id", model._next_id("req"))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _send_json(self, status: int, obj: JSON) -> None:
            self._send(status, json.dumps(obj).encode(), "application/json")

        def _record(self, body: JSON | None, kind: str, turn: int | None = None) -> None:
            url = urlsplit(self.path)
            model.record(
                RecordedRequest(
                    method=self.command,
                    path=url.path,
                    query=url.query,
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=body,
                    kind=kind,
                    turn_index=turn,
                )
            )

        def do_POST(self) -> None:
            _, body = self._read_body()
            path = urlsplit(self.path).path.rstrip("/")
            try:
                if path == "/v1/messages" and body is not None:
                    kind, turn = model.classify(body)
                    self._record(body, kind, turn)  # before the script runs, so a crash is logged too
                    blocks = model.reply_blocks(kind, turn, body)
                    message = model.message_json(str(body.get("model") or "claude-fake"), blocks)
                    if body.get("stream"):
                        self._send(200, FakeModel.sse_stream(message), "text/event-stream")
                    else:
                        self._send_json(200, message)
                elif path == "/v1/messages/count_tokens":
                    self._record(body, "other")
                    size = len(json.dumps(body or {}))
                    self._send_json(200, {"input_tokens": max(1, size // 4)})
                else:
                    self._record(body, "other")
                    self._not_found()
            except Exception:  # noqa: BLE001 -- any script bug must surface, not hang the CLI
                model.errors.append(traceback.format_exc())
                # 400, not 500: the CLI retries server errors with backoff for
                # minutes, but gives up on an invalid request at once.
                self._send_json(
                    400,
                    {
                        "type": "error",
                        "error": {"type": "invalid_request_error", "message": "fake model script raised"},
                    },
                )

        def _not_found(self) -> None:
            self._send_json(
                404,
                {
                    "type": "error",
                    "error": {"type": "not_found_error", "message": "not served by fake model"},
                },
            )

        def do_GET(self) -> None:
            self._record(None, "other")
            if urlsplit(self.path).path in ("", "/"):
                self._send_json(200, {})
            else:
                self._not_found()

        def do_HEAD(self) -> None:
            # Connectivity probes: answer 200 with no body.
            self._record(None, "other")
            self._send(200, b"", "application/json")

    return Handler
