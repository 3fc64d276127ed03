"""Routers on L3 agents: automatic scheduling (least routers), the
``l3_agent_scheduler`` API with its policy, and the casts agents receive."""
from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.api import _helpers as h
from tests.conftest import Client, Server
from tests.l3 import _l3
from tests.l3agent.conftest import agent_conf, agent_id, hosts_of, start_server
from tests.rpc.bus import OvsAgent


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, vhost: str) -> Iterator[Server]:
    server = start_server(tmp_path_factory.mktemp("l3sched"), vhost)
    yield server
    server.stop()


pytestmark = pytest.mark.usefixtures("only_this_tests_agents")


def router_with_interface(client: Client) -> dict[str, Any]:
    router = _l3.router(client)
    _l3.add_interface(client, router["id"], subnet_id=_l3.private_subnet(client)["id"])
    return router


def test_a_router_is_scheduled_once_it_has_an_interface(admin, member, l3_agents):
    agent = l3_agents()
    router = _l3.router(member)
    assert hosts_of(admin, router["id"]) == []
    assert agent.recorder.calls == []
    _l3.add_interface(member, router["id"], subnet_id=_l3.private_subnet(member)["id"])
    assert hosts_of(admin, router["id"]) == [agent.host]
    assert agent.recorder.wait_for("routers_updated", {"routers": [router["id"]]})


def test_least_routers_spreads_routers_over_agents(admin, member, l3_agents):
    first, second = l3_agents(), l3_agents()
    placed = [hosts_of(admin, router_with_interface(member)["id"]) for _ in range(4)]
    assert sorted(p[0] for p in placed) == sorted([first.host, second.host] * 2)
    # A disabled agent gets no new routers.
    assert admin.put(f"/v2.0/agents/{agent_id(admin, second.host)}",
                     {"agent": {"admin_state_up": False}})[0] == 200
    assert [hosts_of(admin, router_with_interface(member)["id"]) for _ in range(2)] == [
        [first.host], [first.host]]


def test_a_router_without_ports_is_not_scheduled(admin, member, l3_agents):
    l3_agents()
    router = _l3.router(member)
    member.put(f"/v2.0/routers/{router['id']}", {"router": {"name": "renamed"}})
    assert hosts_of(admin, router["id"]) == []


def test_a_router_with_a_gateway_is_scheduled_and_its_agent_told(admin, member, l3_agents):
    agent = l3_agents()
    ext, _ = _l3.external_network(admin)
    router = _l3.router(member)
    status, _ = member.put(f"/v2.0/routers/{router['id']}",
                           {"router": {"external_gateway_info": {"network_id": ext["id"]}}})
    assert status == 200
    assert agent.recorder.wait_for("routers_updated", {"routers": [router["id"]]})
    assert hosts_of(admin, router["id"]) == [agent.host]


def test_scheduler_api_add_list_remove(admin, member, l3_agents):
    one, two = l3_agents(), l3_agents()
    one_id, two_id = agent_id(admin, one.host), agent_id(admin, two.host)
    router = _l3.router(member)
    assert admin.post(f"/v2.0/agents/{one_id}/l3-routers",
                      {"router_id": router["id"]}) == (201, None)
    assert one.recorder.wait_for("router_added_to_agent", {"payload": [router["id"]]})
    # Again on the same agent: nothing to do.
    assert admin.post(f"/v2.0/agents/{one_id}/l3-routers",
                      {"router_id": router["id"]}) == (201, None)
    status, body = admin.get(f"/v2.0/agents/{one_id}/l3-routers")
    assert status == 200 and [r["id"] for r in body["routers"]] == [router["id"]]
    assert body["routers"][0]["name"] == router["name"]
    status, body = admin.get(f"/v2.0/routers/{router['id']}/l3-agents")
    assert status == 200 and [a["id"] for a in body["agents"]] == [one_id]
    assert body["agents"][0]["agent_type"] == "L3 agent"

    status, body = admin.post(f"/v2.0/agents/{two_id}/l3-routers", {"router_id": router["id"]})
    assert status == 409 and body["NeutronError"]["type"] == "RouterHostedByL3Agent"
    assert body["NeutronError"]["message"] == (
        f"The router {router['id']} has been already hosted by the L3 Agent {one_id}.")

    status, _ = admin.delete(f"/v2.0/agents/{one_id}/l3-routers/{router['id']}")
    assert status == 204
    assert one.recorder.wait_for("router_removed_from_agent",
                                 {"payload": {"router_id": router["id"]}})
    assert admin.get(f"/v2.0/agents/{one_id}/l3-routers") == (200, {"routers": []})
    assert hosts_of(admin, router["id"]) == []
    assert admin.post(f"/v2.0/agents/{two_id}/l3-routers",
                      {"router_id": router["id"]}) == (201, None)
    assert hosts_of(admin, router["id"]) == [two.host]


def test_scheduler_api_errors(admin, member, l3_agents, tmp_path: Path, vhost: str):
    agent = l3_agents()
    good = agent_id(admin, agent.host)
    router = _l3.router(member)
    missing = str(uuid.uuid4())
    status, body = admin.get(f"/v2.0/agents/{missing}/l3-routers")
    assert status == 404 and body["NeutronError"]["type"] == "AgentNotFound"
    status, body = admin.post(f"/v2.0/agents/{missing}/l3-routers", {"router_id": missing})
    assert status == 404 and body["NeutronError"]["type"] == "RouterNotFound"
    status, body = admin.post(f"/v2.0/agents/{missing}/l3-routers", {"router_id": router["id"]})
    assert status == 404 and body["NeutronError"]["type"] == "AgentNotFound"
    status, body = admin.get(f"/v2.0/routers/{missing}/l3-agents")
    assert status == 404 and body["NeutronError"]["type"] == "RouterNotFound"
    status, body = admin.delete(f"/v2.0/agents/{missing}/l3-routers/{router['id']}")
    assert status == 404 and body["NeutronError"]["type"] == "AgentNotFound"

    ovs = OvsAgent(agent_conf(tmp_path, vhost, f"ovs-{uuid.uuid4().hex[:6]}"))
    assert ovs.register() == "new"
    try:
        ovs_id = agent_id(admin, ovs.host, "Open vSwitch agent")
        status, body = admin.post(f"/v2.0/agents/{ovs_id}/l3-routers",
                                  {"router_id": router["id"]})
        assert status == 404 and body["NeutronError"] == {
            "type": "InvalidL3Agent", "detail": "",
            "message": f"Agent {ovs_id} is not a L3 Agent or has been disabled"}
    finally:
        ovs.stop()

    assert admin.put(f"/v2.0/agents/{good}", {"agent": {"admin_state_up": False}})[0] == 200
    status, body = admin.post(f"/v2.0/agents/{good}/l3-routers", {"router_id": router["id"]})
    assert status == 404 and body["NeutronError"]["type"] == "InvalidL3Agent"
    assert hosts_of(admin, router["id"]) == []


def test_scheduler_api_is_admin_only(admin, member, l3_agents):
    agent = l3_agents()
    aid = agent_id(admin, agent.host)
    router = _l3.router(member)
    for method, path, rule in (
            ("GET", f"/v2.0/agents/{aid}/l3-routers", "get_l3-routers"),
            ("POST", f"/v2.0/agents/{aid}/l3-routers", "create_l3-router"),
            ("DELETE", f"/v2.0/agents/{aid}/l3-routers/{router['id']}", "delete_l3-router"),
            ("GET", f"/v2.0/routers/{router['id']}/l3-agents", "get_l3-agents")):
        status, body = member.req(method, path,
                                  {"router_id": router["id"]} if method == "POST" else None)
        assert status == 403, (method, path, body)
        assert body["NeutronError"] == {"type": "PolicyNotAuthorized", "detail": "",
                                        "message": f"rule:{rule} is disallowed by policy"}
    assert hosts_of(admin, router["id"]) == []


def test_deleting_a_router_tells_every_l3_agent(admin, member, l3_agents):
    one, two = l3_agents(), l3_agents()
    router = _l3.router(member)
    assert member.delete(f"/v2.0/routers/{router['id']}")[0] == 204
    for agent in (one, two):
        assert agent.recorder.wait_for("router_deleted", {"router_id": router["id"]})


def test_the_extension_is_listed(admin):
    status, body = admin.get("/v2.0/extensions/l3_agent_scheduler")
    assert status == 200
    assert body["extension"]["name"] == "L3 Agent Scheduler"
    assert body["extension"]["description"] == "Schedule routers among l3 agents"
    assert h  # builders shared with the API tests
