"""The agents API and availability zones, over agents' own reports."""
from __future__ import annotations

import datetime as dt
from typing import Any, Iterator

import pytest

from neutrino.db.engine import make_engine
from neutrino.plugins.ml2 import agents_db
from tests.conftest import Client, Server

PROJECT = "c" * 32


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = Server(tmp_path_factory.mktemp("agents"), extra="agent_down_time = 60\n").start()
    yield server
    server.stop()


@pytest.fixture
def admin(srv: Server) -> Client:
    return Client(srv.url, roles="admin")


@pytest.fixture
def member(srv: Server) -> Client:
    return Client(srv.url, project=PROJECT, roles="member,reader")


def report(srv: Server, agent_type: str, host: str, age: int = 0, zone: str | None = None,
           configurations: dict[str, Any] | None = None) -> str:
    """Write an agent's row as its state report does."""
    engine = make_engine(f"sqlite:///{srv.tmp / 'var' / 'neutrino.sqlite'}")
    try:
        with engine.begin() as conn:
            return agents_db.report(conn, agent_type, f"neutrino-{host}", host, "topic",
                                    configurations or {}, agents_db.utcnow()
                                    - dt.timedelta(seconds=age), zone)
    finally:
        engine.dispose()


def clear(admin: Client) -> None:
    for agent in admin.get("/v2.0/agents")[1]["agents"]:
        admin.delete(f"/v2.0/agents/{agent['id']}")


def test_admins_see_reported_agents_with_liveness_from_the_heartbeat(
        srv: Server, admin: Client) -> None:
    clear(admin)
    fresh = report(srv, "Open vSwitch agent", "h1", configurations={"bridge_mappings": {"p": "br"}})
    stale = report(srv, "DHCP agent", "h2", age=3600)
    status, body = admin.get("/v2.0/agents?sort_key=host&sort_dir=asc")
    assert status == 200
    assert [(a["id"], a["host"], a["alive"]) for a in body["agents"]] == [
        (fresh, "h1", True), (stale, "h2", False)]
    first = body["agents"][0]
    assert first["configurations"] == {"bridge_mappings": {"p": "br"}}
    assert first["agent_type"] == "Open vSwitch agent" and first["admin_state_up"] is True
    assert set(first) >= {"binary", "topic", "created_at", "started_at",
                          "heartbeat_timestamp", "description", "availability_zone",
                          "resources_synced"}
    assert [a["id"] for a in admin.get("/v2.0/agents?alive=false")[1]["agents"]] == [stale]
    assert [a["id"] for a in admin.get("/v2.0/agents?alive=true")[1]["agents"]] == [fresh]
    assert [a["id"] for a in admin.get("/v2.0/agents?agent_type=DHCP%20agent")[1]["agents"]] \
        == [stale]


def test_projects_see_no_agents(srv: Server, admin: Client, member: Client) -> None:
    agent = report(srv, "L3 agent", "h3")
    assert member.get("/v2.0/agents") == (200, {"agents": []})
    status, body = member.get(f"/v2.0/agents/{agent}")
    assert status == 404 and body["NeutronError"]["type"] == "AgentNotFound"
    assert member.put(f"/v2.0/agents/{agent}", {"agent": {"description": "x"}})[0] == 404


def test_admins_disable_and_describe_an_agent_but_change_nothing_it_reports(
        srv: Server, admin: Client) -> None:
    agent = report(srv, "L3 agent", "h4")
    status, body = admin.put(f"/v2.0/agents/{agent}",
                             {"agent": {"admin_state_up": False, "description": "drained"}})
    assert status == 200, body
    assert (body["agent"]["admin_state_up"], body["agent"]["description"]) == (False, "drained")
    assert admin.get(f"/v2.0/agents/{agent}")[1]["agent"]["admin_state_up"] is False
    status, body = admin.put(f"/v2.0/agents/{agent}", {"agent": {"host": "elsewhere"}})
    assert status == 400
    assert body["NeutronError"]["message"] == "Cannot update read-only attribute host"


def test_agents_cannot_be_created_through_the_api(admin: Client) -> None:
    status, body = admin.post("/v2.0/agents", {"agent": {}})
    assert status == 400
    assert body["NeutronError"] == {
        "type": "BadRequest", "detail": "",
        "message": "Bad agents request: Agent creation using API is not supported.."}
    status, body = admin.post("/v2.0/agents", {"agent": {"host": "x"}})
    assert status == 400
    assert body["NeutronError"]["message"] == "Attribute 'host' not allowed in POST"


def test_a_deleted_agent_is_gone(srv: Server, admin: Client) -> None:
    agent = report(srv, "DHCP agent", "h5")
    assert admin.delete(f"/v2.0/agents/{agent}")[0] == 204
    status, body = admin.get(f"/v2.0/agents/{agent}")
    assert status == 404
    assert body["NeutronError"]["message"] == f"Agent {agent} could not be found."


def test_zones_come_from_dhcp_and_l3_agents_and_are_available_while_one_is_up(
        srv: Server, admin: Client, member: Client) -> None:
    clear(admin)
    report(srv, "DHCP agent", "z1", zone="az1")
    report(srv, "DHCP agent", "z2", zone="az1")
    l3 = report(srv, "L3 agent", "z3", zone="az1")
    report(srv, "Open vSwitch agent", "z4", zone="az9")  # no zones for L2 agents
    report(srv, "L3 agent", "z5")  # no zone named
    admin.put(f"/v2.0/agents/{l3}", {"agent": {"admin_state_up": False}})
    status, body = member.get("/v2.0/availability_zones")
    assert status == 200
    assert sorted(body["availability_zones"], key=lambda z: z["resource"]) == [
        {"name": "az1", "resource": "network", "state": "available"},
        {"name": "az1", "resource": "router", "state": "unavailable"}]
    status, body = member.get("/v2.0/availability_zones?state=unavailable")
    assert [z["resource"] for z in body["availability_zones"]] == ["router"]


def test_extensions_list_agents_and_zones(admin: Client) -> None:
    aliases = {e["alias"] for e in admin.get("/v2.0/extensions")[1]["extensions"]}
    assert {"agent", "availability_zone", "availability_zone_filter",
            "agent_sort_key", "agent-resources-synced"} <= aliases


def test_text_filters_match_in_any_case_as_upstreams_collation(
        srv: Server, admin: Client, member: Client) -> None:
    """tempest's test_port_shut_down lists agents with agent_type="DHCP Agent"."""
    clear(admin)
    dhcp = report(srv, "DHCP agent", "Case-Host", zone="Zone-A")
    report(srv, "L3 agent", "other-host", zone="zone-b")
    for query in ("agent_type=DHCP%20Agent", "agent_type=dhcp%20AGENT", "host=case-host",
                  "host=CASE-HOST&agent_type=DHCP%20agent", "availability_zone=zone-a",
                  "binary=NEUTRINO-CASE-HOST", "agent_type=nope&agent_type=Dhcp%20Agent"):
        status, body = admin.get(f"/v2.0/agents?{query}")
        assert status == 200 and [a["id"] for a in body["agents"]] == [dhcp], query
    assert admin.get("/v2.0/agents?agent_type=DHCP")[1]["agents"] == []
    # the zones' names are the agents', matched the same way
    zones = member.get("/v2.0/availability_zones?name=ZONE-A")[1]["availability_zones"]
    assert zones == [{"name": "Zone-A", "resource": "network", "state": "available"}]
    # projects still see no agents, in any case
    assert member.get("/v2.0/agents?agent_type=dhcp%20agent") == (200, {"agents": []})
