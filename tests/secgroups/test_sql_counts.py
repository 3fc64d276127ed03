"""Listing security groups, rules and ports with groups costs the same number
of SQL statements for few rows as for many (no query per row)."""
from __future__ import annotations

from typing import Iterator

import pytest

from tests.inprocess import CountingApp

UNLIMITED = ("[quotas]\nquota_security_group = -1\nquota_security_group_rule = -1\n"
             "[ml2]\nextension_drivers = port_security\n")


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CountingApp]:
    yield CountingApp(tmp_path_factory.mktemp("sg-counts"), UNLIMITED)


def _groups(app: CountingApp, project: str, count: int) -> list[str]:
    headers = {"X-Project-Id": project, "X-Roles": "member"}
    ids = []
    for i in range(count):
        sg = app.client.simulate_post("/v2.0/security-groups", headers=headers, json={
            "security_group": {"name": f"g{i}"}}).json["security_group"]["id"]
        app.client.simulate_post("/v2.0/security-group-rules", headers=headers, json={
            "security_group_rules": [{"security_group_id": sg, "direction": "ingress",
                                      "protocol": "tcp", "port_range_min": p,
                                      "port_range_max": p} for p in (22, 80)]})
        ids.append(sg)
    return ids


@pytest.mark.parametrize("path,key", [("security-groups", "security_groups"),
                                      ("security-group-rules", "security_group_rules")])
def test_listing_groups_and_rules_is_bounded(app: CountingApp, path: str, key: str) -> None:
    small, big = "a" * 32, "b" * 32
    _groups(app, small, 2)
    _groups(app, big, 40)
    few, body_small = app.counted("GET", f"/v2.0/{path}",
                                  headers={"X-Project-Id": small, "X-Roles": "member"})
    many, body_big = app.counted("GET", f"/v2.0/{path}",
                                 headers={"X-Project-Id": big, "X-Roles": "member"})
    assert len(body_big[key]) > len(body_small[key]) * 10
    assert many == few


def test_listing_ports_with_groups_is_bounded(app: CountingApp) -> None:
    headers = {"X-Project-Id": "c" * 32, "X-Roles": "member"}
    groups = _groups(app, "c" * 32, 3)

    def network(ports: int) -> str:
        net = app.client.simulate_post("/v2.0/networks", headers=headers, json={
            "network": {"name": "n"}}).json["network"]["id"]
        app.client.simulate_post("/v2.0/subnets", headers=headers, json={"subnet": {
            "network_id": net, "ip_version": 4, "cidr": "10.0.0.0/16"}})
        app.client.simulate_post("/v2.0/ports", headers=headers, json={"ports": [
            {"network_id": net, "security_groups": groups[:1 + i % 3]} for i in range(ports)]})
        return net

    small, big = network(3), network(60)
    few, body_small = app.counted("GET", f"/v2.0/ports?network_id={small}", headers=headers)
    many, body_big = app.counted("GET", f"/v2.0/ports?network_id={big}", headers=headers)
    assert len(body_big["ports"]) == 60 and body_big["ports"][0]["security_groups"]
    assert many == few
    filtered, _ = app.counted("GET", f"/v2.0/ports?security_groups={groups[2]}", headers=headers)
    assert filtered == few
