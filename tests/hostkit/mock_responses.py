"""A scripted OpenAI Responses-API model on loopback (streamed SSE, chunked), for the hosts that
switch to that wire for codex models: Copilot CLI's freeform `apply_patch` arrives only there.

Steps are lists of output items; `patch_call(text)` is the freeform tool call. Turn n (a
request that offers tools) gets step n; past the script, and for side requests, a short
message. The stream carries the events the Copilot CLI reads (created, in_progress, item added
and done, the freeform input delta and done, text delta, completed with the output and usage).
Every turn request body is kept. Standard library only.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List

DONE = "done"


def message(text: str) -> Dict[str, Any]:
    return {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}


def patch_call(patch: str) -> Dict[str, Any]:
    return {"type": "custom_tool_call", "name": "apply_patch", "input": patch}


class ResponsesModel:
    def __init__(self, steps: List[List[Dict[str, Any]]], model: str = "gpt-5-codex") -> None:
        self.steps = steps
        self.model = model
        self.requests: List[Dict[str, Any]] = []
        self._n = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def __enter__(self) -> ResponsesModel:
        owner = self

        class Handler(_Handler):
            model = owner

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return "http://127.0.0.1:%d/v1" % self._server.server_address[1]

    def tool_outputs(self) -> List[str]:
        """The tool results the CLI sent back, from the last turn request."""
        if not self.requests:
            return []
        items = self.requests[-1].get("input") or []
        return [str(i.get("output")) for i in items if isinstance(i, dict) and i.get("type", "").endswith("_call_output")]

    def items_for(self, body: Dict[str, Any]) -> List[Dict[str, Any]]:
        with self._lock:
            if body.get("tools"):
                self.requests.append(body)
                k = len(self.requests) - 1
                items = self.steps[k] if k < len(self.steps) else [message(DONE)]
            else:
                items = [message(DONE)]
            out = []
            for item in items:
                item = dict(item)
                self._n += 1
                item.setdefault("id", "item_%d" % self._n)
                item.setdefault("status", "completed")
                if item["type"] != "message":
                    item.setdefault("call_id", "call_%d" % self._n)
                out.append(item)
            return out


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    model: ResponsesModel

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        body = json.dumps({"data": [{"id": self.model.model, "object": "model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            body = {}
        out = self.model.items_for(body if isinstance(body, dict) else {})
        rid = "resp_%d" % id(out)
        base = {"id": rid, "object": "response", "created_at": 1, "model": self.model.model, "status": "in_progress", "output": []}
        events: List[tuple[str, Dict[str, Any]]] = [
            ("response.created", {"type": "response.created", "response": base}),
            ("response.in_progress", {"type": "response.in_progress", "response": base}),
        ]
        for i, item in enumerate(out):
            added = dict(item)
            if item["type"] == "custom_tool_call":
                added.update(input="", status="in_progress")
            events.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": i, "item": added}))
            if item["type"] == "custom_tool_call":
                events.append(("response.custom_tool_call_input.delta", {"type": "response.custom_tool_call_input.delta",
                               "output_index": i, "item_id": item["id"], "delta": item["input"]}))
                events.append(("response.custom_tool_call_input.done", {"type": "response.custom_tool_call_input.done",
                               "output_index": i, "item_id": item["id"], "input": item["input"]}))
            elif item["type"] == "message":
                events.append(("response.output_text.delta", {"type": "response.output_text.delta", "output_index": i,
                               "item_id": item["id"], "content_index": 0, "delta": item["content"][0]["text"]}))
            events.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": i, "item": item}))
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
        events.append(("response.completed", {"type": "response.completed", "response": dict(base, status="completed", output=out, usage=usage)}))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for seq, (name, event) in enumerate(events):
            event["sequence_number"] = seq
            data = ("event: %s\ndata: %s\n\n" % (name, json.dumps(event))).encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
