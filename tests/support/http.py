"""A tiny threaded HTTP/1.1 server on loopback, for protocol-level tests of HTTP clients.

Each server runs in a daemon thread on ``127.0.0.1`` and a free port. Handlers
get the server's ``state`` (a :class:`ServerState` subclass the test can
change between requests) and helpers to answer JSON, chunked streams and
errors. Sleeps wait on ``state.stop`` so closing the server never waits for
a slow handler.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Generic, TypeVar
from urllib.parse import urlsplit


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class ServerState:
    """Knobs shared by the fake servers; tests set them, handlers read them."""

    delay: float = 0.0  # seconds to wait before answering
    fail_status: int | None = None  # answer this status instead...
    fail_times: int | None = None  # ...this many times (None: always)
    fail_body: Any = None  # JSON body of the failure (default: OpenAI-style error)
    retry_after: str | None = None  # Retry-After header on failures
    api_key: str | None = None  # when set, require "Authorization: Bearer <api_key>"
    requests: list[Recorded] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def take_failure(self) -> bool:
        if self.fail_status is None:
            return False
        if self.fail_times is None:
            return True
        if self.fail_times > 0:
            self.fail_times -= 1
            return True
        return False

    def wait(self, seconds: float) -> None:
        if seconds > 0:
            self.stop.wait(seconds)


S = TypeVar("S", bound=ServerState)


class _Server(ThreadingHTTPServer, Generic[S]):
    daemon_threads = True
    state: S


class JsonHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server[Any]

    @property
    def state(self) -> Any:
        return self.server.state

    @property
    def route(self) -> str:
        """The request path without query string or trailing slash."""
        return urlsplit(self.path).path.rstrip("/") or "/"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def handle(self) -> None:
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            # the client gave up (e.g. its timeout fired) while we were answering
            self.close_connection = True

    # ------------------------------------------------------------- reading
    def read_body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        self.state.requests.append(Recorded(self.command, self.path, dict(self.headers.items()), body))
        return body

    # ------------------------------------------------------------- writing
    def send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(obj).encode()
        self.send_raw(status, data, "application/json", headers)

    def send_raw(
        self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def start_chunked(self, status: int, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        self.wfile.flush()

    def send_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def end_chunked(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def abort(self) -> None:
        """Drop the connection mid-response."""
        self.close_connection = True
        self.wfile.flush()
        self.connection.close()

    # ------------------------------------------------------------ behaviour
    def error_body(self, status: int) -> Any:
        return {
            "error": {"message": f"simulated failure (HTTP {status})", "type": "server_error", "code": None}
        }

    def preflight(self) -> bool:
        """Apply auth, delay and scripted failures; True when the handler should go on."""
        st = self.state
        if st.api_key is not None and self.headers.get("Authorization") != f"Bearer {st.api_key}":
            self.send_json(
                401,
                {
                    "error": {
                        "message": "Incorrect API key provided",
                        "type": "invalid_request_error",
                        "code": "invalid_api_key",
                    }
                },
            )
            return False
        st.wait(st.delay)
        if st.take_failure():
            status = st.fail_status
            assert status is not None
            headers = {"Retry-After": st.retry_after} if st.retry_after is not None else None
            body = st.fail_body if st.fail_body is not None else self.error_body(status)
            if isinstance(body, bytes):
                self.send_raw(status, body, "text/html", headers)
            else:
                self.send_json(status, body, headers)
            return False
        return True


H = TypeVar("H", bound=JsonHandler)


class LoopbackServer(Generic[S]):
    """Runs ``handler`` with ``state`` on ``127.0.0.1:<free port>`` until closed (a context manager)."""

    def __init__(self, handler: type[JsonHandler], state: S) -> None:
        self.state = state
        self._server: _Server[S] = _Server(("127.0.0.1", 0), handler)
        self._server.state = state
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def reset(self, state: S) -> S:
        """Swap in a fresh state (between tests); returns it."""
        self.state.stop.set()
        self.state = state
        self._server.state = state
        return state

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self.state.stop.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> LoopbackServer[S]:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
