"""Zone-aware DHCP scheduling over the message bus, as upstream's DHCP
agent scheduler: a network goes only to DHCP agents of the zones it asks
for (its hints, else ``[DEFAULT] default_availability_zones``), both when
its first DHCP subnet appears and when an agent syncs; and
AZAwareWeightScheduler spreads its agents over those zones."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from tests.conftest import Client, Server
from tests.dhcp._agents import DhcpAgent, agent_id, bus, hosting_hosts

CONF = ("dhcp_agents_per_network = 2\n"
        "network_scheduler_driver = "
        "neutron.scheduler.dhcp_agent_scheduler.AZAwareWeightScheduler\n"
        "default_availability_zones = zone-a\n"
        "[ml2]\nmechanism_drivers = openvswitch\n")


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, vhost: str) -> Iterator[Server]:
    server = Server(tmp_path_factory.mktemp("dhcpaz"),
                    extra=f"transport_url = {bus(vhost)}\n{CONF}")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def admin(srv: Server) -> Client:
    return Client(srv.url, roles="admin")


@pytest.fixture
def dhcp_agents(tmp_path: Path, vhost: str,
                admin: Client) -> Iterator[Callable[..., DhcpAgent]]:
    """Starts DHCP agents of a zone; afterwards they are disabled (so later
    tests' scheduling ignores them, while their zones stay known) and stopped."""
    started: list[DhcpAgent] = []

    def start(zone: str, networks: int = 0) -> DhcpAgent:
        agent = DhcpAgent(tmp_path, vhost, networks=networks, zone=zone).start()
        started.append(agent)
        return agent
    yield start
    for agent in started:
        disable(admin, agent)
        agent.stop()


def disable(admin: Client, agent: DhcpAgent) -> None:
    status, body = admin.put(f"/v2.0/agents/{agent_id(admin, agent.host)}",
                             {"agent": {"admin_state_up": False}})
    assert status == 200, body


def network(admin: Client, cidr: str, **extra: Any) -> dict[str, Any]:
    """A network (``extra`` its attributes) with a DHCP subnet: scheduled now."""
    status, body = admin.post("/v2.0/networks", {"network": {"name": "az", **extra}})
    assert status == 201, body
    status, sub = admin.post("/v2.0/subnets", {"subnet": {
        "network_id": body["network"]["id"], "cidr": cidr, "ip_version": 4}})
    assert status == 201, sub
    return dict(body["network"])


def shown(admin: Client, network_id: str) -> dict[str, Any]:
    status, body = admin.get(f"/v2.0/networks/{network_id}")
    assert status == 200, body
    return dict(body["network"])


def test_a_hinted_network_goes_only_to_agents_of_its_zones(
        admin: Client, dhcp_agents: Callable[..., DhcpAgent]) -> None:
    idle_a = dhcp_agents("zone-a", networks=0)
    busy_b1, busy_b2 = dhcp_agents("zone-b", networks=40), dhcp_agents("zone-b", networks=50)
    net = network(admin, "10.61.0.0/24", availability_zone_hints=["zone-b"])
    assert hosting_hosts(admin, net["id"]) == sorted([busy_b1.host, busy_b2.host])
    assert idle_a.host not in hosting_hosts(admin, net["id"])
    assert shown(admin, net["id"])["availability_zones"] == ["zone-b"]
    busy_b1.recorder.wait_for("network_create_end",
                              lambda p: p["network"] == {"id": net["id"]})


def test_the_az_aware_scheduler_spreads_a_network_over_two_zones(
        admin: Client, dhcp_agents: Callable[..., DhcpAgent]) -> None:
    # The two least loaded agents are both in zone-a: a plain weight
    # scheduler would take them; the zone-aware one takes one per zone.
    a1, a2 = dhcp_agents("zone-a", networks=0), dhcp_agents("zone-a", networks=1)
    b1 = dhcp_agents("zone-b", networks=30)
    net = network(admin, "10.62.0.0/24", availability_zone_hints=["zone-a", "zone-b"])
    assert hosting_hosts(admin, net["id"]) == sorted([a1.host, b1.host])
    assert a2.host not in hosting_hosts(admin, net["id"])
    assert shown(admin, net["id"])["availability_zones"] == ["zone-a", "zone-b"]


def test_a_network_without_hints_goes_to_agents_of_the_default_zones(
        admin: Client, dhcp_agents: Callable[..., DhcpAgent]) -> None:
    a1, a2 = dhcp_agents("zone-a", networks=20), dhcp_agents("zone-a", networks=30)
    idle_b = dhcp_agents("zone-b", networks=0)
    net = network(admin, "10.63.0.0/24")
    assert net["availability_zone_hints"] == ["zone-a"]
    assert hosting_hosts(admin, net["id"]) == sorted([a1.host, a2.host])
    assert idle_b.host not in hosting_hosts(admin, net["id"])
    assert shown(admin, net["id"])["availability_zones"] == ["zone-a"]


def test_an_agent_of_another_zone_syncing_does_not_take_a_hinted_network(
        admin: Client, dhcp_agents: Callable[..., DhcpAgent]) -> None:
    disable(admin, dhcp_agents("zone-b"))  # zone-b is known, but no agent serves it
    net = network(admin, "10.64.0.0/24", availability_zone_hints=["zone-b"])
    assert hosting_hosts(admin, net["id"]) == []
    other = dhcp_agents("zone-a")
    assert other.api is not None
    assert net["id"] not in [n["id"] for n in other.api.get_active_networks_info()]
    assert hosting_hosts(admin, net["id"]) == []
    # An agent of the hinted zone syncing takes it.
    late = dhcp_agents("zone-b")
    assert late.api is not None
    assert net["id"] in [n["id"] for n in late.api.get_active_networks_info()]
    assert hosting_hosts(admin, net["id"]) == [late.host]
