"""An HTTP member for the load-balancer tests: ``python -m tests.lbhaproxy.backend
NAME PORT DIR`` answers ``/`` and any path with its name, ``/health`` with 200
(503 while ``DIR/NAME.sick`` exists) and ``/big`` with a slow download."""
from __future__ import annotations

import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

BIG_CHUNKS = 40  # of 64 KiB, one every BIG_PAUSE seconds
BIG_PAUSE = 0.1
CHUNK = 64 * 1024


def main() -> None:
    name, port, state = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 - the standard library's name
            if self.path == "/health":
                sick = (state / f"{name}.sick").exists()
                self._answer(503 if sick else 200, b"sick" if sick else b"ok")
            elif self.path == "/big":
                self.send_response(200)
                self.send_header("Content-Length", str(BIG_CHUNKS * CHUNK))
                self.end_headers()
                for _ in range(BIG_CHUNKS):
                    self.wfile.write(b"x" * CHUNK)
                    self.wfile.flush()
                    time.sleep(BIG_PAUSE)
            else:
                self._answer(200, f"{name} {self.path}".encode())

        def _answer(self, code: int, body: bytes) -> None:
            self.send_response(code)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    class Server(ThreadingHTTPServer):
        def handle_error(self, request: object, client_address: object) -> None:
            pass  # health checks and the load balancer close connections early

    Server(("0.0.0.0", port), Handler).serve_forever()


if __name__ == "__main__":
    main()
