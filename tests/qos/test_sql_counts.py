"""QoS lists load related rows in bulk: the statement count does not grow
with the rows (policies with their rules; ports with their policies)."""
from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.inprocess import CountingApp

EXTRA = ("[DEFAULT]\nservice_plugins = qos\n"
         "[ml2]\nextension_drivers = port_security,qos\nmechanism_drivers = openvswitch\n")


class App(CountingApp):
    def call(self, method: str, path: str, project: str, body: Any = None) -> Any:
        headers = {"X-Project-Id": project, "X-User-Id": "u", "X-Roles": "manager"}
        result = self.client.simulate_request(method, path, headers=headers, json=body)
        assert result.status_code < 300, result.text
        return result.json

    def count(self, path: str, project: str) -> tuple[int, Any]:
        headers = {"X-Project-Id": project, "X-User-Id": "u", "X-Roles": "reader"}
        return self.counted("GET", path, headers=headers)


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    yield App(tmp_path_factory.mktemp("qos_counts"), EXTRA)


def _policies(app: App, project: str, n: int) -> list[str]:
    ids = []
    for i in range(n):
        pid = app.call("POST", "/v2.0/qos/policies", project,
                       {"policy": {"name": f"p{i}", "tags": ["t"]}})["policy"]["id"]
        app.call("POST", f"/v2.0/qos/policies/{pid}/bandwidth_limit_rules", project,
                 {"bandwidth_limit_rule": {"max_kbps": 100 + i}})
        app.call("POST", f"/v2.0/qos/policies/{pid}/dscp_marking_rules", project,
                 {"dscp_marking_rule": {"dscp_mark": 8}})
        ids.append(pid)
    return ids


def test_listing_policies_with_rules_costs_the_same_for_5_and_60(app: App) -> None:
    small, big = uuid.uuid4().hex, uuid.uuid4().hex
    _policies(app, small, 5)
    _policies(app, big, 60)
    few, body_small = app.count("/v2.0/qos/policies", small)
    many, body_big = app.count("/v2.0/qos/policies", big)
    assert len(body_small["policies"]) == 5 and len(body_big["policies"]) == 60
    assert all(len(p["rules"]) == 2 for p in body_big["policies"])
    assert many == few


def test_listing_ports_with_policies_costs_the_same_for_10_and_200(app: App) -> None:
    project = uuid.uuid4().hex
    pid = _policies(app, project, 1)[0]
    counts = []
    for n in (10, 200):
        net = app.call("POST", "/v2.0/networks", project,
                       {"network": {"name": "n", "qos_policy_id": pid}})["network"]["id"]
        for start in range(0, n, 100):
            app.call("POST", "/v2.0/ports", project, {"ports": [
                {"network_id": net, "qos_policy_id": pid if i % 2 else None}
                for i in range(min(100, n - start))]})
        count, body = app.count(f"/v2.0/ports?network_id={net}", project)
        assert len(body["ports"]) == n
        assert {p["qos_network_policy_id"] for p in body["ports"]} == {pid}
        counts.append(count)
    assert counts[1] == counts[0]
