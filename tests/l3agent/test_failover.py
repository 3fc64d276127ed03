"""``allow_automatic_l3agent_failover`` moves routers off dead L3 agents;
``router_scheduler_driver = ChanceScheduler`` still hosts every router once."""
from __future__ import annotations

import time
from typing import Iterator

import pytest

from tests.conftest import Server
from tests.l3 import _l3
from tests.l3agent.conftest import agent_id, hosts_of, start_server
from tests.waiting import wait_for

DOWN_TIME = 3


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, vhost: str) -> Iterator[Server]:
    server = start_server(tmp_path_factory.mktemp("l3failover"), vhost,
                          f"agent_down_time = {DOWN_TIME}\n"
                          "allow_automatic_l3agent_failover = true\n"
                          "router_scheduler_driver = "
                          "neutron.scheduler.l3_agent_scheduler.ChanceScheduler\n")
    yield server
    server.stop()


def test_routers_move_from_a_dead_agent_to_a_live_one(admin, l3_agents):
    dying = l3_agents(report_interval=0.5)
    alive = l3_agents(report_interval=0.5)
    router = _l3.router(admin)
    assert admin.post(f"/v2.0/agents/{agent_id(admin, dying.host)}/l3-routers",
                      {"router_id": router["id"]}) == (201, None)
    dying.stop_reporting()  # no more heartbeats; it still hears the casts
    assert wait_for(lambda: hosts_of(admin, router["id"]) == [alive.host])
    assert alive.recorder.wait_for("router_added_to_agent", {"payload": [router["id"]]})
    assert dying.recorder.wait_for("router_removed_from_agent",
                                   {"payload": {"router_id": router["id"]}})


def test_a_disabled_dead_agent_keeps_its_routers(admin, l3_agents):
    dying = l3_agents(report_interval=0.5)
    l3_agents(report_interval=0.5)
    router = _l3.router(admin)
    dead_id = agent_id(admin, dying.host)
    assert admin.post(f"/v2.0/agents/{dead_id}/l3-routers",
                      {"router_id": router["id"]}) == (201, None)
    assert admin.put(f"/v2.0/agents/{dead_id}", {"agent": {"admin_state_up": False}})[0] == 200
    dying.stop_reporting()
    assert wait_for(lambda: not admin.get(f"/v2.0/agents/{dead_id}")[1]["agent"]["alive"])
    time.sleep(DOWN_TIME * 3)  # several failover rounds
    assert hosts_of(admin, router["id"]) == [dying.host]


def test_chance_scheduler_hosts_each_router_on_one_live_agent(admin, l3_agents):
    hosts = {l3_agents(report_interval=0.5).host, l3_agents(report_interval=0.5).host}

    def others_dead() -> bool:  # agents of earlier tests count as live for DOWN_TIME
        agents = admin.get("/v2.0/agents?agent_type=L3 agent")[1]["agents"]
        return not [a for a in agents if a["alive"] and a["host"] not in hosts]
    assert wait_for(others_dead)
    for _ in range(4):
        router = _l3.router(admin)
        _l3.add_interface(admin, router["id"], subnet_id=_l3.private_subnet(admin)["id"])
        placed = hosts_of(admin, router["id"])
        assert len(placed) == 1 and placed[0] in hosts
