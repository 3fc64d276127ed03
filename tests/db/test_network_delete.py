"""A network delete on every backend: what it held goes with it, by its
own DELETEs for the ports and subnets it found and by the cascades for
their addresses, its RBAC entries and its external flag."""
from __future__ import annotations

from pathlib import Path

from tests.inprocess import CountingApp

ADMIN = {"X-Project-Id": "p", "X-Roles": "admin"}


def test_a_deleted_network_leaves_no_ports_addresses_subnets_or_sharing_behind(
        db_url: str, tmp_path: Path) -> None:
    app = CountingApp(tmp_path, "", url=db_url)
    try:
        post = app.client.simulate_post
        nets = [post("/v2.0/networks", json={"network": {"name": n, "shared": True,
                                                         "router:external": True,
                                                         "tags": ["t"]}},
                     headers=ADMIN).json["network"]["id"] for n in ("gone", "kept")]
        for i, net in enumerate(nets):
            sub = post("/v2.0/subnets", json={"subnet": {
                "network_id": net, "ip_version": 4, "cidr": f"10.{i}.0.0/24"}}, headers=ADMIN)
            assert sub.status_code == 201, sub.text
            port = post("/v2.0/ports", json={"port": {
                "network_id": net, "device_owner": "network:dhcp"}}, headers=ADMIN)
            assert port.status_code == 201, port.text
        assert app.client.simulate_delete(f"/v2.0/networks/{nets[0]}",
                                          headers=ADMIN).status_code == 204
        counts = {}
        with app.api.plugin.db.reader() as conn:
            for table, column in (("ports", "network_id"), ("subnets", "network_id"),
                                  ("ipallocations", "network_id"),
                                  ("networkrbacs", "object_id"), ("tags", "resource_id"),
                                  ("externalnetworks", "network_id"),
                                  ("network_segments", "network_id")):
                for net in nets:
                    counts[(table, net == nets[1])] = conn.exec_driver_sql(
                        f"SELECT COUNT(*) FROM {table} WHERE {column} = '{net}'").scalar()
        assert {k: v for k, v in counts.items() if not k[1]} == {
            (table, False): 0 for table, _ in counts}
        assert all(v >= 1 for k, v in counts.items() if k[1]), counts
    finally:
        app.api.plugin.db.dispose()
