"""The all-in-one's HTTP server: threads in this process, not forked workers.

granian serves the production API from forked workers; in the all-in-one
a forked worker would lose the in-process bus (its casts to the agents
would go nowhere), so the API is served from threads of the one process.
The standard library's WSGI server is enough for one developer's cloud.
Each connection has its own thread, so a stalled client starves no one
else; its socket's timeout bounds how long it keeps that thread.
"""
from __future__ import annotations

import socketserver
import sys
import threading
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer


class _ThreadingServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that timed out is not an error of ours to print."""
        if isinstance(sys.exc_info()[1], TimeoutError):
            return
        super().handle_error(request, client_address)


class _Handler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Requests are logged by the app's access log (``access_log``)."""


def _handler(read_timeout: float) -> type[WSGIRequestHandler]:
    """The handler class with sockets that time out: a client silent for
    ``read_timeout`` while sending its headers or its body loses the
    connection (a body's wait ends in the app's 408)."""
    return type("_TimedHandler", (_Handler,), {"timeout": read_timeout})


class ThreadedWsgi:
    def __init__(self, app: Any, host: str, port: int, read_timeout: float = 30) -> None:
        self.server = _ThreadingServer((host, port), _handler(read_timeout))
        self.server.set_app(app)
        self.thread = threading.Thread(target=self.server.serve_forever, name="http",
                                       daemon=True)

    def start(self) -> "ThreadedWsgi":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(10)
