"""Deleting a network deletes its subnets and auto-deleted ports with their
tags: no tag row outlives its resource."""
from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from neutrino.db import tables as t
from tests.inprocess import CountingApp


def test_deleting_a_network_deletes_the_tags_of_its_subnets_and_ports(tmp_path: Path) -> None:
    app = CountingApp(tmp_path)
    post = app.client.simulate_post
    net = post("/v2.0/networks", json={"network": {"name": "n", "tags": ["net"]}}).json
    net_id = net["network"]["id"]
    subnets = [post("/v2.0/subnets", json={"subnet": {
        "network_id": net_id, "ip_version": 4, "cidr": f"10.{i}.0.0/24",
        "tags": [f"s{i}"]}}).json["subnet"]["id"] for i in range(2)]
    ports = [post("/v2.0/ports", json={"port": {
        "network_id": net_id, "device_owner": "network:dhcp",
        "tags": [f"p{i}"]}}).json["port"]["id"] for i in range(2)]
    other = post("/v2.0/networks", json={"network": {"name": "o", "tags": ["kept"]}}).json
    with app.api.plugin.db.engine.connect() as conn:
        before = {r.resource_id for r in conn.execute(sa.select(t.tags.c.resource_id))}
    assert {net_id, *subnets, *ports} <= before
    assert app.client.simulate_delete(f"/v2.0/networks/{net_id}").status_code == 204
    with app.api.plugin.db.engine.connect() as conn:
        after = {r.resource_id: r.tag for r in conn.execute(sa.select(t.tags))}
    assert after == {other["network"]["id"]: "kept"}
