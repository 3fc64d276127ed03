"""The port_security extension driver, over the API."""
from __future__ import annotations

import uuid
from pathlib import Path
from typing import Iterator

import pytest

from tests.conftest import Client, Server
from tests.inprocess import CountingApp


@pytest.fixture(scope="module")
def ps_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("ps"),
                 extra="[ml2]\nextension_drivers = port_security\n").start()
    yield srv
    srv.stop()


@pytest.fixture
def member(ps_server: Server) -> Client:
    return Client(ps_server.url, uuid.uuid4().hex, "member")


def _net(client: Client, **extra: object) -> dict:
    status, body = client.post("/v2.0/networks", {"network": {"name": "ps", **extra}})
    assert status == 201, body
    net = body["network"]
    client.post("/v2.0/subnets", {"subnet": {"network_id": net["id"], "ip_version": 4,
                                             "cidr": "10.5.0.0/24"}})
    return net


def test_extension_is_listed_when_the_driver_is_loaded(ps_server: Server, tmp_path: Path) -> None:
    assert Client(ps_server.url).get("/v2.0/extensions/port-security")[0] == 200
    # (The session server loads the driver, as etc/neutrino-aio.conf does.)
    without = CountingApp(tmp_path)
    assert without.client.simulate_get("/v2.0/extensions/port-security").status_code == 404


def test_networks_default_to_port_security_enabled(member: Client) -> None:
    net = _net(member)
    assert net["port_security_enabled"] is True
    shown = member.get(f"/v2.0/networks/{net['id']}")[1]["network"]
    assert shown["port_security_enabled"] is True


def test_ports_inherit_the_networks_setting_unless_given(member: Client) -> None:
    net = _net(member, port_security_enabled=False)
    assert net["port_security_enabled"] is False
    port = member.post("/v2.0/ports", {"port": {"network_id": net["id"]}})[1]["port"]
    assert port["port_security_enabled"] is False
    port = member.post("/v2.0/ports", {"port": {"network_id": net["id"],
                                                "port_security_enabled": True}})[1]["port"]
    assert port["port_security_enabled"] is True


def test_address_pairs_need_port_security_and_nothing_is_created(member: Client) -> None:
    net = _net(member)
    status, body = member.post("/v2.0/ports", {"port": {
        "network_id": net["id"], "port_security_enabled": False,
        "allowed_address_pairs": [{"ip_address": "10.5.0.99"}]}})
    assert status == 409
    assert body["NeutronError"]["type"] == "AddressPairAndPortSecurityRequired"
    assert member.get(f"/v2.0/ports?network_id={net['id']}")[1]["ports"] == []


def test_port_with_address_pairs_cannot_disable_port_security(member: Client) -> None:
    net = _net(member)
    port = member.post("/v2.0/ports", {"port": {
        "network_id": net["id"], "allowed_address_pairs": [{"ip_address": "10.5.0.98"}]}})[1]["port"]
    status, body = member.put(f"/v2.0/ports/{port['id']}",
                              {"port": {"port_security_enabled": False}})
    assert status == 409
    shown = member.get(f"/v2.0/ports/{port['id']}")[1]["port"]
    assert shown["port_security_enabled"] is True
    # Its security groups (the default one) go too: they need port security.
    status, body = member.put(f"/v2.0/ports/{port['id']}", {"port": {
        "port_security_enabled": False, "allowed_address_pairs": [], "security_groups": []}})
    assert status == 200 and body["port"]["port_security_enabled"] is False


def test_filter_by_port_security(member: Client) -> None:
    on = _net(member)
    off = _net(member, port_security_enabled=False)
    ids = {n["id"] for n in member.get("/v2.0/networks?port_security_enabled=False")[1]["networks"]}
    assert off["id"] in ids and on["id"] not in ids


def _rows(app: CountingApp, table: object) -> dict[str, bool]:
    import sqlalchemy as sa
    with app.api.plugin.db.reader() as conn:
        return {r[0]: bool(r[1]) for r in conn.execute(sa.select(table))}


def test_a_row_is_stored_only_to_turn_port_security_off(tmp_path: Path) -> None:
    """Enabled is what a resource without a row shows (as upstream shows
    those made before the driver), so the usual create stores nothing."""
    from neutrino.db import tables as t
    app = CountingApp(tmp_path, "[ml2]\nextension_drivers = port_security\n")
    headers = {"X-Project-Id": "p", "X-Roles": "admin"}

    def post(path: str, body: dict) -> dict:
        res = app.client.simulate_post(path, json=body, headers=headers)
        assert res.status_code == 201, res.text
        return next(iter(res.json.values()))
    on = post("/v2.0/networks", {"network": {"name": "on"}})
    off = post("/v2.0/networks", {"network": {"name": "off", "port_security_enabled": False}})
    inheriting = post("/v2.0/ports", {"port": {"network_id": off["id"]}})
    plain = post("/v2.0/ports", {"port": {"network_id": on["id"]}})
    assert _rows(app, t.network_port_security) == {off["id"]: False}
    assert _rows(app, t.port_port_security) == {inheriting["id"]: False}
    assert plain["port_security_enabled"] is True and on["port_security_enabled"] is True
    # Turning a row-less resource off stores its row; on again keeps it.
    for plural, rid in (("networks", on["id"]), ("ports", plain["id"])):
        for value in (False, True, False):
            change: dict = {"port_security_enabled": value}
            if plural == "ports" and not value:  # (its groups must go with it)
                change["security_groups"] = []
            res = app.client.simulate_put(f"/v2.0/{plural}/{rid}", headers=headers,
                                          json={plural[:-1]: change})
            assert res.status_code == 200, res.text
            shown = app.client.simulate_get(f"/v2.0/{plural}/{rid}", headers=headers).json
            assert shown[plural[:-1]]["port_security_enabled"] is value
    listed = app.client.simulate_get("/v2.0/ports?port_security_enabled=false",
                                     headers=headers).json["ports"]
    assert {p["id"] for p in listed} == {inheriting["id"], plain["id"]}
