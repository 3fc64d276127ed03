"""DHCP agents over RabbitMQ: what they ask the server (their networks with
DHCP subnets and ports, their DHCP ports), what the server tells them after
each change (upstream's casts and payloads), and ports that are ACTIVE only
once both the L2 agent and the DHCP agent have said they are ready."""
from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any, Iterator

import oslo_messaging
import pytest

from neutrino.agents.rpc import PluginApi
from neutrino.service import make_conf
from tests.conftest import Client, Server
from tests.dhcp._agents import DhcpAgent, agent_id, bus, hosting_hosts, network_with_subnet
from tests.rpc.bus import OvsAgent

ML2 = ("[ml2]\ntype_drivers = flat,vlan,vxlan\ntenant_network_types = vxlan\n"
       "mechanism_drivers = openvswitch\n[ml2_type_vxlan]\nvni_ranges = 700:800\n")



@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, vhost: str) -> Iterator[Server]:
    server = Server(tmp_path_factory.mktemp("dhcprpc"),
                    extra=f"transport_url = {bus(vhost)}\n{ML2}")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def admin(srv: Server) -> Client:
    return Client(srv.url, roles="admin")


@pytest.fixture
def dhcp(tmp_path: Path, vhost: str, admin: Client) -> Iterator[DhcpAgent]:
    """One DHCP agent, the only enabled one while the test runs."""
    agent = DhcpAgent(tmp_path, vhost).start()
    yield agent
    admin.put(f"/v2.0/agents/{agent_id(admin, agent.host)}",
              {"agent": {"admin_state_up": False}})
    agent.stop()


@pytest.fixture
def l2(dhcp: DhcpAgent, vhost: str, tmp_path: Path) -> Iterator[PluginApi]:
    """The OVS agent of the DHCP agent's host, and its L2 RPC client."""
    conf_file = tmp_path / "ovs.conf"
    conf_file.write_text(f"[DEFAULT]\nhost = {dhcp.host}\ntransport_url = {bus(vhost)}\n")
    conf = make_conf(["--config-file", str(conf_file)])
    agent = OvsAgent(conf)
    agent.register()
    api = PluginApi(conf, agent_id=f"ovs-{dhcp.host}", host=dhcp.host)
    yield api
    api.close()
    agent.stop()


def vm_port(admin: Client, network_id: str, host: str, **extra: Any) -> dict[str, Any]:
    status, body = admin.post("/v2.0/ports", {"port": {
        "network_id": network_id, "device_owner": "compute:nova",
        "device_id": str(uuid.uuid4()), "binding:host_id": host, **extra}})
    assert status == 201, body
    return dict(body["port"])


def status_of(admin: Client, port_id: str) -> str:
    return str(admin.get(f"/v2.0/ports/{port_id}")[1]["port"]["status"])


# -- what agents ask -------------------------------------------------------------------


def test_an_agent_gets_its_networks_with_dhcp_subnets_and_ports(
        admin: Client, dhcp: DhcpAgent) -> None:
    assert dhcp.api is not None
    network_id, subnet_id = network_with_subnet(admin)
    status, _ = admin.post("/v2.0/subnets", {"subnet": {
        "network_id": network_id, "cidr": "10.29.0.0/24", "ip_version": 4,
        "enable_dhcp": False}})
    assert status == 201
    port = vm_port(admin, network_id, "elsewhere")
    infos = dhcp.api.get_active_networks_info()
    assert [i["id"] for i in infos] == [network_id]
    info = infos[0]
    assert [s["id"] for s in info["subnets"]] == [subnet_id]
    assert [p["id"] for p in info["ports"]] == [port["id"]]
    assert info["ports"][0]["fixed_ips"] == port["fixed_ips"]
    assert info["admin_state_up"] is True and info["mtu"] == 1450
    assert info["non_local_subnets"] == [] and info["project_id"] == "admin"
    assert len(dhcp.api.get_active_networks_info(enable_dhcp_filter=False)[0]["subnets"]) == 2
    single = dhcp.api.get_network_info(network_id)
    assert single is not None and single["id"] == network_id and single["subnets"] == info["subnets"]
    assert dhcp.api.get_network_info(str(uuid.uuid4())) is None


def test_an_agent_syncing_takes_the_networks_that_lack_an_agent(
        admin: Client, tmp_path: Path, vhost: str, dhcp: DhcpAgent) -> None:
    # Disable the only agent: a new network is left unscheduled.
    dhcp_id = agent_id(admin, dhcp.host)
    admin.put(f"/v2.0/agents/{dhcp_id}", {"agent": {"admin_state_up": False}})
    network_id, _ = network_with_subnet(admin)
    assert hosting_hosts(admin, network_id) == []
    late = DhcpAgent(tmp_path, vhost).start()
    try:
        assert late.api is not None
        assert network_id in [i["id"] for i in late.api.get_active_networks_info()]
        assert late.host in hosting_hosts(admin, network_id)
    finally:
        admin.put(f"/v2.0/agents/{agent_id(admin, late.host)}",
                  {"agent": {"admin_state_up": False}})
        late.stop()


def test_an_agent_creates_updates_and_releases_its_dhcp_port(
        admin: Client, dhcp: DhcpAgent) -> None:
    assert dhcp.api is not None
    network_id, subnet_id = network_with_subnet(admin)
    device_id = f"dhcp{uuid.uuid5(uuid.NAMESPACE_DNS, dhcp.host)}-{network_id}"
    port = dhcp.api.create_dhcp_port({"port": {
        "name": "", "admin_state_up": True, "network_id": network_id, "tenant_id": "admin",
        "device_id": device_id, "fixed_ips": [{"subnet_id": subnet_id}]}})
    assert port is not None
    assert port["device_owner"] == "network:dhcp" and port["binding:host_id"] == dhcp.host
    assert port["fixed_ips"][0]["subnet_id"] == subnet_id
    assert dhcp.api.get_dhcp_port(port["id"])["id"] == port["id"]
    updated = dhcp.api.update_dhcp_port(port["id"], {"port": {
        "network_id": network_id, "name": "renamed",
        "fixed_ips": [{"subnet_id": subnet_id, "ip_address": "10.9.0.250"}]}})
    assert updated is not None and updated["fixed_ips"][0]["ip_address"] == "10.9.0.250"
    # A network gone meanwhile: no port, and no error for the agent.
    assert dhcp.api.create_dhcp_port({"port": {
        "network_id": str(uuid.uuid4()), "tenant_id": "admin", "device_id": "x",
        "fixed_ips": []}}) is None
    # Taken off the agent, the port is kept for the next agent (same address).
    status, _ = admin.delete(
        f"/v2.0/agents/{agent_id(admin, dhcp.host)}/dhcp-networks/{network_id}")
    assert status == 204
    kept = admin.get(f"/v2.0/ports/{port['id']}")[1]["port"]
    assert kept["device_id"] == "reserved_dhcp_port" and kept["fixed_ips"] == updated["fixed_ips"]
    # An agent not hosting the network may not update it.
    with pytest.raises(oslo_messaging.RemoteError) as raised:
        dhcp.api.update_dhcp_port(port["id"], {"port": {"network_id": network_id}})
    assert raised.value.exc_type == "NetworkNotFound"
    dhcp.api.release_dhcp_port(network_id, "reserved_dhcp_port")
    assert admin.get(f"/v2.0/ports/{port['id']}")[0] == 404


# -- what agents are told ----------------------------------------------------------------


def test_agents_are_told_about_changes_on_their_networks(
        admin: Client, dhcp: DhcpAgent) -> None:
    rec = dhcp.recorder
    network_id, subnet_id = network_with_subnet(admin)
    rec.wait_for("network_create_end", lambda p: p["network"]["id"] == network_id)
    created = rec.wait_for("subnet_create_end", lambda p: p["subnet"]["id"] == subnet_id)
    assert created["priority"] == 3 and created["subnet"]["cidr"] == "10.9.0.0/24"
    admin.put(f"/v2.0/subnets/{subnet_id}", {"subnet": {"name": "renamed"}})
    rec.wait_for("subnet_update_end", lambda p: p["subnet"]["name"] == "renamed")
    admin.put(f"/v2.0/networks/{network_id}", {"network": {"name": "renamed"}})
    rec.wait_for("network_update_end",
                 lambda p: p["network"]["name"] == "renamed" and p["priority"] == 1)
    port = vm_port(admin, network_id, "")
    made = rec.wait_for("port_create_end", lambda p: p["port"]["id"] == port["id"])
    assert made["priority"] == 5  # the one agent gets it at high priority
    admin.put(f"/v2.0/ports/{port['id']}", {"port": {"name": "no dhcp change"}})
    admin.put(f"/v2.0/ports/{port['id']}", {"port": {"extra_dhcp_opts": [
        {"opt_name": "mtu", "opt_value": "1400"}]}})
    rec.wait_for("port_update_end", lambda p: p["port"]["id"] == port["id"])
    assert not [c for c in rec.calls if c[0] == "port_update_end"
                and c[1]["port"].get("name") == "no dhcp change"
                and not c[1]["port"].get("extra_dhcp_opts")]
    admin.delete(f"/v2.0/ports/{port['id']}")
    gone = rec.wait_for("port_delete_end", lambda p: p["port_id"] == port["id"])
    assert gone == {"port_id": port["id"], "network_id": network_id,
                    "fixed_ips": port["fixed_ips"], "priority": 6}
    admin.delete(f"/v2.0/subnets/{subnet_id}")
    assert rec.wait_for("subnet_delete_end", lambda p: p["subnet_id"] == subnet_id) == {
        "subnet_id": subnet_id, "network_id": network_id, "priority": 4}
    admin.delete(f"/v2.0/networks/{network_id}")
    assert rec.wait_for("network_delete_end", lambda p: p["network_id"] == network_id) == {
        "network_id": network_id, "priority": 2}


def test_agents_hear_nothing_of_networks_they_do_not_serve(
        admin: Client, dhcp: DhcpAgent) -> None:
    admin.put(f"/v2.0/agents/{agent_id(admin, dhcp.host)}", {"agent": {"admin_state_up": False}})
    assert dhcp.recorder.wait_for("agent_updated") == {"admin_state_up": False}
    network_id, subnet_id = network_with_subnet(admin)
    admin.put(f"/v2.0/subnets/{subnet_id}", {"subnet": {"name": "x"}})
    admin.delete(f"/v2.0/networks/{network_id}")  # a fanout: every agent hears it
    dhcp.recorder.wait_for("network_delete_end", lambda p: p["network_id"] == network_id)
    assert [c[0] for c in dhcp.recorder.calls] == ["agent_updated", "network_delete_end"]


# -- provisioning ---------------------------------------------------------------------------


def test_a_port_is_active_only_after_l2_up_and_dhcp_ready(
        admin: Client, dhcp: DhcpAgent, l2: PluginApi) -> None:
    assert dhcp.api is not None
    network_id, _ = network_with_subnet(admin)
    assert hosting_hosts(admin, network_id) == [dhcp.host]
    first = vm_port(admin, network_id, dhcp.host)
    second = vm_port(admin, network_id, dhcp.host)
    # L2 first, then DHCP.
    l2.get_device_details(first["id"])
    l2.update_device_up(first["id"])
    assert status_of(admin, first["id"]) == "BUILD"
    dhcp.api.dhcp_ready_on_ports([first["id"]])
    assert status_of(admin, first["id"]) == "ACTIVE"
    # DHCP first, then L2.
    dhcp.api.dhcp_ready_on_ports([second["id"]])
    assert status_of(admin, second["id"]) == "DOWN"
    l2.get_device_details(second["id"])
    l2.update_device_up(second["id"])
    assert status_of(admin, second["id"]) == "ACTIVE"


def test_ports_wait_for_no_dhcp_without_a_live_agent_or_dhcp_subnet(
        admin: Client, dhcp: DhcpAgent, l2: PluginApi) -> None:
    no_dhcp, _ = network_with_subnet(admin, enable_dhcp=False)
    port = vm_port(admin, no_dhcp, dhcp.host)
    l2.get_device_details(port["id"])
    l2.update_device_up(port["id"])
    assert status_of(admin, port["id"]) == "ACTIVE"
    # The DHCP agent's own port waits for L2 only.
    served, subnet_id = network_with_subnet(admin)
    own = vm_port(admin, served, dhcp.host, device_owner="network:dhcp")
    l2.get_device_details(own["id"])
    l2.update_device_up(own["id"])
    assert status_of(admin, own["id"]) == "ACTIVE"
