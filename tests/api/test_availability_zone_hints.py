"""``network_availability_zone`` and ``router_availability_zone``: networks
and routers ask for zones of DHCP (L3) agents on create, validated as
upstream; ``availability_zones`` shows the zones of the agents hosting them."""
from __future__ import annotations

import datetime as dt
from typing import Iterator

import pytest

from neutrino.db.engine import make_engine
from neutrino.plugins.ml2 import agents_db
from tests.conftest import Client, Server

PROJECT = "a" * 32
OTHER = "b" * 32


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = Server(tmp_path_factory.mktemp("azhints"),
                    extra="service_plugins = router\n").start()
    _report(server, "DHCP agent", "az-dhcp-1", "zone-a")
    _report(server, "DHCP agent", "az-dhcp-2", "zone-b")
    _report(server, "L3 agent", "az-l3-1", "zone-r")
    yield server
    server.stop()


def _report(srv: Server, agent_type: str, host: str, zone: str) -> str:
    engine = make_engine(f"sqlite:///{srv.tmp / 'var' / 'neutrino.sqlite'}")
    try:
        with engine.begin() as conn:
            return agents_db.report(conn, agent_type, f"neutrino-{host}", host, "topic", {},
                                    agents_db.utcnow() - dt.timedelta(seconds=0), zone)
    finally:
        engine.dispose()


def _bind(srv: Server, network_id: str, agent_id: str) -> None:
    engine = make_engine(f"sqlite:///{srv.tmp / 'var' / 'neutrino.sqlite'}")
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql(
                "INSERT INTO networkdhcpagentbindings (network_id, dhcp_agent_id, "
                "binding_index) VALUES (?, ?, 1)", (network_id, agent_id))
    finally:
        engine.dispose()


@pytest.fixture
def admin(srv: Server) -> Client:
    return Client(srv.url, roles="admin")


@pytest.fixture
def member(srv: Server) -> Client:
    return Client(srv.url, project=PROJECT, roles="member,reader")


@pytest.fixture
def other(srv: Server) -> Client:
    return Client(srv.url, project=OTHER, roles="member,reader")


def test_the_network_and_router_zone_extensions_are_listed(member: Client) -> None:
    aliases = {e["alias"] for e in member.get("/v2.0/extensions")[1]["extensions"]}
    assert {"network_availability_zone", "router_availability_zone"} <= aliases


def test_a_member_creates_a_network_with_hints_shown_sorted(member: Client) -> None:
    status, body = member.post("/v2.0/networks", {"network": {
        "name": "n", "availability_zone_hints": ["zone-b", "zone-a"]}})
    assert status == 201, body
    net = body["network"]
    assert net["availability_zone_hints"] == ["zone-a", "zone-b"]
    assert net["availability_zones"] == []  # no DHCP agent serves it yet
    shown = member.get(f"/v2.0/networks/{net['id']}")[1]["network"]
    assert shown["availability_zone_hints"] == ["zone-a", "zone-b"]
    listed = member.get(f"/v2.0/networks?id={net['id']}")[1]["networks"]
    assert listed[0]["availability_zone_hints"] == ["zone-a", "zone-b"]


def test_a_network_without_hints_shows_empty_lists(member: Client, admin: Client) -> None:
    net = member.post("/v2.0/networks", {"network": {"name": "plain"}})[1]["network"]
    assert net["availability_zone_hints"] == [] and net["availability_zones"] == []
    assert admin.get(f"/v2.0/networks/{net['id']}")[1]["network"][
        "availability_zone_hints"] == []


def test_a_hint_naming_no_dhcp_agents_zone_is_404_and_creates_nothing(
        member: Client) -> None:
    before = len(member.get("/v2.0/networks")[1]["networks"])
    for zone in ("nowhere", "zone-r"):  # zone-r is an L3 agent's: not a network's zone
        status, body = member.post("/v2.0/networks", {"network": {
            "name": "bad", "availability_zone_hints": ["zone-a", zone]}})
        assert status == 404, body
        assert body["NeutronError"]["type"] == "AvailabilityZoneNotFound"
        assert body["NeutronError"]["message"] == f"AvailabilityZone {zone} could not be found."
    assert len(member.get("/v2.0/networks")[1]["networks"]) == before


@pytest.mark.parametrize("hints, reason", [
    ("zone-a", "'zone-a' is not a list"),
    (["zone-a", "zone-a"], "Duplicate items in the list: 'zone-a'"),
    ([1], "'1' is not a valid string"),
])
def test_malformed_hints_are_400(member: Client, hints: object, reason: str) -> None:
    status, body = member.post("/v2.0/networks", {"network": {
        "name": "bad", "availability_zone_hints": hints}})
    assert status == 400, body
    assert reason in body["NeutronError"]["message"]


def test_too_many_hints_are_400(member: Client) -> None:
    status, body = member.post("/v2.0/networks", {"network": {
        "name": "bad", "availability_zone_hints": [f"z{i:03}" for i in range(40)]}})
    assert status == 400, body
    assert "Too many availability_zone_hints specified" in body["NeutronError"]["message"]


def test_hints_cannot_be_updated(member: Client) -> None:
    net = member.post("/v2.0/networks", {"network": {"name": "u"}})[1]["network"]
    status, body = member.put(f"/v2.0/networks/{net['id']}", {"network": {
        "availability_zone_hints": ["zone-a"]}})
    assert status == 400, body


def test_availability_zones_are_the_zones_of_the_dhcp_agents_serving_the_network(
        srv: Server, admin: Client, member: Client, other: Client) -> None:
    net = member.post("/v2.0/networks", {"network": {
        "name": "served", "shared": False}})[1]["network"]
    agents = {a["host"]: a["id"] for a in admin.get(
        "/v2.0/agents?agent_type=DHCP agent")[1]["agents"]}
    _bind(srv, net["id"], agents["az-dhcp-2"])
    assert member.get(f"/v2.0/networks/{net['id']}")[1]["network"][
        "availability_zones"] == ["zone-b"]
    assert admin.get(f"/v2.0/networks?id={net['id']}")[1]["networks"][0][
        "availability_zones"] == ["zone-b"]
    assert other.get(f"/v2.0/networks/{net['id']}")[0] == 404


def test_a_member_creates_a_router_with_hints_of_l3_agents_zones(
        srv: Server, admin: Client, member: Client, other: Client) -> None:
    status, body = member.post("/v2.0/routers", {"router": {
        "name": "r", "availability_zone_hints": ["zone-r"]}})
    assert status == 201, body
    router = body["router"]
    assert router["availability_zone_hints"] == ["zone-r"]
    assert router["availability_zones"] == []
    agents = {a["host"]: a["id"] for a in admin.get("/v2.0/agents")[1]["agents"]}
    engine = make_engine(f"sqlite:///{srv.tmp / 'var' / 'neutrino.sqlite'}")
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql(
                "INSERT INTO routerl3agentbindings (router_id, l3_agent_id, binding_index) "
                "VALUES (?, ?, 1)", (router["id"], agents["az-l3-1"]))
    finally:
        engine.dispose()
    shown = member.get(f"/v2.0/routers/{router['id']}")[1]["router"]
    assert shown["availability_zones"] == ["zone-r"]
    assert admin.get(f"/v2.0/routers?id={router['id']}")[1]["routers"][0][
        "availability_zone_hints"] == ["zone-r"]
    assert other.get(f"/v2.0/routers/{router['id']}")[0] == 404


def test_a_router_hint_naming_no_l3_agents_zone_is_404_and_creates_nothing(
        member: Client) -> None:
    before = len(member.get("/v2.0/routers")[1]["routers"])
    for zone in ("nowhere", "zone-a"):  # zone-a is a DHCP agent's: not a router's zone
        status, body = member.post("/v2.0/routers", {"router": {
            "name": "bad", "availability_zone_hints": [zone]}})
        assert status == 404, body
        assert body["NeutronError"]["type"] == "AvailabilityZoneNotFound"
    assert len(member.get("/v2.0/routers")[1]["routers"]) == before
    status, body = member.post("/v2.0/routers", {"router": {
        "name": "bad", "availability_zone_hints": ["zone-r", "zone-r"]}})
    assert status == 400, body


def test_router_hints_cannot_be_updated(member: Client) -> None:
    router = member.post("/v2.0/routers", {"router": {"name": "u"}})[1]["router"]
    assert router["availability_zone_hints"] == []
    status, body = member.put(f"/v2.0/routers/{router['id']}", {"router": {
        "availability_zone_hints": ["zone-r"]}})
    assert status == 400, body
