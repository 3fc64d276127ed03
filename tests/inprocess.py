"""An API served in-process, counting the SQL statements each request sends.

For tests that assert on statement counts (no N+1 queries): no HTTP
server, so a count covers exactly one request. Quotas are unlimited so the
data a test builds is never refused.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from falcon import testing

from neutrino.api.app import build_falcon
from neutrino.db import migrate
from neutrino.service import build_api, make_conf
from tests.sql_events import listen_all, remove_all


class CountingApp:
    def __init__(self, tmp: Path, extra: str = "", url: str | None = None) -> None:
        url = url or f"sqlite:///{tmp / 'counts.sqlite'}"
        migrate.upgrade(url)
        conf_file = tmp / "n.conf"
        conf_file.write_text(f"[DEFAULT]\nauth_strategy = noauth\n[database]\nconnection = {url}\n"
                             f"[quotas]\ndefault_quota = -1\nquota_network = -1\n"
                             f"quota_port = -1\nquota_subnet = -1\nquota_rbac_policy = -1\n"
                             f"{extra}")
        self.api = build_api(make_conf(["--config-file", str(conf_file)]))
        self.client = testing.TestClient(build_falcon(self.api))
        self.statements = 0
        listen_all(self.api.plugin.db, "before_cursor_execute", self._count)

    def _count(self, *args: Any) -> None:
        self.statements += 1

    def recorded(self, path: str, headers: dict[str, str], method: str = "GET",
                 json: Any = None) -> tuple[list[str], Any]:
        """The statements a request (a GET unless told) sends, and its JSON body."""
        seen: list[str] = []

        def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
            seen.append(statement)
        listen_all(self.api.plugin.db, "before_cursor_execute", record)
        try:
            result = self.client.simulate_request(method, path, headers=headers, json=json)
        finally:
            remove_all(self.api.plugin.db, "before_cursor_execute", record)
        assert result.status_code < 300, result.text
        return seen, result.json

    def counted(self, method: str, path: str, **kw: Any) -> tuple[int, Any]:
        """Statements sent while serving one request, and its JSON body."""
        self.statements = 0
        result = self.client.simulate_request(method, path, **kw)
        assert result.status_code < 300, result.text
        return self.statements, result.json
