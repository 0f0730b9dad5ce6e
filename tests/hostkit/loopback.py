"""What every scripted model on loopback shares: a threaded HTTP server on 127.0.0.1 at a free
port, started and stopped by `with`, a handler that answers JSON or a chunked event stream,
and the list of errors the test reads afterwards. Standard library only."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, List, Type, TypeVar

L = TypeVar("L", bound="Loopback")


class Handler(BaseHTTPRequestHandler):
    """Quiet, HTTP/1.1; `self.model` is the Loopback that started the server."""

    protocol_version = "HTTP/1.1"
    model: Any

    def log_message(self, *args: Any) -> None:
        pass

    def read_json(self) -> Any:
        """The request body as JSON; {} when it is empty or not JSON."""
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return {}

    def send_json(self, obj: Any, code: int = 200) -> None:
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def start_events(self, *headers: tuple[str, str]) -> None:
        """A server-sent event stream with `Transfer-Encoding: chunked`: Bun-based CLIs reject
        a stream that has neither a length nor chunking."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def send_chunk(self, data: bytes, flush: bool = True) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        if flush:
            self.wfile.flush()

    def end_events(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


class Loopback:
    """`with Model(...) as m: ... m.base_url ...`. A subclass names its `handler`."""

    handler: ClassVar[Type[Handler]] = Handler

    def __init__(self) -> None:
        self.errors: List[str] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def __enter__(self: L) -> L:
        owner = self
        base = self.handler

        class Bound(base):  # type: ignore[valid-type,misc]
            model = owner

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Bound)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return "http://127.0.0.1:%d/v1" % self.port
