"""The core plugin's ``bind_ports``: many ports' ``binding:host_id`` set at
once (an L3 agent's first sync binds every port of its routers) with what
an update of each one does, a failed binding retried, a port gone left out."""
from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from neutrino.context import Context
from neutrino.plugins.ml2 import agents_db
from tests.inprocess import CountingApp

HOST = "compute-b"
ADMIN = {"X-Roles": "admin", "X-Project-Id": "p"}
CONFIG = ("[ml2]\ntype_drivers = vxlan\ntenant_network_types = vxlan\n"
          "mechanism_drivers = openvswitch\n[ml2_type_vxlan]\nvni_ranges = 100:200\n")
BINDING = ("binding:host_id", "binding:vif_type", "binding:vif_details", "status",
           "revision_number")


def _app(tmp_path: Path) -> CountingApp:
    app = CountingApp(tmp_path, CONFIG)
    app.api.plugin.initialize()
    return app


def _l2_agent(app: CountingApp) -> None:
    with app.api.plugin.db.writer() as conn:
        agents_db.report(conn, agents_db.AGENT_TYPE_OVS, "neutron-openvswitch-agent", HOST,
                         "N/A", {"tunnel_types": ["vxlan"], "bridge_mappings": {}})


def _ports(app: CountingApp, count: int) -> list[dict[str, Any]]:
    res = app.client.simulate_post("/v2.0/networks", json={"network": {"name": "n"}},
                                   headers=ADMIN)
    net = res.json["network"]
    app.client.simulate_post("/v2.0/subnets", headers=ADMIN, json={"subnet": {
        "network_id": net["id"], "ip_version": 4, "cidr": "10.3.0.0/24"}})
    res = app.client.simulate_post("/v2.0/ports", headers=ADMIN, json={"ports": [
        {"network_id": net["id"], "device_owner": "network:router_interface"}
        for _ in range(count)]})
    assert res.status_code == 201, res.text
    return list(res.json["ports"])


def _get(app: CountingApp, port_id: str) -> dict[str, Any]:
    return dict(app.client.simulate_get(f"/v2.0/ports/{port_id}", headers=ADMIN).json["port"])


def test_ports_bound_together_are_bound_as_an_update_binds_one(tmp_path: Path) -> None:
    app = _app(tmp_path)
    _l2_agent(app)
    alone, *together = _ports(app, 4)
    res = app.client.simulate_put(f"/v2.0/ports/{alone['id']}", headers=ADMIN,
                                  json={"port": {"binding:host_id": HOST}})
    assert res.status_code == 200, res.text
    answer = app.api.plugin.bind_ports(Context.admin(), [p["id"] for p in together], HOST)

    expected = {k: _get(app, alone["id"])[k] for k in BINDING}
    assert expected["binding:vif_type"] == "ovs" and expected["revision_number"] == 2
    for port in together:
        assert {k: _get(app, port["id"])[k] for k in BINDING} == expected
        assert {k: answer[port["id"]][k] for k in BINDING} == expected


def test_a_failed_binding_is_retried_and_a_port_gone_is_left_out(tmp_path: Path) -> None:
    app = _app(tmp_path)
    ports = _ports(app, 2)
    ids = [p["id"] for p in ports]
    app.api.plugin.bind_ports(Context.admin(), ids, HOST)  # no L2 agent on the host
    assert [_get(app, i)["binding:vif_type"] for i in ids] == ["binding_failed"] * 2

    _l2_agent(app)
    gone = str(uuid.uuid4())
    answer = app.api.plugin.bind_ports(Context.admin(), [*ids, gone], HOST)
    assert sorted(answer) == sorted(ids)
    for port_id in ids:
        port = _get(app, port_id)
        assert (port["binding:host_id"], port["binding:vif_type"]) == (HOST, "ovs")
        assert port["binding:vif_details"]["bound_drivers"] == {"0": "openvswitch"}
