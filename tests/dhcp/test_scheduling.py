"""Networks are scheduled onto DHCP agents as upstream schedules them: when
their first DHCP-enabled subnet appears, onto the least loaded live agents
(WeightScheduler), as many as ``dhcp_agents_per_network``; and the scheduler
API lets an admin (only) add and remove networks by hand."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterator

import pytest

from tests.conftest import Client, Server
from tests.dhcp._agents import DhcpAgent, agent_id, bus, hosting_hosts, network_with_subnet

ML2 = "[ml2]\nmechanism_drivers = openvswitch\n"


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, vhost: str) -> Iterator[Server]:
    server = Server(tmp_path_factory.mktemp("dhcpsched"),
                    extra=f"transport_url = {bus(vhost)}\n{ML2}")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def admin(srv: Server) -> Client:
    return Client(srv.url, roles="admin")


@pytest.fixture
def member(srv: Server) -> Client:
    return Client(srv.url, project="5" * 32, roles="member,reader")


@pytest.fixture
def dhcp_agents(tmp_path: Path, vhost: str,
                admin: Client) -> Iterator[Callable[..., DhcpAgent]]:
    """Starts DHCP agents; afterwards they are disabled (so later tests'
    scheduling ignores them) and stopped."""
    started: list[DhcpAgent] = []

    def start(networks: int = 0) -> DhcpAgent:
        agent = DhcpAgent(tmp_path, vhost, networks=networks).start()
        started.append(agent)
        return agent
    yield start
    for agent in started:
        admin.put(f"/v2.0/agents/{agent_id(admin, agent.host)}",
                  {"agent": {"admin_state_up": False}})
        agent.stop()


def test_a_network_is_scheduled_with_its_first_dhcp_subnet_to_the_least_loaded_agent(
        admin: Client, dhcp_agents: Callable[..., DhcpAgent]) -> None:
    busy, idle = dhcp_agents(networks=50), dhcp_agents(networks=0)
    status, net = admin.post("/v2.0/networks", {"network": {"name": "n"}})
    assert hosting_hosts(admin, net["network"]["id"]) == []  # no subnet yet
    network_id, _ = network_with_subnet(admin)
    assert hosting_hosts(admin, network_id) == [idle.host]
    status, body = admin.get(f"/v2.0/agents/{agent_id(admin, idle.host)}/dhcp-networks")
    assert status == 200 and [n["id"] for n in body["networks"]] == [network_id]
    assert body["networks"][0]["name"] == "dhcp-test"
    status, body = admin.get(f"/v2.0/agents/{agent_id(admin, busy.host)}/dhcp-networks")
    assert status == 200 and body == {"networks": []}


def test_networks_without_dhcp_subnets_get_no_agent(
        admin: Client, dhcp_agents: Callable[..., DhcpAgent]) -> None:
    dhcp_agents()
    network_id, _ = network_with_subnet(admin, enable_dhcp=False)
    assert hosting_hosts(admin, network_id) == []


def test_a_network_gets_one_agent_by_default(
        admin: Client, dhcp_agents: Callable[..., DhcpAgent]) -> None:
    first, second = dhcp_agents(), dhcp_agents()
    network_id, _ = network_with_subnet(admin)
    hosts = hosting_hosts(admin, network_id)
    assert len(hosts) == 1 and hosts[0] in (first.host, second.host)
    status, _ = admin.post("/v2.0/subnets", {"subnet": {
        "network_id": network_id, "cidr": "10.19.0.0/24", "ip_version": 4}})
    assert status == 201
    assert hosting_hosts(admin, network_id) == hosts  # a second subnet changes nothing


def test_admins_add_and_remove_networks_by_hand(
        admin: Client, dhcp_agents: Callable[..., DhcpAgent]) -> None:
    first = dhcp_agents()
    network_id, _ = network_with_subnet(admin)
    second = dhcp_agents()
    second_id = agent_id(admin, second.host)
    path = f"/v2.0/agents/{second_id}/dhcp-networks"
    status, body = admin.post(path, {"network_id": network_id})
    assert status == 201 and body is None  # upstream answers ``null``
    assert hosting_hosts(admin, network_id) == sorted([first.host, second.host])
    second.recorder.wait_for("network_create_end",
                             lambda p: p == {"network": {"id": network_id}, "priority": 0})
    status, body = admin.post(path, {"network_id": network_id})
    assert status == 409 and body["NeutronError"]["type"] == "NetworkHostedByDHCPAgent"
    assert body["NeutronError"]["message"] == (
        f"The network {network_id} has been already hosted by the DHCP Agent {second_id}.")
    status, _ = admin.delete(f"{path}/{network_id}")
    assert status == 204
    second.recorder.wait_for("network_delete_end",
                             lambda p: p == {"network_id": network_id, "priority": 2})
    assert hosting_hosts(admin, network_id) == [first.host]
    status, body = admin.delete(f"{path}/{network_id}")
    assert status == 409 and body["NeutronError"]["type"] == "NetworkNotHostedByDhcpAgent"
    assert body["NeutronError"]["message"] == (
        f"The network {network_id} is not hosted by the DHCP Agent {second_id}.")


def test_scheduler_api_errors_are_upstreams(
        admin: Client, dhcp_agents: Callable[..., DhcpAgent]) -> None:
    agent = dhcp_agents()
    path = f"/v2.0/agents/{agent_id(admin, agent.host)}/dhcp-networks"
    status, body = admin.post(path, {"network_id": "no-such-network"})
    assert status == 404 and body["NeutronError"]["type"] == "NetworkNotFound"
    network_id, _ = network_with_subnet(admin)
    status, body = admin.post("/v2.0/agents/no-such-agent/dhcp-networks",
                              {"network_id": network_id})
    assert status == 404 and body["NeutronError"] == {
        "type": "AgentNotFound", "message": "Agent no-such-agent could not be found.",
        "detail": ""}
    status, body = admin.get("/v2.0/agents/no-such-agent/dhcp-networks")
    assert status == 404 and body["NeutronError"]["type"] == "AgentNotFound"
    status, body = admin.post(path, {})
    assert status == 400
    # A disabled agent takes no network, by hand either.
    agent_uuid = agent_id(admin, agent.host)
    admin.put(f"/v2.0/agents/{agent_uuid}", {"agent": {"admin_state_up": False}})
    other, _ = network_with_subnet(admin)
    status, body = admin.post(path, {"network_id": other})
    assert status == 404 and body["NeutronError"] == {
        "type": "InvalidDHCPAgent",
        "message": f"Agent {agent_uuid} is not a valid DHCP Agent or has been disabled.",
        "detail": ""}
    status, body = admin.get("/v2.0/networks/unknown/dhcp-agents")
    assert status == 200 and body == {"agents": []}  # as upstream: no existence check


def test_only_admins_may_use_the_scheduler_api(
        admin: Client, member: Client, dhcp_agents: Callable[..., DhcpAgent]) -> None:
    agent = dhcp_agents()
    status, net = member.post("/v2.0/networks", {"network": {"name": "mine"}})
    network_id = net["network"]["id"]
    path = f"/v2.0/agents/{agent_id(admin, agent.host)}/dhcp-networks"
    for method, url, body, rule in (
            ("GET", path, None, "get_dhcp-networks"),
            ("POST", path, {"network_id": network_id}, "create_dhcp-network"),
            ("DELETE", f"{path}/{network_id}", None, "delete_dhcp-network"),
            ("GET", f"/v2.0/networks/{network_id}/dhcp-agents", None, "get_dhcp-agents")):
        status, answer = member.req(method, url, body)
        assert status == 403, (method, url, answer)
        assert answer["NeutronError"] == {
            "type": "PolicyNotAuthorized",
            "message": f"rule:{rule} is disallowed by policy", "detail": ""}
    assert hosting_hosts(admin, network_id) == []


def test_the_extension_is_listed(admin: Client) -> None:
    status, body = admin.get("/v2.0/extensions/dhcp_agent_scheduler")
    assert status == 200 and body["extension"]["name"] == "DHCP Agent Scheduler"
