"""L2 agents over RabbitMQ: device details for their host, and the port
status lifecycle (DOWN when bound, BUILD while wired, ACTIVE once the L2
agent reports the device up, DOWN again when it goes away)."""
from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

from neutrino.agents.rpc import PluginApi
from tests.conftest import Client, Server
from tests.rpc.bus import OvsAgent, agent_conf, bus

ML2 = ("[ml2]\ntype_drivers = flat,vlan,vxlan\ntenant_network_types = vxlan\n"
       "mechanism_drivers = openvswitch\n[ml2_type_vxlan]\nvni_ranges = 500:600\n")



@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, vhost: str) -> Iterator[Server]:
    server = Server(tmp_path_factory.mktemp("l2rpc"),
                    extra=f"transport_url = {bus(vhost)}\n{ML2}")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def admin(srv: Server) -> Client:
    return Client(srv.url, roles="admin")


@pytest.fixture
def host(srv: Server, vhost: str, tmp_path: Path) -> Iterator[tuple[str, PluginApi]]:
    """A host whose OVS agent has reported in, and that agent's RPC client."""
    name = f"host-{uuid.uuid4().hex[:6]}"
    conf = agent_conf(tmp_path, vhost, name)
    agent = OvsAgent(conf)
    agent.register()
    api = PluginApi(conf, agent_id=f"ovs-{name}", host=name)
    try:
        yield name, api
    finally:
        api.close()
        agent.stop()


def bound_port(admin: Client, host_name: str) -> dict[str, Any]:
    status, net = admin.post("/v2.0/networks", {"network": {"name": "l2"}})
    assert status == 201, net
    status, body = admin.post("/v2.0/ports", {"port": {"network_id": net["network"]["id"],
                                                       "binding:host_id": host_name}})
    assert status == 201, body
    return body["port"]


def status_of(admin: Client, port_id: str) -> str:
    return admin.get(f"/v2.0/ports/{port_id}")[1]["port"]["status"]


def test_a_bound_port_goes_build_then_active_then_down(
        admin: Client, host: tuple[str, PluginApi]) -> None:
    name, api = host
    port = bound_port(admin, name)
    assert port["binding:vif_type"] == "ovs" and port["status"] == "DOWN"
    details = api.get_device_details(port["id"])
    assert details["port_id"] == port["id"] and details["network_type"] == "vxlan"
    assert 500 <= details["segmentation_id"] <= 600
    assert details["mac_address"] == port["mac_address"]
    assert details["fixed_ips"] == port["fixed_ips"]
    assert status_of(admin, port["id"]) == "BUILD"
    api.update_device_up(port["id"])
    assert status_of(admin, port["id"]) == "ACTIVE"
    assert api.update_device_down(port["id"]) == {"device": port["id"], "exists": True}
    assert status_of(admin, port["id"]) == "DOWN"


def test_agents_get_nothing_to_wire_for_ports_of_other_hosts_or_gone(
        admin: Client, host: tuple[str, PluginApi]) -> None:
    name, api = host
    port = bound_port(admin, name)
    other = PluginApi(api.client.transport.conf, agent_id="x", host="elsewhere")
    try:
        assert other.get_device_details(port["id"]) == {"device": port["id"],
                                                        "no_active_binding": True}
        other.update_device_up(port["id"])  # ignored: not bound there
    finally:
        other.close()
    assert status_of(admin, port["id"]) == "DOWN"
    missing = str(uuid.uuid4())
    assert api.get_device_details(missing) == {"device": missing}
    assert api.update_device_down(missing) == {"device": missing, "exists": False}


def test_devices_are_found_by_the_tap_name_prefix_too(
        admin: Client, host: tuple[str, PluginApi]) -> None:
    name, api = host
    port = bound_port(admin, name)
    details = api.get_device_details(port["id"][:11])
    assert details["port_id"] == port["id"]


def test_device_lists_report_each_device(admin: Client, host: tuple[str, PluginApi]) -> None:
    name, api = host
    first, second = bound_port(admin, name), bound_port(admin, name)
    result = api.update_device_list([first["id"]], [second["id"]])
    assert result == {"devices_up": [first["id"]], "failed_devices_up": [],
                      "devices_down": [second["id"]], "failed_devices_down": []}
    assert status_of(admin, first["id"]) == "ACTIVE"
    listed = api.get_devices_details_list_and_failed_devices([first["id"], second["id"]])
    assert [d["port_id"] for d in listed["devices"]] == [first["id"], second["id"]]
    assert listed["failed_devices"] == []


def test_rebinding_to_another_host_makes_an_active_port_down_again(
        admin: Client, host: tuple[str, PluginApi]) -> None:
    name, api = host
    port = bound_port(admin, name)
    api.get_device_details(port["id"])
    api.update_device_up(port["id"])
    assert status_of(admin, port["id"]) == "ACTIVE"
    status, body = admin.put(f"/v2.0/ports/{port['id']}", {"port": {"binding:host_id": ""}})
    assert status == 200, body
    assert body["port"]["status"] == "DOWN"


def test_an_agent_gets_the_ports_bound_to_its_host(
        admin: Client, host: tuple[str, PluginApi]) -> None:
    """Upstream's ``get_ports_by_vnic_type_and_host``: what a restarted agent
    compares with its switch to report the ports whose device is gone."""
    name, api = host
    port = bound_port(admin, name)
    elsewhere = bound_port(admin, f"{name}-other")
    found = api.get_ports_by_vnic_type_and_host("normal")
    assert [p["id"] for p in found] == [port["id"]]
    assert found[0]["binding:vif_type"] == "ovs" and found[0]["status"] == "DOWN"
    assert api.get_ports_by_vnic_type_and_host("direct") == []
    assert elsewhere["id"] not in [p["id"] for p in found]
