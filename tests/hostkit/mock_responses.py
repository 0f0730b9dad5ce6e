"""A scripted OpenAI Responses-API model on loopback (streamed SSE, chunked), for the hosts that
switch to that wire for codex models: Copilot CLI's freeform `apply_patch` arrives only there.

Steps are lists of output items, or functions of the request that return one (called when the
request arrives); `patch_call(text)` is the freeform tool call, `function_call(name, args)` a
function tool's. Turn n (a request that offers tools) gets step n; past the script, and for
side requests, a short message. The stream carries the events the Copilot CLI reads (created, in_progress, item added
and done, the freeform input delta and done, text delta, completed with the output and usage).
Every turn request body is kept. Standard library only.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, Sequence, Union

import loopback

DONE = "done"
Items = List[Dict[str, Any]]
Step = Union[Items, Callable[[Dict[str, Any]], Items]]


def message(text: str) -> Dict[str, Any]:
    return {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}


def patch_call(patch: str) -> Dict[str, Any]:
    return {"type": "custom_tool_call", "name": "apply_patch", "input": patch}


def function_call(name: str, arguments: Dict[str, Any]) -> Dict[str, Any]:
    """A function tool call (a read, say) on the same wire."""
    return {"type": "function_call", "name": name, "arguments": json.dumps(arguments)}


class _Handler(loopback.Handler):
    model: ResponsesModel

    def do_GET(self) -> None:  # noqa: N802
        self.send_json({"data": [{"id": self.model.model, "object": "model"}]})

    def do_POST(self) -> None:  # noqa: N802
        body = self.read_json()
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
        self.start_events()
        for seq, (name, event) in enumerate(events):
            event["sequence_number"] = seq
            self.send_chunk(("event: %s\ndata: %s\n\n" % (name, json.dumps(event))).encode(), flush=False)
        self.end_events()


class ResponsesModel(loopback.Loopback):
    handler = _Handler

    def __init__(self, steps: Sequence[Step], model: str = "gpt-5-codex") -> None:
        super().__init__()
        self.steps = steps
        self.model = model
        self.requests: List[Dict[str, Any]] = []
        self._n = 0

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
                step = self.steps[k] if k < len(self.steps) else [message(DONE)]
                items = step(body) if callable(step) else step
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
