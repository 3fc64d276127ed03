"""Listing routers and floating IPs costs the same statements for 3 or 60.

Gateways, their addresses, routes and tags load in one query per page
(per ``store.CHUNK`` ids), never per row.
"""
from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.inprocess import CountingApp

ADMIN = uuid.uuid4().hex
EXTRA = ("quota_router = -1\nquota_floatingip = -1\n"
         "[DEFAULT]\nservice_plugins = router\n")


class App(CountingApp):
    def call(self, method: str, path: str, project: str, **kw: Any) -> Any:
        headers = {"X-Project-Id": project, "X-User-Id": "u", "X-Roles": "admin"}
        result = self.client.simulate_request(method, path, headers=headers, **kw)
        assert result.status_code < 300, result.text
        return result.json

    def counted_as(self, path: str, project: str) -> tuple[int, Any]:
        headers = {"X-Project-Id": project, "X-User-Id": "u", "X-Roles": "member,reader"}
        return self.counted("GET", path, headers=headers)


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    yield App(tmp_path_factory.mktemp("l3_counts"), extra=EXTRA)


def _project_with(app: App, routers: int, i: int) -> str:
    project = uuid.uuid4().hex
    ext = app.call("POST", "/v2.0/networks", ADMIN, json={"network": {
        "name": "ext", "router:external": True}})["network"]["id"]
    app.call("POST", "/v2.0/subnets", ADMIN, json={"subnet": {
        "network_id": ext, "ip_version": 4, "cidr": f"172.{16 + i}.0.0/16"}})
    for n in range(routers):
        router = app.call("POST", "/v2.0/routers", ADMIN, json={"router": {
            "name": f"r{n}", "project_id": project,
            "external_gateway_info": {"network_id": ext}}})["router"]["id"]
        app.call("PUT", f"/v2.0/routers/{router}/tags/t{n}", ADMIN)
        app.call("POST", "/v2.0/floatingips", ADMIN, json={"floatingip": {
            "floating_network_id": ext, "project_id": project}})
    return project


def test_routers_and_floating_ips_list_in_constant_statements(app: App) -> None:
    few_project = _project_with(app, 3, 0)
    many_project = _project_with(app, 60, 1)
    for path, key in (("/v2.0/routers", "routers"), ("/v2.0/floatingips", "floatingips")):
        few, small = app.counted_as(path, few_project)
        many, big = app.counted_as(path, many_project)
        assert len(small[key]) == 3 and len(big[key]) == 60
        assert many == few, (path, few, many)
        assert few <= 10, (path, few)
    _, body = app.counted_as("/v2.0/routers", many_project)
    assert all(r["external_gateway_info"]["external_fixed_ips"] for r in body["routers"])
