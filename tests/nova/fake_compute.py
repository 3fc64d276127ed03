"""A compute API that only knows ``POST /v2.1/os-server-external-events``:
records each batch it takes, and can be told to fail the next requests."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeCompute:
    def __init__(self) -> None:
        self.batches: list[list[dict[str, Any]]] = []
        self.headers: list[dict[str, str]] = []
        self.failures = 0  # answer 500 to this many requests first
        self.refused = 0  # requests answered 500
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with fake.lock:
                    if self.path != "/v2.1/os-server-external-events":
                        self._answer(404, {})
                        return
                    if fake.failures:
                        fake.failures -= 1
                        fake.refused += 1
                        self._answer(500, {"computeFault": {"message": "down"}})
                        return
                    fake.batches.append(body["events"])
                    fake.headers.append(dict(self.headers))
                self._answer(200, {"events": [{**e, "code": 200, "status": e.get(
                    "status", "completed")} for e in body["events"]]})

            def _answer(self, code: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v2.1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def events(self) -> list[dict[str, Any]]:
        with self.lock:
            return [e for batch in self.batches for e in batch]

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
