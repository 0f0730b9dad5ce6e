"""A scripted OpenAI chat-completions model on loopback, shared by the host suites whose CLI
speaks that API (Qwen Code, Factory droid, Copilot CLI, opencode, Cline, OpenClaw).

The script is a list of turns. Which turn answers a request is the number of assistant
messages the request already carries (the CLI resends the whole conversation each time), so
one server serves any number of sequential requests of one session. A turn is a list of tool
calls `(name, arguments)` sent as parallel calls in one message, a plain text, or a function
of the request; a call's arguments are a dict (sent as JSON) or a string (sent as it is).
Requests without `tools` are side calls (titles, summaries): they get a short
text and never consume a turn. Every request body is kept for the test to read.

Streams are server-sent events, chunked (see loopback.py). Standard library only.
"""

from __future__ import annotations

import json
import time
from typing import Any, Callable, Dict, List, Sequence, Tuple, Union

import loopback

MODEL = "mock-model"
SIDE_TEXT = "Scripted session"
DONE_TEXT = "[mock: script finished]"

Call = Tuple[str, Union[Dict[str, Any], str]]
Turn = Union[str, Sequence[Call], Callable[[Dict[str, Any]], Union[str, Sequence[Call]]]]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return "" if content is None else json.dumps(content)


def _arguments(args: Any) -> str:
    """A call's `arguments` as sent: JSON of a dict, or a string as it is (a freeform tool's
    raw input, such as droid's ApplyPatch, which takes the arguments text as the patch)."""
    return args if isinstance(args, str) else json.dumps(args)


class _Handler(loopback.Handler):
    model: MockModel

    def do_GET(self) -> None:  # noqa: N802
        if self.path.rstrip("/").endswith("/models"):
            self.send_json({"object": "list", "data": [{"id": self.model.model, "object": "model", "owned_by": "mock"}]})
        else:
            self.send_json({"error": {"message": "not found"}}, 404)

    def do_POST(self) -> None:  # noqa: N802
        body = self.read_json()
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self.model.errors.append("unsupported path %s" % self.path)
            self.send_json({"error": {"message": "unsupported"}}, 404)
            return
        try:
            reply = self.model.reply(body)
        except Exception as exc:  # noqa: BLE001 - reported to the test, not to the CLI
            self.model.errors.append("script error: %r" % (exc,))
            reply = "[mock: script error]"
        calls = [] if isinstance(reply, str) else [(self.model.next_id(), n, a) for n, a in reply]
        text = reply if isinstance(reply, str) else None
        if body.get("stream"):
            self._stream(text, calls)
        else:
            self.send_json(self._completion(text, calls))

    def _base(self, kind: str) -> Dict[str, Any]:
        return {"id": "chatcmpl-mock", "object": kind, "created": int(time.time()), "model": self.model.model}

    def _completion(self, text: str | None, calls: List[Tuple[str, str, Dict[str, Any]]]) -> Dict[str, Any]:
        msg: Dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            msg["tool_calls"] = [
                {"id": cid, "type": "function", "function": {"name": n, "arguments": _arguments(a)}} for cid, n, a in calls
            ]
        out = self._base("chat.completion")
        out["choices"] = [{"index": 0, "message": msg, "finish_reason": "tool_calls" if calls else "stop"}]
        out["usage"] = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        return out

    def _stream(self, text: str | None, calls: List[Tuple[str, str, Dict[str, Any]]]) -> None:
        self.start_events(("Cache-Control", "no-cache"))

        def send(obj: Any) -> None:
            self.send_chunk(("data: %s\n\n" % (obj if isinstance(obj, str) else json.dumps(obj))).encode())

        def chunk(delta: Dict[str, Any], finish: str | None = None) -> Dict[str, Any]:
            c = self._base("chat.completion.chunk")
            c["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish}]
            return c

        send(chunk({"role": "assistant", "content": ""}))
        if calls:
            for i, (cid, name, args) in enumerate(calls):
                send(chunk({"tool_calls": [{"index": i, "id": cid, "type": "function", "function": {"name": name, "arguments": ""}}]}))
                send(chunk({"tool_calls": [{"index": i, "function": {"arguments": _arguments(args)}}]}))
            send(chunk({}, "tool_calls"))
        else:
            send(chunk({"content": text or ""}))
            send(chunk({}, "stop"))
        usage = self._base("chat.completion.chunk")
        usage["choices"] = []
        usage["usage"] = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        send(usage)
        send("[DONE]")
        self.end_events()


class MockModel(loopback.Loopback):
    """`with MockModel(script) as m: ... m.base_url ...`; `m.requests` holds every body."""

    handler = _Handler

    def __init__(self, script: Sequence[Turn], model: str = MODEL) -> None:
        super().__init__()
        self.script = list(script)
        self.model = model
        self.requests: List[Dict[str, Any]] = []
        self.turn_requests: List[Dict[str, Any]] = []
        self._ids = 0

    # -- what the model was shown ---------------------------------------------------------------

    def tool_messages(self) -> List[str]:
        """The content of every tool result the CLI sent, in the last turn request (which
        carries the whole conversation)."""
        if not self.turn_requests:
            return []
        return [_text(m.get("content")) for m in self.turn_requests[-1].get("messages") or [] if m.get("role") == "tool"]

    def all_text(self) -> str:
        """Every message of every turn request, as one string (for 'the model saw X')."""
        return "\n".join(json.dumps(r.get("messages"), ensure_ascii=False) for r in self.turn_requests)

    # -- answering --------------------------------------------------------------------------------

    def reply(self, body: Dict[str, Any]) -> Union[str, List[Call]]:
        with self._lock:
            self.requests.append(body)
            if not body.get("tools"):
                return SIDE_TEXT
            self.turn_requests.append(body)
            index = sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant")
        if index >= len(self.script):
            return DONE_TEXT
        turn = self.script[index]
        if callable(turn):
            turn = turn(body)
        return turn if isinstance(turn, str) else list(turn)

    def next_id(self) -> str:
        with self._lock:
            self._ids += 1
            return "call_%d_%d" % (self._ids, int(time.time() * 1000) % 100000)
