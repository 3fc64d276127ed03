"""An L3 agent's full sync costs the server a fixed number of SQL statements:
``sync_routers`` for a host reads its routers, their ports, subnets,
networks and floating IPs a table at a time, however many routers the host
has (the agent side, one call per sync: tests/l3host/test_agent_loop.py);
a cold sync, which binds the routers' ports to the host, binds them all in
statements shared by the ports."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from neutrino.plugins.ml2 import agents_db
from neutrino.rpc import topics
from tests.inprocess import CountingApp

HOST = "network-a"
ADMIN = {"X-Roles": "admin", "X-Project-Id": "p"}
CONFIG = ("[DEFAULT]\nservice_plugins = router\n[quotas]\nquota_router = -1\n"
          "quota_floatingip = -1\n[ml2]\ntype_drivers = vxlan\ntenant_network_types = vxlan\n"
          "mechanism_drivers = openvswitch\n[ml2_type_vxlan]\nvni_ranges = 100:200\n")


def _post(app: CountingApp, collection: str, body: dict[str, Any]) -> dict[str, Any]:
    res = app.client.simulate_post(f"/v2.0/{collection}", json=body, headers=ADMIN)
    assert res.status_code == 201, res.text
    return dict(res.json)


def _routers(app: CountingApp, ext: str, count: int, first: int) -> None:
    """``count`` routers with a gateway, two interfaces and two floating IPs each."""
    for i in range(first, first + count):
        router = _post(app, "routers", {"router": {
            "name": f"r{i}", "external_gateway_info": {"network_id": ext}}})["router"]
        for k in (2 * i, 2 * i + 1):
            net = _post(app, "networks", {"network": {"name": f"n{k}"}})["network"]
            sub = _post(app, "subnets", {"subnet": {
                "network_id": net["id"], "ip_version": 4, "cidr": f"10.{k}.0.0/24"}})["subnet"]
            res = app.client.simulate_put(f"/v2.0/routers/{router['id']}/add_router_interface",
                                          json={"subnet_id": sub["id"]}, headers=ADMIN)
            assert res.status_code == 200, res.text
            port = _post(app, "ports", {"port": {"network_id": net["id"],
                                                 "device_owner": "compute:nova"}})["port"]
            _post(app, "floatingips", {"floatingip": {"floating_network_id": ext,
                                                      "port_id": port["id"]}})


def _sync(app: CountingApp, endpoint: Any) -> tuple[int, list[dict[str, Any]]]:
    app.statements = 0
    routers = endpoint.sync_routers({}, host=HOST)
    return app.statements, routers


def _setup(tmp_path: Path) -> tuple[CountingApp, Any, str]:
    """The app, its L3 RPC endpoint and the external network's id."""
    app = CountingApp(tmp_path, CONFIG)
    app.api.plugin.initialize()  # the VXLAN pool, as the server's start fills it
    with app.api.plugin.db.writer() as conn:
        agents_db.report(conn, agents_db.AGENT_TYPE_OVS, "neutron-openvswitch-agent", HOST,
                         "N/A", {"tunnel_types": ["vxlan"], "bridge_mappings": {}})
        agents_db.report(conn, "L3 agent", "neutron-l3-agent", HOST, "l3_agent",
                         {"agent_mode": "legacy"})
    l3 = next(p for p in app.api.directory.all_plugins() if hasattr(p, "rpc_endpoints")
              and topics.L3PLUGIN in p.rpc_endpoints())
    endpoint = l3.rpc_endpoints()[topics.L3PLUGIN][0]
    ext = _post(app, "networks", {"network": {"name": "ext", "router:external": True}})
    ext_id = ext["network"]["id"]
    _post(app, "subnets", {"subnet": {"network_id": ext_id, "ip_version": 4,
                                      "cidr": "172.24.0.0/16", "enable_dhcp": False}})

    return app, endpoint, ext_id


def test_a_full_sync_costs_the_same_statements_for_2_or_12_routers(tmp_path: Path) -> None:
    app, endpoint, ext_id = _setup(tmp_path)
    _routers(app, ext_id, 2, 0)
    _sync(app, endpoint)  # the first binds the routers' ports to the host
    few, routers = _sync(app, endpoint)
    assert len(routers) == 2 and all(len(r["_floatingips"]) == 2 for r in routers)

    _routers(app, ext_id, 10, 2)
    _sync(app, endpoint)
    many, routers = _sync(app, endpoint)
    assert len(routers) == 12
    assert all(len(r["_interfaces"]) == 2 and r["gw_port"] for r in routers)
    assert many == few


def test_a_cold_sync_binds_2_or_10_routers_ports_in_the_same_statements(tmp_path: Path) -> None:
    app, endpoint, ext_id = _setup(tmp_path)
    _routers(app, ext_id, 2, 0)
    few, routers = _sync(app, endpoint)  # 6 ports bound to the host
    assert all(p["binding:host_id"] == HOST for r in routers
               for p in (r["gw_port"], *r["_interfaces"]))

    _sync(app, endpoint)  # (the bound ports' rows remembered again: plugins/row_memo.py)
    _routers(app, ext_id, 10, 2)
    many, routers = _sync(app, endpoint)  # 30 more
    assert len(routers) == 12
    ports = app.client.simulate_get("/v2.0/ports", headers=ADMIN,
                                    params={"device_owner": ["network:router_gateway",
                                                             "network:router_interface"]})
    assert len(ports.json["ports"]) == 36
    assert all(p["binding:host_id"] == HOST and p["binding:vif_type"] == "ovs"
               for p in ports.json["ports"])
    assert many == few
