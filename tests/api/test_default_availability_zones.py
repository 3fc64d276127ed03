"""``[DEFAULT] default_availability_zones``: a network or router created
without hints asks for the configured zones instead, as upstream (its ML2
plugin and router AZ mixin use the defaults as the hints): they are
validated like hints (404 when no agent of the resource's kind reported
one, nothing created) and kept and shown as the resource's hints, in the
configured order."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from tests.api.test_availability_zone_hints import _report
from tests.conftest import Client, Server

DEFAULTS = "service_plugins = router\ndefault_availability_zones = zone-e,zone-d\n"


def _server(tmp: Path) -> Server:
    return Server(tmp, extra=DEFAULTS).start()


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """Both default zones have DHCP and L3 agents."""
    server = _server(tmp_path_factory.mktemp("azdefaults"))
    for agent_type in ("DHCP agent", "L3 agent"):
        for zone in ("zone-e", "zone-d"):
            _report(server, agent_type, f"{agent_type[:4].lower()}-{zone}", zone)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def partial(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """Only zone-e has a DHCP agent; no zone has an L3 agent."""
    server = _server(tmp_path_factory.mktemp("azdefaultsmissing"))
    _report(server, "DHCP agent", "dhcp-zone-e", "zone-e")
    yield server
    server.stop()


def test_a_network_without_hints_gets_the_default_zones_as_its_hints(srv: Server) -> None:
    admin = Client(srv.url, roles="admin")
    status, body = admin.post("/v2.0/networks", {"network": {"name": "plain"}})
    assert status == 201, body
    net = body["network"]
    assert net["availability_zone_hints"] == ["zone-e", "zone-d"]
    assert admin.get(f"/v2.0/networks/{net['id']}")[1]["network"][
        "availability_zone_hints"] == ["zone-e", "zone-d"]
    assert admin.get(f"/v2.0/networks?id={net['id']}")[1]["networks"][0][
        "availability_zone_hints"] == ["zone-e", "zone-d"]
    status, body = admin.post("/v2.0/networks", {"network": {
        "name": "empty", "availability_zone_hints": []}})  # no hints either
    assert status == 201 and body["network"]["availability_zone_hints"] == [
        "zone-e", "zone-d"], body


def test_a_router_without_hints_gets_the_default_zones_as_its_hints(srv: Server) -> None:
    member = Client(srv.url, project="c" * 32, roles="member,reader")
    status, body = member.post("/v2.0/routers", {"router": {"name": "plain"}})
    assert status == 201, body
    router = body["router"]
    assert router["availability_zone_hints"] == ["zone-e", "zone-d"]
    assert member.get(f"/v2.0/routers/{router['id']}")[1]["router"][
        "availability_zone_hints"] == ["zone-e", "zone-d"]


def test_hints_given_replace_the_defaults(srv: Server) -> None:
    admin = Client(srv.url, roles="admin")
    status, body = admin.post("/v2.0/networks", {"network": {
        "name": "hinted", "availability_zone_hints": ["zone-d"]}})
    assert status == 201 and body["network"]["availability_zone_hints"] == ["zone-d"], body
    status, body = admin.post("/v2.0/routers", {"router": {
        "name": "hinted", "availability_zone_hints": ["zone-d"]}})
    assert status == 201 and body["router"]["availability_zone_hints"] == ["zone-d"], body


def test_a_default_zone_no_agent_reported_is_404_and_creates_nothing(partial: Server) -> None:
    admin = Client(partial.url, roles="admin")
    status, body = admin.post("/v2.0/networks", {"network": {"name": "plain"}})
    assert status == 404, body
    assert body["NeutronError"]["type"] == "AvailabilityZoneNotFound"
    assert body["NeutronError"]["message"] == "AvailabilityZone zone-d could not be found."
    assert admin.get("/v2.0/networks")[1]["networks"] == []
    status, body = admin.post("/v2.0/routers", {"router": {"name": "plain"}})
    assert status == 404, body
    assert body["NeutronError"]["type"] == "AvailabilityZoneNotFound"
    assert admin.get("/v2.0/routers")[1]["routers"] == []
    # Hints naming a reported zone are not checked against the defaults.
    status, body = admin.post("/v2.0/networks", {"network": {
        "name": "hinted", "availability_zone_hints": ["zone-e"]}})
    assert status == 201 and body["network"]["availability_zone_hints"] == ["zone-e"], body
