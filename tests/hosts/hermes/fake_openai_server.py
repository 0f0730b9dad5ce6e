"""A scripted OpenAI-compatible model on loopback, for a full headless Hermes run.

    python fake_openai_server.py --log <requests.jsonl> --port-file <file> \
        --memory-path <index> --other-path <file>

Stateless: each chat request is answered from the messages it carries.
- no `tools` in the request (Hermes's side calls: titles and the like): the text "ok";
- no tool result yet: call write_file on --memory-path with 300 index lines;
- one tool result: call write_file on --other-path with "hello\\n";
- two or more: a final text quoting every tool result it was sent.
Streams (SSE) when asked, as Hermes does. Every request is appended to --log as one JSON
line; GET .../models lists the one model. Stops itself after --max-seconds.
"""

import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "fake-model"
LOCK = threading.Lock()
SCRIPT = {}


def reply_for(req):
    if not req.get("tools"):
        return {"content": "ok"}
    results = [m for m in req.get("messages") or [] if m.get("role") == "tool"]
    if not results:
        content = "".join("- [note %d](note-%d.md) - hook %d\n" % (i, i, i) for i in range(300))
        return {"call": ("call_mem_1", "write_file", {"path": SCRIPT["memory_path"], "content": content})}
    if len(results) == 1:
        return {"call": ("call_other_2", "write_file", {"path": SCRIPT["other_path"], "content": "hello\n"})}
    quoted = " || ".join(str(m.get("content"))[:600] for m in results)
    return {"content": "DONE. Tool results I saw: " + quoted}


def _base(kind):
    return {"id": "chatcmpl-%d" % int(time.time() * 1000), "object": kind, "created": int(time.time()), "model": MODEL}


def completion(reply):
    msg = {"role": "assistant", "content": reply.get("content")}
    finish = "stop"
    if reply.get("call"):
        cid, name, args = reply["call"]
        msg["content"] = None
        msg["tool_calls"] = [{"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]
        finish = "tool_calls"
    out = _base("chat.completion")
    out["choices"] = [{"index": 0, "message": msg, "finish_reason": finish}]
    out["usage"] = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    return out


def chunks(reply):
    def chunk(delta, finish=None):
        c = _base("chat.completion.chunk")
        c["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish}]
        return c

    out = [chunk({"role": "assistant", "content": ""})]
    if reply.get("call"):
        cid, name, args = reply["call"]
        out.append(chunk({"tool_calls": [{"index": 0, "id": cid, "type": "function", "function": {"name": name, "arguments": ""}}]}))
        out.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": json.dumps(args)}}]}))
        out.append(chunk({}, "tool_calls"))
    else:
        out.append(chunk({"content": reply["content"]}))
        out.append(chunk({}, "stop"))
    usage = _base("chat.completion.chunk")
    usage["choices"] = []
    usage["usage"] = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    out.append(usage)
    return out


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _json(self, obj, code=200):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _log(self, rec):
        rec["t"] = time.time()
        with LOCK, open(self.server.log_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(rec) + "\n")

    def do_GET(self):
        self._log({"method": "GET", "path": self.path})
        if self.path.rstrip("/").endswith("/models"):
            return self._json({"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "test", "context_length": 131072}]})
        self._json({"error": {"message": "not found"}}, 404)

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            req = json.loads(raw or b"{}")
        except ValueError:
            req = {}
        self._log({"method": "POST", "path": self.path, "body": req})
        if not self.path.rstrip("/").endswith("/chat/completions"):
            return self._json({"error": {"message": "unsupported"}}, 404)
        reply = reply_for(req)
        if not req.get("stream"):
            return self._json(completion(reply))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for c in chunks(reply):
            self.wfile.write(("data: %s\n\n" % json.dumps(c)).encode())
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--log", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--memory-path", required=True)
    ap.add_argument("--other-path", required=True)
    ap.add_argument("--max-seconds", type=float, default=120)
    a = ap.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    server.log_path = a.log
    SCRIPT.update(memory_path=a.memory_path, other_path=a.other_path)
    with open(a.port_file, "w", encoding="utf-8") as f:
        f.write(str(server.server_address[1]))
    timer = threading.Timer(a.max_seconds, server.shutdown)
    timer.daemon = True
    timer.start()
    server.serve_forever()


if __name__ == "__main__":
    main()
