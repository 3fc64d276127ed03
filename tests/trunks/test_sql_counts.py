"""Listing trunks, their parents' ``trunk_details`` and segments costs a
bounded number of SQL statements, whatever the number of rows (no N+1)."""
from __future__ import annotations

from typing import Any, Iterator

import pytest

from tests.inprocess import CountingApp
from tests.sql_events import listen_all, remove_all

CONF = ("[DEFAULT]\nservice_plugins = segments,trunk\n"
        "[ml2]\ntype_drivers = local,vlan\ntenant_network_types = local\n"
        "[ml2_type_vlan]\nnetwork_vlan_ranges = physnet1:100:400\n")


class App(CountingApp):
    def post(self, path: str, body: dict[str, Any]) -> Any:
        result = self.client.simulate_post(path, json=body)
        assert result.status_code == 201, result.text
        return result.json


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    app = App(tmp_path_factory.mktemp("trunk_counts"), CONF)
    app.api.plugin.initialize()
    yield app


def _trunks(app: App, count: int, subports: int) -> str:
    """``count`` trunks with ``subports`` subports each, on one new network."""
    net = app.post("/v2.0/networks", {"network": {"name": "n"}})["network"]["id"]
    ports = app.post("/v2.0/ports", {"ports": [{"network_id": net, "fixed_ips": []}
                                               for _ in range(count * (subports + 1))]})["ports"]
    ids = [p["id"] for p in ports]
    for i in range(count):
        parent, subs = ids[i * (subports + 1)], ids[i * (subports + 1) + 1:(i + 1) * (subports + 1)]
        app.post("/v2.0/trunks", {"trunk": {"port_id": parent, "name": net, "sub_ports": [
            {"port_id": s, "segmentation_type": "vlan", "segmentation_id": n + 1}
            for n, s in enumerate(subs)]}})
    return net


def test_listing_30_trunks_with_subports_costs_what_listing_2_costs(app: App) -> None:
    small, big = _trunks(app, 2, 2), _trunks(app, 30, 3)
    few, body_small = app.counted("GET", f"/v2.0/trunks?name={small}")
    many, body_big = app.counted("GET", f"/v2.0/trunks?name={big}")
    assert len(body_small["trunks"]) == 2 and len(body_big["trunks"]) == 30
    assert all(len(t["sub_ports"]) == 3 for t in body_big["trunks"])
    assert many == few


def test_listing_ports_with_trunk_details_is_bounded(app: App) -> None:
    small, big = _trunks(app, 2, 1), _trunks(app, 30, 2)
    few, _ = app.counted("GET", f"/v2.0/ports?network_id={small}")
    many, body = app.counted("GET", f"/v2.0/ports?network_id={big}")
    assert sum(1 for p in body["ports"] if "trunk_details" in p) == 30
    assert many == few


def test_listing_segments_is_bounded(app: App) -> None:
    def network_with_segments(n: int) -> str:
        net = app.post("/v2.0/networks", {"network": {"name": "s"}})["network"]["id"]
        for _ in range(n):
            app.post("/v2.0/segments", {"segment": {
                "network_id": net, "network_type": "vlan", "physical_network": "physnet1"}})
        return net
    small, big = network_with_segments(2), network_with_segments(40)
    few, _ = app.counted("GET", f"/v2.0/segments?network_id={small}")
    many, body = app.counted("GET", f"/v2.0/segments?network_id={big}")
    assert len(body["segments"]) == 41  # with the network's own
    assert many == few
    count, body = app.counted("GET", "/v2.0/networks?name=s")
    assert count <= 12 and all("l2_adjacency" in n for n in body["networks"])


def test_l2_adjacency_comes_with_a_single_networks_row(app: App) -> None:
    """The segments extension's attribute is a column of the network's own
    SELECT: neither a show nor the answer to an update reads subnets again."""
    def reads_of_subnets(method: str, path: str, **kw: Any) -> tuple[int, Any]:
        seen: list[str] = []

        def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
            if not statement.lstrip().startswith("SELECT networks."):
                seen.append(statement)
        listen_all(app.api.plugin.db, "before_cursor_execute", record)
        try:
            result = app.client.simulate_request(method, path, **kw)
        finally:
            remove_all(app.api.plugin.db, "before_cursor_execute", record)
        assert result.status_code == 200, result.text
        return sum("FROM subnets" in s for s in seen), result.json["network"]["l2_adjacency"]

    plain = app.post("/v2.0/networks", {"network": {"name": "plain"}})["network"]["id"]
    app.post("/v2.0/subnets", {"subnet": {"network_id": plain, "ip_version": 4,
                                          "cidr": "10.50.0.0/24"}})
    routed = app.post("/v2.0/networks", {"network": {"name": "routed"}})["network"]["id"]
    segment = app.post("/v2.0/segments", {"segment": {
        "network_id": routed, "network_type": "vlan", "physical_network": "physnet1"}})
    app.post("/v2.0/subnets", {"subnet": {"network_id": routed, "ip_version": 4,
                                          "cidr": "10.51.0.0/24",
                                          "segment_id": segment["segment"]["id"]}})
    for net, adjacent in ((plain, True), (routed, False)):
        assert reads_of_subnets("GET", f"/v2.0/networks/{net}") == (0, adjacent)
        assert reads_of_subnets("PUT", f"/v2.0/networks/{net}",
                                json={"network": {"name": "x"}}) == (0, adjacent)
        listed = app.client.simulate_get(f"/v2.0/networks?id={net}").json["networks"][0]
        assert listed["l2_adjacency"] is adjacent
