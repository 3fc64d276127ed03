"""An identity service that only issues tokens: ``POST /v3/auth/tokens`` with
a password answers a token whose catalog lists the compute endpoints given,
so the notifier's Keystone path can be followed without a Keystone.

It records the credentials it was sent; a wrong password gets 401."""
from __future__ import annotations

import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeIdentity:
    def __init__(self, password: str, compute: dict[tuple[str, str], str]) -> None:
        """``compute`` maps (region, interface) to the endpoint URL."""
        self.password = password  # may be changed: the next logins check against it
        self.logins: list[dict[str, Any]] = []
        self.tokens: list[str] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - version discovery
                self._answer(200, {"version": {"id": "v3.14", "status": "stable",
                                               "links": [{"rel": "self", "href": fake.url}]}})

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path.rstrip("/") != "/v3/auth/tokens":
                    self._answer(404, {})
                    return
                user = body["auth"]["identity"]["password"]["user"]
                fake.logins.append(body["auth"])
                if user.get("password") != fake.password:
                    self._answer(401, {"error": {"code": 401, "message": "bad password"}})
                    return
                token = uuid.uuid4().hex
                fake.tokens.append(token)
                catalog = [{"type": "compute", "name": "nova", "id": "c", "endpoints": [
                    {"id": f"{region}-{iface}", "region_id": region, "region": region,
                     "interface": iface, "url": url}
                    for (region, iface), url in compute.items()]}]
                self._answer(201, {"token": {
                    "methods": ["password"], "expires_at": "2999-01-01T00:00:00.000000Z",
                    "issued_at": "2026-01-01T00:00:00.000000Z",
                    "user": {"id": "u", "name": user.get("name"),
                             "domain": {"id": "default", "name": "Default"}},
                    "project": {"id": "p", "name": "service",
                                "domain": {"id": "default", "name": "Default"}},
                    "roles": [{"id": "r", "name": "admin"}], "catalog": catalog}},
                    token)

            def _answer(self, code: int, body: dict[str, Any], token: str | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if token:
                    self.send_header("X-Subject-Token", token)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v3"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
