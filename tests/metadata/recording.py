"""Stand-ins the metadata tests talk to: the compute metadata API (an HTTP
server recording what it was sent, answering what it is told to), an
HTTP client over a UNIX socket (what a namespace proxy is to the agent),
and the agent's socket (what the proxies forward to)."""
from __future__ import annotations

import http.client
import http.server
import socket
import socketserver
import threading
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Backend:
    """The compute service's metadata API on 127.0.0.1 (the one thing mocked)."""

    status: int = 200
    body: bytes = b""
    seen: list[Seen] = field(default_factory=list)
    arrived: threading.Condition = field(default_factory=threading.Condition)
    server: Any = None

    def start(self, host: str = "127.0.0.1") -> "Backend":
        backend = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                with backend.arrived:
                    backend.seen.append(Seen(self.command, self.path, dict(self.headers), body))
                    backend.arrived.notify_all()
                payload = backend.body or self.path.rsplit("/", 1)[-1].encode()
                self.send_response(backend.status)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = _any

        self.server = http.server.ThreadingHTTPServer((host, 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float = 10) -> None:
        super().__init__("localhost", timeout=timeout)
        self.path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)


def ask(socket_path: str, path: str, headers: dict[str, str], method: str = "GET",
        body: bytes | None = None) -> tuple[int, bytes]:
    conn = UnixConnection(socket_path)
    try:
        conn.request(method, path, body=body, headers=headers)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


class FakeAgent(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """The metadata agent's side of the socket: records headers, answers 200."""

    daemon_threads = True

    def __init__(self, path: str) -> None:
        self.seen: list[dict[str, str]] = []
        agent = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def address_string(self) -> str:
                return "unix"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                agent.seen.append(dict(self.headers))
                body = f"seen {self.path}".encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        super().__init__(path, Handler)
