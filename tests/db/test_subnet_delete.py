"""A subnet delete on every backend: the ports that held its addresses
lose them and advance their revision once (the UPDATE joins the subnet's
addresses rather than scanning every port), the others stay as they were."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import migrated_database
from tests.inprocess import CountingApp
from tests.sql_events import listen_all

ADMIN = {"X-Project-Id": "p", "X-Roles": "admin"}


def _made(app: CountingApp, plural: str, body: dict[str, Any]) -> dict[str, Any]:
    res = app.client.simulate_post(f"/v2.0/{plural}", json={plural[:-1]: body}, headers=ADMIN)
    assert res.status_code == 201, res.text
    return res.json[plural[:-1]]


def _port(app: CountingApp, pid: str) -> dict[str, Any]:
    return app.client.simulate_get(f"/v2.0/ports/{pid}", headers=ADMIN).json["port"]


def test_deleting_subnets_advances_each_holder_once_and_no_other_port(
        db_url: str, tmp_path: Path) -> None:
    app = CountingApp(tmp_path, "", url=db_url)
    try:
        net = _made(app, "networks", {"name": "n"})["id"]
        gone = _made(app, "subnets", {"network_id": net, "ip_version": 4,
                                      "cidr": "10.0.0.0/24"})["id"]
        kept = _made(app, "subnets", {"network_id": net, "ip_version": 4,
                                      "cidr": "10.0.1.0/24"})["id"]
        slaac = _made(app, "subnets", {"network_id": net, "ip_version": 6,
                                       "cidr": "2001:db8::/64", "ipv6_ra_mode": "slaac",
                                       "ipv6_address_mode": "slaac"})["id"]
        dhcp = _made(app, "ports", {"network_id": net, "device_owner": "network:dhcp",
                                    "fixed_ips": [{"subnet_id": gone}, {"subnet_id": gone},
                                                  {"subnet_id": kept}]})
        compute = _made(app, "ports", {"network_id": net, "device_owner": "compute:nova",
                                       "fixed_ips": [{"subnet_id": kept}]})
        away = _made(app, "networks", {"name": "away"})["id"]
        _made(app, "subnets", {"network_id": away, "ip_version": 4, "cidr": "10.0.0.0/24"})
        bystander = _made(app, "ports", {"network_id": away, "device_owner": "network:dhcp"})

        def revisions() -> list[int]:
            return [_port(app, p["id"])["revision_number"] for p in (dhcp, compute, bystander)]
        before = revisions()
        assert app.client.simulate_delete(f"/v2.0/subnets/{gone}",
                                          headers=ADMIN).status_code == 204
        assert revisions() == [before[0] + 1, before[1], before[2]]
        assert {ip["subnet_id"] for ip in _port(app, dhcp["id"])["fixed_ips"]} == {kept, slaac}
        # A SLAAC subnet's addresses go with it, from any port but a router's
        # (every port on the network got one).
        assert app.client.simulate_delete(f"/v2.0/subnets/{slaac}",
                                          headers=ADMIN).status_code == 204
        assert revisions() == [before[0] + 2, before[1] + 1, before[2]]
        for port in (dhcp, compute):
            assert [ip["subnet_id"] for ip in _port(app, port["id"])["fixed_ips"]] == [kept]
    finally:
        app.api.plugin.db.dispose()


def test_on_mariadb_a_subnet_delete_reaches_its_ports_through_its_addresses(
        tmp_path: Path) -> None:
    """The UPDATE advancing the holders' revisions starts from the subnet's
    addresses: MariaDB's plan reads no port but those (an ``id IN
    (SELECT ...)`` UPDATE read every port of the database)."""
    with migrated_database("mariadb", tmp_path) as url:
        _plan_of_a_subnet_delete(CountingApp(tmp_path, "", url=url))


def _plan_of_a_subnet_delete(app: CountingApp) -> None:
    try:
        net = _made(app, "networks", {"name": "n"})["id"]
        busy = _made(app, "subnets", {"network_id": net, "ip_version": 4,
                                      "cidr": "10.1.0.0/16"})["id"]
        res = app.client.simulate_post("/v2.0/ports", headers=ADMIN, json={"ports": [
            {"network_id": net, "fixed_ips": [{"subnet_id": busy}]} for _ in range(300)]})
        assert res.status_code == 201, res.text
        gone = _made(app, "subnets", {"network_id": net, "ip_version": 4,
                                      "cidr": "10.2.0.0/24"})["id"]
        _made(app, "ports", {"network_id": net, "device_owner": "network:dhcp",
                             "fixed_ips": [{"subnet_id": gone}]})
        seen: list[tuple[str, Any]] = []
        listen_all(app.api.plugin.db, "before_cursor_execute",
                   lambda conn, cur, statement, params, *a: seen.append((statement, params)))
        assert app.client.simulate_delete(f"/v2.0/subnets/{gone}",
                                          headers=ADMIN).status_code == 204
        bumps = [(s, p) for s, p in seen if s.lstrip().startswith("UPDATE ports")]
        assert len(bumps) == 1, seen
        with app.api.plugin.db.writer() as conn:
            plan = conn.exec_driver_sql("EXPLAIN " + bumps[0][0], bumps[0][1]).mappings().all()
        ports = [row for row in plan if row["table"] == "ports"]
        assert ports and all(row["type"] in ("eq_ref", "ref", "const") for row in ports), plan
    finally:
        app.api.plugin.db.dispose()
