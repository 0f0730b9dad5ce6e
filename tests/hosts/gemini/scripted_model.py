"""A scripted Gemini-API model on loopback, for driving the real Gemini CLI offline.

Gemini CLI 0.61.0 talks to `GOOGLE_GEMINI_BASE_URL` (shared reference, measured-codex-gemini
B1): one `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` per agent turn, answered
with SSE `data:` events holding `candidates[0].content.parts` (text or functionCall parts);
side calls (`:generateContent` with a JSON schema: the next-speaker check, the router, the
edit fixer) and `:countTokens`. This server answers each agent turn from a script, in order,
records every request, and answers side calls with a neutral JSON object.

Standard library only.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional, Union

import loopback


@dataclass
class Text:
    text: str


@dataclass
class Call:
    """A functionCall part: the model asks the CLI to run tool `name` with `args`."""

    name: str
    args: Dict[str, Any]


Part = Union[Text, Call]


@dataclass
class Turn:
    """One model answer. `before` runs (in the server thread) just before the answer is sent,
    with the request that asked for it: the previous tools and their hooks have finished."""

    parts: List[Part]
    before: Optional[Callable[[Request], None]] = None


@dataclass
class Request:
    path: str
    body: Dict[str, Any]

    @property
    def kind(self) -> str:
        if ":streamGenerateContent" in self.path:
            return "turn"
        if ":generateContent" in self.path:
            return "side"
        if ":countTokens" in self.path:
            return "count"
        return "other"

    def function_responses(self) -> List[Dict[str, Any]]:
        """The functionResponse parts of the newest user content (the previous tools' results)."""
        contents = self.body.get("contents") or []
        for content in reversed(contents):
            parts = content.get("parts") or []
            found = [p["functionResponse"] for p in parts if isinstance(p, dict) and "functionResponse" in p]
            if found:
                return found
            if content.get("role") == "user":
                return []
        return []

    def text(self) -> str:
        """Every text part of the request (system instruction and contents) joined."""
        out: List[str] = []

        def walk(value: Any) -> None:
            if isinstance(value, dict):
                for k, v in value.items():
                    if k == "text" and isinstance(v, str):
                        out.append(v)
                    else:
                        walk(v)
            elif isinstance(value, list):
                for v in value:
                    walk(v)

        walk(self.body.get("systemInstruction"))
        walk(self.body.get("contents"))
        return "\n".join(out)


def _part(p: Part) -> Dict[str, Any]:
    if isinstance(p, Text):
        return {"text": p.text}
    return {"functionCall": {"name": p.name, "args": p.args}}


USAGE = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}


def _side_answer(body: Dict[str, Any]) -> Dict[str, Any]:
    """A neutral answer to a JSON-schema side call: the user speaks next, nothing to fix."""
    config = body.get("generationConfig") or {}
    schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
    props = schema.get("properties") if isinstance(schema, dict) else None
    answer: Dict[str, Any] = {}
    for key, spec in (props or {}).items():
        kind = spec.get("type") if isinstance(spec, dict) else None
        if key == "next_speaker":
            answer[key] = "user"
        elif key == "noChangesRequired":
            answer[key] = True
        elif kind in ("number", "integer", "NUMBER", "INTEGER"):
            answer[key] = 1
        elif kind in ("boolean", "BOOLEAN"):
            answer[key] = False
        else:
            enum = spec.get("enum") if isinstance(spec, dict) else None
            answer[key] = enum[0] if enum else ""
    return {
        "candidates": [{"content": {"role": "model", "parts": [{"text": json.dumps(answer)}]}, "finishReason": "STOP"}],
        "usageMetadata": USAGE,
    }


@dataclass
class ScriptedModel:
    script: List[Turn]
    # Answers for side calls (`:generateContent` with a JSON schema) whose schema has this
    # key, e.g. {"search": {...}} for Gemini's edit fixer; other side calls get a neutral one.
    side: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    requests: List[Request] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)
    overruns: int = 0
    served: int = 0

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        model = self

        class Handler(loopback.Handler):  # quiet, HTTP/1.1
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = self.read_json()
                req = Request(self.path, body if isinstance(body, dict) else {})
                try:
                    model.handle(self, req)
                except Exception as exc:  # noqa: BLE001 - reported to the test
                    model.errors.append("%s: %r" % (self.path, exc))
                    self._send(500, "application/json", b'{"error": {"message": "scripted model failed"}}')

            def do_GET(self) -> None:  # noqa: N802
                self._send(404, "application/json", b"{}")

            def _send(self, code: int, ctype: str, data: bytes) -> None:
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._handler = Handler
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return "http://127.0.0.1:%d" % self.server.server_address[1]

    def __enter__(self) -> ScriptedModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def turns(self) -> List[Request]:
        return [r for r in self.requests if r.kind == "turn"]

    def side_answer(self, body: Dict[str, Any]) -> Dict[str, Any]:
        config = body.get("generationConfig") or {}
        schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
        props = schema.get("properties") if isinstance(schema, dict) else None
        for key, answer in self.side.items():
            if isinstance(props, dict) and key in props:
                return {"candidates": [{"content": {"role": "model", "parts": [{"text": json.dumps(answer)}]},
                                        "finishReason": "STOP"}], "usageMetadata": USAGE}
        return _side_answer(body)

    def handle(self, http: Any, req: Request) -> None:
        with self._lock:
            self.requests.append(req)
        if req.kind == "count":
            http._send(200, "application/json", b'{"totalTokens": 10}')
            return
        if req.kind == "side":
            http._send(200, "application/json", json.dumps(self.side_answer(req.body)).encode())
            return
        if req.kind != "turn":
            http._send(404, "application/json", b"{}")
            return
        with self._lock:
            index = self.served
            self.served += 1
        if index < len(self.script):
            turn = self.script[index]
        else:
            self.overruns += 1
            turn = Turn([Text("(the script has ended)")])
        if turn.before is not None:
            turn.before(req)
        event = {
            "candidates": [{"content": {"role": "model", "parts": [_part(p) for p in turn.parts]}, "finishReason": "STOP"}],
            "usageMetadata": USAGE,
        }
        data = b"data: " + json.dumps(event).encode("utf-8") + b"\r\n\r\n"
        http.send_response(200)
        http.send_header("Content-Type", "text/event-stream")
        http.send_header("Content-Length", str(len(data)))
        http.end_headers()
        http.wfile.write(data)
