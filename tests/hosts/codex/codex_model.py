"""A scripted model that speaks the OpenAI Responses API (streaming SSE) on loopback, for
driving the real Codex CLI offline.

Codex sends one `POST /v1/responses` per model turn. The server answers the n-th turn
request with the n-th step of its script (a list of output items: assistant messages,
`custom_tool_call`s to the freeform `apply_patch` tool, `function_call`s to `exec_command`);
once the script is used up, and for any request that is not a turn (background requests
such as memory consolidation), it answers with a short assistant message. Every request
body is kept, so a test reads exactly what the model was shown.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FINAL_TEXT = "done"


def message(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}


def patch_call(patch: str) -> dict[str, Any]:
    """The freeform apply_patch tool, called the way bundled Codex models call it."""
    return {"type": "custom_tool_call", "name": "apply_patch", "input": patch}


def shell_call(cmd: str, workdir: str | None = None) -> dict[str, Any]:
    args: dict[str, Any] = {"cmd": cmd}
    if workdir is not None:
        args["workdir"] = workdir
    return {"type": "function_call", "name": "exec_command", "arguments": json.dumps(args)}


def is_turn(body: dict[str, Any]) -> bool:
    """A request of the session's own turns (not a background one): it offers tools and
    its turn metadata says `request_kind: "turn"` when present."""
    if not body.get("tools"):
        return False
    meta = body.get("client_metadata") or {}
    raw = meta.get("x-codex-turn-metadata") if isinstance(meta, dict) else None
    if isinstance(raw, str):
        try:
            kind = json.loads(raw).get("request_kind")
        except (ValueError, AttributeError):
            kind = None
        if kind is not None and kind != "turn":
            return False
    return True


class ScriptedModel:
    def __init__(self, steps: list[list[dict[str, Any]]]) -> None:
        self.steps = steps
        self.requests: list[dict[str, Any]] = []  # turn requests, in order
        self.other_requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._ids = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return "http://127.0.0.1:%d/v1" % self._server.server_address[1]

    def __enter__(self) -> ScriptedModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next_id(self, prefix: str) -> str:
        self._ids += 1
        return "%s_%06d" % (prefix, self._ids)

    def answer(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        with self._lock:
            if is_turn(body):
                n = len(self.requests)
                self.requests.append(body)
                items = self.steps[n] if n < len(self.steps) else [message(FINAL_TEXT)]
            else:
                self.other_requests.append(body)
                items = [message(FINAL_TEXT)]
            out = []
            for item in items:
                item = dict(item)
                if item["type"] == "message":
                    item.setdefault("id", self._next_id("msg"))
                    item.setdefault("status", "completed")
                else:
                    item.setdefault("id", self._next_id("fc" if item["type"] == "function_call" else "ctc"))
                    item.setdefault("call_id", self._next_id("call"))
                    item.setdefault("status", "completed")
                out.append(item)
            return out

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
                pass

            def do_GET(self) -> None:  # noqa: N802 - stdlib name
                body = b'{"data": [], "models": []}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:  # noqa: N802 - stdlib name
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw.decode("utf-8")) if raw else {}
                except ValueError:
                    body = {}
                items = model.answer(body)
                rid = model._next_id("resp")
                events: list[tuple[str, dict[str, Any]]] = [
                    ("response.created", {"type": "response.created", "response": {"id": rid}}),
                ]
                for i, item in enumerate(items):
                    events.append(("response.output_item.added",
                                   {"type": "response.output_item.added", "output_index": i, "item": item}))
                    events.append(("response.output_item.done",
                                   {"type": "response.output_item.done", "output_index": i, "item": item}))
                usage = {
                    "input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                    "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15,
                }
                events.append(("response.completed",
                               {"type": "response.completed", "response": {"id": rid, "usage": usage}}))
                data = "".join("event: %s\ndata: %s\n\n" % (name, json.dumps(ev)) for name, ev in events).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler
