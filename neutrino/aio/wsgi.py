"""The all-in-one's HTTP server: threads in this process, not forked workers.

granian serves the production API from forked workers; in the all-in-one
a forked worker would lose the in-process bus (its casts to the agents
would go nowhere), so the API is served from threads of the one process.
The standard library's WSGI server is enough for one developer's cloud.
"""
from __future__ import annotations

import socketserver
import threading
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer


class _ThreadingServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


class _Handler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Requests are logged by the app's access log (``access_log``)."""


class ThreadedWsgi:
    def __init__(self, app: Any, host: str, port: int) -> None:
        self.server = _ThreadingServer((host, port), _Handler)
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
