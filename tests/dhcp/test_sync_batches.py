"""A DHCP agent's sync costs the server a few statements whatever its
number of networks (issue 37): its networks (scheduled to it on the way)
with their subnets and ports, and every port reported ready in one
``dhcp_ready_on_ports``, cost the same for 4 networks or 30 (a list of up
to 3 networks is read as shows are, so fewer than 4 would not compare like
with like); the DHCP ports
of all of them are made in one ``create_dhcp_ports``, one transaction
costing what the same ports cost made in one bulk POST. A per-network
query, insert or update coming back would make the 30-network sync cost
more."""
from __future__ import annotations

from typing import Any, Iterator

import pytest

from neutrino.plugins.dhcp.plugin import DhcpAgentSchedulerPlugin
from neutrino.plugins.ml2 import agents_db
from neutrino.resources.dhcp import dhcp_device_id
from neutrino.rpc import topics
from tests.conftest import migrated_database
from tests.inprocess import CountingApp

ML2 = ("[ml2]\ntype_drivers = vxlan\ntenant_network_types = vxlan\n"
       "mechanism_drivers = openvswitch\n[ml2_type_vxlan]\nvni_ranges = 100:400\n")
OVS = "Open vSwitch agent"


@pytest.fixture(scope="module", params=["sqlite", "mariadb"])
def app(request: pytest.FixtureRequest,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[CountingApp]:
    tmp = tmp_path_factory.mktemp("dhcp-batches")
    with migrated_database(request.param, tmp) as url:
        app = CountingApp(tmp, ML2, url=url)
        try:
            app.api.plugin.initialize()
            yield app
        finally:
            app.api.plugin.db.dispose()


def endpoint(app: CountingApp) -> Any:
    plugin = next(p for p in app.api.directory.services.values()
                  if isinstance(p, DhcpAgentSchedulerPlugin))
    return plugin.rpc_endpoints()[topics.PLUGIN][0]


def a_host_with_networks(app: CountingApp, host: str, count: int) -> list[str]:
    """``count`` networks of 3 bound ports each, and a DHCP and an OVS agent on ``host``."""
    with app.api.plugin.db.writer() as conn:
        agents_db.report(conn, "DHCP agent", "neutron-dhcp-agent", host, "dhcp_agent", {})
        agents_db.report(conn, OVS, "neutron-openvswitch-agent", host, "N/A",
                         {"tunnel_types": ["vxlan"], "bridge_mappings": {}})
    nets = app.client.simulate_post("/v2.0/networks", json={"networks": [
        {"name": f"{host}-{i}"} for i in range(count)]}).json["networks"]
    app.client.simulate_post("/v2.0/subnets", json={"subnets": [
        {"network_id": n["id"], "ip_version": 4, "cidr": "10.0.0.0/24"} for n in nets]})
    res = app.client.simulate_post("/v2.0/ports", json={"ports": [
        {"network_id": n["id"], "binding:host_id": host, "device_owner": "compute:nova"}
        for n in nets for _ in range(3)]})
    assert res.status_code == 201, res.text
    return [n["id"] for n in nets]


def sync(app: CountingApp, host: str) -> tuple[list[int], list[dict[str, Any]]]:
    """What a cold agent's sync costs, statements per call: its networks,
    its DHCP ports, the ports ready; and the networks as they end."""
    dhcp = endpoint(app)
    counts = []
    app.statements = 0
    infos = dhcp.get_active_networks_info({}, host=host)
    counts.append(app.statements)
    app.statements = 0
    made = dhcp.create_dhcp_ports({}, host=host, ports=[{"port": {
        "network_id": n["id"], "device_id": dhcp_device_id(n["id"], host),
        "device_owner": "network:dhcp", "project_id": n["project_id"],
        "fixed_ips": [{"subnet_id": n["subnets"][0]["id"]}]}} for n in infos])
    counts.append(app.statements)
    assert [p["device_id"] for p in made] == [dhcp_device_id(n["id"], host) for n in infos]
    app.statements = 0
    dhcp.dhcp_ready_on_ports({}, port_ids=[p["id"] for n in infos for p in n["ports"]]
                             + [p["id"] for p in made])
    counts.append(app.statements)
    app.statements = 0
    again = dhcp.get_active_networks_info({}, host=host)
    counts.append(app.statements)
    return counts, again


def test_a_sync_costs_the_same_statements_for_4_networks_or_30(app: CountingApp) -> None:
    a_host_with_networks(app, "dhcp-small", 4)
    few, _ = sync(app, "dhcp-small")
    nets = a_host_with_networks(app, "dhcp-large", 30)
    many, infos = sync(app, "dhcp-large")
    ports_of_30 = many.pop(1) - few.pop(1)  # the 26 DHCP ports more
    assert many == few
    bulk, _ = app.counted("POST", "/v2.0/ports", json={"ports": [
        {"network_id": n, "binding:host_id": "dhcp-large", "device_owner": "network:dhcp",
         "device_id": f"bulk-{i}"} for i, n in enumerate(nets[:26])]})
    assert ports_of_30 <= bulk
    assert sorted(n["id"] for n in infos) == sorted(nets)
    assert all(len(n["ports"]) == 4 for n in infos)  # 3 VMs and the DHCP port
    statuses = app.client.simulate_get(
        "/v2.0/ports", params={"network_id": nets, "device_owner": "compute:nova"}).json
    assert {p["status"] for p in statuses["ports"]} == {"DOWN"}  # the L2 agent's block stays


def test_ports_the_l2_agent_has_wired_are_active_once_dhcp_is_ready(app: CountingApp) -> None:
    nets = a_host_with_networks(app, "dhcp-ready", 2)
    dhcp = endpoint(app)
    infos = dhcp.get_active_networks_info({}, host="dhcp-ready")
    vms = [p["id"] for n in infos for p in n["ports"]]
    from neutrino.plugins.ml2.rpc import L2Endpoint
    L2Endpoint(app.api.plugin).update_device_list(
        {}, devices_up=vms[:3], devices_down=[], agent_id="ovs", host="dhcp-ready")
    dhcp.dhcp_ready_on_ports({}, port_ids=vms)
    ports = app.client.simulate_get("/v2.0/ports", params={"network_id": nets}).json["ports"]
    assert sorted(p["id"] for p in ports if p["status"] == "ACTIVE") == sorted(vms[:3])


def test_a_network_whose_dhcp_port_cannot_be_made_costs_only_its_own(app: CountingApp) -> None:
    nets = a_host_with_networks(app, "dhcp-partial", 2)
    dhcp = endpoint(app)
    infos = {n["id"]: n for n in dhcp.get_active_networks_info({}, host="dhcp-partial")}
    made = dhcp.create_dhcp_ports({}, host="dhcp-partial", ports=[
        {"port": {"network_id": nets[0], "device_id": "d0", "project_id": "p",
                  "fixed_ips": [{"subnet_id": infos[nets[0]]["subnets"][0]["id"]}]}},
        {"port": {"network_id": nets[1], "device_id": "d1", "project_id": "p",
                  "fixed_ips": [{"subnet_id": infos[nets[0]]["subnets"][0]["id"]}]}}])
    assert made[0] is not None and made[0]["network_id"] == nets[0]
    assert made[1] is None  # a subnet of another network
