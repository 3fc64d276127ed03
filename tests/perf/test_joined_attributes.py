"""A port's and a network's one-to-one attribute tables (binding, port
security, QoS policies) are read with a shown resource's own row, and show
what they hold in a show and in a page alike."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy as sa

from neutrino.db import tables as t
from tests.inprocess import CountingApp

CONFIG = ("[DEFAULT]\nservice_plugins = qos\n"
          "[ml2]\nextension_drivers = port_security,qos\n")
ADMIN = {"X-Project-Id": "p", "X-Roles": "admin,service"}  # service: binding:profile
ONE_TO_ONE = ("ml2_port_bindings", "port_port_security", "qos_port_policy_bindings",
              "qos_network_policy_bindings", "network_port_security")


def _post(app: CountingApp, path: str, body: dict[str, Any]) -> dict[str, Any]:
    res = app.client.simulate_post(path, json=body, headers=ADMIN)
    assert res.status_code == 201, res.text
    return next(iter(res.json.values()))


def _without_rows(app: CountingApp, port_id: str, *tables: sa.Table) -> None:
    """The port as one made before these tables' drivers: without its rows
    there, a state of its own, so with a revision of its own (the suite
    refuses a commit that changes them and not the revision)."""
    with app.api.plugin.db.writer() as conn:
        for table in tables:
            conn.execute(sa.delete(table).where(table.c.port_id == port_id))
        conn.execute(sa.update(t.ports).where(t.ports.c.id == port_id)
                     .values(revision_number=t.ports.c.revision_number + 1))


def _own_reads(seen: list[str]) -> list[str]:
    return [s for s in seen if any(f"FROM {table}" in s for table in ONE_TO_ONE)]


def test_a_ports_binding_security_and_qos_come_with_its_row(tmp_path: Path) -> None:
    app = CountingApp(tmp_path, CONFIG)
    net_policy = _post(app, "/v2.0/qos/policies", {"policy": {"name": "net"}})["id"]
    port_policy = _post(app, "/v2.0/qos/policies", {"policy": {"name": "port"}})["id"]
    net = _post(app, "/v2.0/networks", {"network": {"name": "n", "qos_policy_id": net_policy}})
    port = _post(app, "/v2.0/ports", {"port": {
        "network_id": net["id"], "port_security_enabled": False, "qos_policy_id": port_policy,
        "binding:host_id": "host-a", "binding:profile": {"k": "v"}}})

    for path, pick in ((f"/v2.0/ports/{port['id']}", lambda b: b["port"]),
                       (f"/v2.0/ports?network_id={net['id']}", lambda b: b["ports"][0])):
        seen, body = app.recorded(path, ADMIN)
        shown = pick(body)
        assert shown["port_security_enabled"] is False
        assert shown["qos_policy_id"] == port_policy
        assert shown["qos_network_policy_id"] == net_policy
        assert shown["binding:host_id"] == "host-a"
        assert shown["binding:profile"] == {"k": "v"}
        assert shown["binding:vnic_type"] == "normal"
        if "?" not in path:  # a show; a page reads them in one batch per table
            assert _own_reads(seen) == []


def test_a_port_without_rows_in_those_tables_shows_their_defaults(tmp_path: Path) -> None:
    """Ports from before a driver was enabled have no row: the outer join's
    NULLs mean enabled, no policy, unbound."""
    app = CountingApp(tmp_path, CONFIG)
    net = _post(app, "/v2.0/networks", {"network": {"name": "n"}})
    port = _post(app, "/v2.0/ports", {"port": {"network_id": net["id"]}})
    _without_rows(app, port["id"], t.ml2_port_bindings, t.port_port_security)
    _, body = app.recorded(f"/v2.0/ports/{port['id']}", ADMIN)
    shown = body["port"]
    assert shown["port_security_enabled"] is True
    assert shown["qos_policy_id"] is None and shown["qos_network_policy_id"] is None
    assert shown["binding:vif_type"] == "unbound" and shown["binding:host_id"] == ""
    assert shown["binding:profile"] == {} and shown["binding:vif_details"] == {}


def test_an_update_of_a_port_without_a_binding_row_gives_it_one(tmp_path: Path) -> None:
    """The binding driver learns the old binding from the update's original,
    where a missing row reads as unbound: asking for a host then writes the
    row the port never had, and a name-only change of the same port reads
    no binding row of its own."""
    app = CountingApp(tmp_path, CONFIG)
    net = _post(app, "/v2.0/networks", {"network": {"name": "n"}})
    port = _post(app, "/v2.0/ports", {"port": {"network_id": net["id"]}})
    _without_rows(app, port["id"], t.ml2_port_bindings)
    seen, _ = app.recorded(f"/v2.0/ports/{port['id']}", ADMIN, "PUT", {"port": {"name": "x"}})
    assert not [s for s in seen if s.startswith("SELECT ml2_port_bindings")], seen
    _, body = app.recorded(f"/v2.0/ports/{port['id']}", ADMIN, "PUT", {"port": {
        "binding:host_id": "nowhere", "binding:profile": {"k": "v"}}})
    assert body["port"]["binding:host_id"] == "nowhere"
    assert body["port"]["binding:profile"] == {"k": "v"}
    assert body["port"]["binding:vif_type"] == "binding_failed"  # no agent on that host
    with app.api.plugin.db.reader() as conn:
        row = conn.execute(sa.select(t.ml2_port_bindings)
                           .where(t.ml2_port_bindings.c.port_id == port["id"])).one()
    assert (row.host, row.vnic_type, row.vif_type) == ("nowhere", "normal", "binding_failed")


def test_a_networks_port_security_and_qos_come_with_its_row(tmp_path: Path) -> None:
    app = CountingApp(tmp_path, CONFIG)
    policy = _post(app, "/v2.0/qos/policies", {"policy": {"name": "net"}})["id"]
    net = _post(app, "/v2.0/networks", {"network": {
        "name": "n", "qos_policy_id": policy, "port_security_enabled": False}})
    for path, pick in ((f"/v2.0/networks/{net['id']}", lambda b: b["network"]),
                       (f"/v2.0/networks?id={net['id']}", lambda b: b["networks"][0])):
        seen, body = app.recorded(path, ADMIN)
        shown = pick(body)
        assert shown["port_security_enabled"] is False
        assert shown["qos_policy_id"] == policy
        if "?" not in path:  # a show; a page reads them in one batch per table
            assert _own_reads(seen) == []
