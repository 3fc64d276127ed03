"""Several agents per network (ChanceScheduler, by upstream's class path),
and networks moved away from DHCP agents that stopped reporting
(``allow_automatic_dhcp_failover``), by the RPC process's periodic check."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Iterator

import pytest

from neutrino.plugins.dhcp import scheduler as sch
from neutrino.plugins.loader import PluginLoadError
from tests.conftest import Client, Server
from tests.dhcp._agents import DhcpAgent, agent_id, bus, hosting_hosts, network_with_subnet

DOWN_TIME = 2  # agents are dead after 2 * 2 s of silence (upstream's dead limit)


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, vhost: str) -> Iterator[Server]:
    server = Server(tmp_path_factory.mktemp("dhcpfail"), extra=(
        f"transport_url = {bus(vhost)}\nagent_down_time = {DOWN_TIME}\n"
        "dhcp_agents_per_network = 2\n"
        "network_scheduler_driver = neutron.scheduler.dhcp_agent_scheduler.ChanceScheduler\n"
        "[ml2]\nmechanism_drivers = openvswitch\n"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def admin(srv: Server) -> Client:
    return Client(srv.url, roles="admin")


def test_networks_get_two_agents_and_fail_over_from_a_dead_one(
        admin: Client, tmp_path: Path, vhost: str) -> None:
    agents = [DhcpAgent(tmp_path, vhost, report_interval=0.5).start() for _ in range(2)]
    try:
        network_id, _ = network_with_subnet(admin)
        assert hosting_hosts(admin, network_id) == sorted(a.host for a in agents)
        spare = DhcpAgent(tmp_path, vhost, report_interval=0.5).start()
        agents.append(spare)
        # A third agent is not needed: the network has its two.
        assert spare.api is not None
        assert spare.api.get_active_networks_info() == []
        dead = agents.pop(0)
        dead.stop()  # no more reports
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            hosts = hosting_hosts(admin, network_id)
            if dead.host not in hosts and len(hosts) == 2:
                break
            time.sleep(0.5)
        assert hosting_hosts(admin, network_id) == sorted(a.host for a in agents)
        spare.recorder.wait_for("network_create_end",
                                lambda p: p["network"] == {"id": network_id})
        status, body = admin.get(f"/v2.0/agents/{agent_id(admin, dead.host)}")
        assert status == 200 and body["agent"]["alive"] is False
    finally:
        for agent in agents:
            agent.stop()


def test_schedulers_by_upstream_class_path_or_short_name() -> None:
    assert isinstance(sch.scheduler_from(
        "neutron.scheduler.dhcp_agent_scheduler.WeightScheduler"), sch.WeightScheduler)
    assert isinstance(sch.scheduler_from("ChanceScheduler"), sch.ChanceScheduler)
    with pytest.raises(PluginLoadError, match="network_scheduler_driver"):
        sch.scheduler_from("neutron.scheduler.dhcp_agent_scheduler.NoSuchScheduler")


def test_the_weight_scheduler_prefers_the_least_loaded_then_least_busy_agents() -> None:
    def agent(host: str, load: int, hosted: int) -> sch.DhcpAgent:
        return sch.DhcpAgent(host, host, "dhcp_agent", True, True, load,
                             None, hosted=hosted)  # type: ignore[arg-type]
    candidates = [agent("a", 3, 0), agent("b", 1, 5), agent("c", 1, 2)]
    assert [a.host for a in sch.WeightScheduler().select(candidates, 2)] == ["c", "b"]
    assert len(sch.ChanceScheduler().select(candidates, 5)) == 3
