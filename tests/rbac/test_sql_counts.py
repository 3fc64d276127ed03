"""Sharing costs one SQL condition, not a query per row.

A member of a project that a network is shared with lists 1,000 of its
ports and the networks/subnets it can see: the statement count must not
grow with the rows (the RBAC check is an ``IN`` over indexed entries).
"""
from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from neutrino.plugins.store import CHUNK
from tests.inprocess import CountingApp

OWNER = uuid.uuid4().hex
TARGET = uuid.uuid4().hex


class App(CountingApp):
    def call(self, method: str, path: str, project: str, **kw: Any) -> Any:
        headers = {"X-Project-Id": project, "X-User-Id": "u", "X-Roles": "member,reader"}
        result = self.client.simulate_request(method, path, headers=headers, **kw)
        assert result.status_code < 300, result.text
        return result.json

    def counted_as(self, path: str, project: str) -> tuple[int, Any]:
        headers = {"X-Project-Id": project, "X-User-Id": "u", "X-Roles": "member,reader"}
        return self.counted("GET", path, headers=headers)


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    yield App(tmp_path_factory.mktemp("rbac_counts"))


def _shared_network(app: App, ports: int, cidr: str) -> str:
    net = app.call("POST", "/v2.0/networks", OWNER, json={"network": {"name": "n"}})
    net_id = net["network"]["id"]
    app.call("POST", "/v2.0/subnets", OWNER, json={"subnet": {
        "network_id": net_id, "ip_version": 4, "cidr": cidr}})
    app.call("POST", "/v2.0/rbac-policies", OWNER, json={"rbac_policy": {
        "object_type": "network", "object_id": net_id, "action": "access_as_shared",
        "target_tenant": TARGET}})
    for start in range(0, ports, 100):
        app.call("POST", "/v2.0/ports", TARGET, json={"ports": [
            {"network_id": net_id} for _ in range(min(100, ports - start))]})
    return net_id


def test_target_member_lists_1000_ports_in_as_many_statements_as_10(app: App) -> None:
    small = _shared_network(app, 10, "10.0.0.0/24")
    big = _shared_network(app, 1000, "10.1.0.0/20")
    few, body_small = app.counted_as(f"/v2.0/ports?network_id={small}", TARGET)
    many, body_big = app.counted_as(f"/v2.0/ports?network_id={big}", TARGET)
    assert len(body_small["ports"]) == 10 and len(body_big["ports"]) == 1000
    # Child rows (IPs, tags, ...) load in IN-lists of ``store.CHUNK`` ids: the
    # count grows by one statement per child table per chunk, never per row.
    chunks = -(-1000 // CHUNK)
    assert few <= 12
    assert many <= few + 6 * (chunks - 1)


def test_shared_networks_and_subnets_list_in_a_handful_of_statements(app: App) -> None:
    for i in range(20):
        _shared_network(app, 0, f"10.2.{i}.0/24")
    for path in ("/v2.0/networks", "/v2.0/subnets", "/v2.0/networks?shared=true"):
        count, body = app.counted_as(path, TARGET)
        key = path.split("/")[-1].split("?")[0]
        assert len(body[key]) >= 20
        assert all(n.get("shared", True) for n in body[key])
        assert count <= 12, (path, count)
