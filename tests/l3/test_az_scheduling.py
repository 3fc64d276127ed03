"""With ``AZLeastRoutersScheduler`` a router goes only to L3 agents of its
hinted zones, and an HA router's agents spread over zones, as upstream."""
from __future__ import annotations

import datetime as dt
from typing import Iterator

import pytest

from neutrino.db.engine import make_engine
from neutrino.plugins.ml2 import agents_db
from tests.conftest import Client, Server

CONF = ("service_plugins = router\nrouter_auto_schedule = true\n"
        "router_scheduler_driver = "
        "neutron.scheduler.l3_agent_scheduler.AZLeastRoutersScheduler\n"
        "max_l3_agents_per_router = 2\n")


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = Server(tmp_path_factory.mktemp("azl3"), extra=CONF).start()
    engine = make_engine(f"sqlite:///{server.tmp / 'var' / 'neutrino.sqlite'}")
    try:
        with engine.begin() as conn:
            for host, zone in (("l3-a1", "zone-x"), ("l3-a2", "zone-x"), ("l3-b1", "zone-y")):
                agents_db.report(conn, "L3 agent", "neutron-l3-agent", host, "l3_agent",
                                 {"agent_mode": "legacy"},
                                 agents_db.utcnow() - dt.timedelta(seconds=0), zone)
    finally:
        engine.dispose()
    yield server
    server.stop()


@pytest.fixture
def admin(srv: Server) -> Client:
    return Client(srv.url, roles="admin")


def _router_with_interface(admin: Client, name: str, **attrs: object) -> str:
    router = admin.post("/v2.0/routers", {"router": {"name": name, **attrs}})
    assert router[0] == 201, router
    net = admin.post("/v2.0/networks", {"network": {"name": name}})[1]["network"]
    subnet = admin.post("/v2.0/subnets", {"subnet": {
        "network_id": net["id"], "cidr": "10.20.0.0/24", "ip_version": 4}})[1]["subnet"]
    rid = router[1]["router"]["id"]
    status, body = admin.put(f"/v2.0/routers/{rid}/add_router_interface",
                             {"subnet_id": subnet["id"]})
    assert status == 200, body
    return str(rid)


def _hosts(admin: Client, rid: str) -> list[str]:
    status, body = admin.get(f"/v2.0/routers/{rid}/l3-agents")
    assert status == 200, body
    return sorted(a["host"] for a in body["agents"])


def test_an_ha_routers_agents_spread_over_the_zones(admin: Client) -> None:
    rid = _router_with_interface(admin, "spread", ha=True)
    hosts = _hosts(admin, rid)
    # the least busy agent of each zone, not the two least busy (both zone-x)
    assert hosts == ["l3-a1", "l3-b1"], hosts
    router = admin.get(f"/v2.0/routers/{rid}")[1]["router"]
    assert router["availability_zones"] == ["zone-x", "zone-y"]


def test_a_router_goes_only_to_an_agent_of_its_hinted_zone(admin: Client) -> None:
    # after the HA router, l3-b1 is among the least busy, but not in zone-x
    rid = _router_with_interface(admin, "hinted", availability_zone_hints=["zone-x"])
    assert len(_hosts(admin, rid)) == 1
    router = admin.get(f"/v2.0/routers/{rid}")[1]["router"]
    assert router["availability_zones"] == ["zone-x"]
