"""The load-balancer agent's loop on an in-memory host and server."""
from __future__ import annotations

from typing import Any

from oslo_config import cfg

from neutrino.agents.loadbalancer.agent import LoadBalancerAgent, Notifications
from neutrino.agents.loadbalancer.memory_host import MemoryLbHost
from tests.lbhaproxy import graphs as g
from tests.lbhaproxy.test_health import stat


class Server:
    def __init__(self) -> None:
        self.lbs: dict[str, dict[str, Any]] = {}
        self.statuses: list[dict[str, Any]] = []
        self.stats: list[dict[str, Any]] = []
        self.down = False

    def get_ready_devices(self) -> list[str]:
        if self.down:
            raise ConnectionError("bus away")
        return list(self.lbs)

    def get_loadbalancer(self, loadbalancer_id: str) -> dict[str, Any] | None:
        if self.down:
            raise ConnectionError("bus away")
        return self.lbs.get(loadbalancer_id)

    def update_status(self, statuses: list[dict[str, Any]]) -> None:
        self.statuses += statuses

    def update_loadbalancer_stats(self, stats: list[dict[str, Any]]) -> None:
        self.stats += stats

    def provisioning(self, kind: str, oid: str) -> str | None:
        found = [s["provisioning_status"] for s in self.statuses
                 if s["kind"] == kind and s["id"] == oid and "provisioning_status" in s]
        return found[-1] if found else None

    def operating(self, oid: str) -> str | None:
        found = [s["operating_status"] for s in self.statuses
                 if s["id"] == oid and "operating_status" in s]
        return found[-1] if found else None


def agent(server: Server, host: MemoryLbHost, tmp: str = "/nonexistent") -> LoadBalancerAgent:
    conf = cfg.ConfigOpts()
    conf([], project="neutrino-test")
    conf.register_opt(cfg.StrOpt("host", default="lb-host"))
    a = LoadBalancerAgent(conf, server, host, clock=lambda: 0.0)
    conf.set_override("loadbalancer_state_path", tmp, "haproxy")
    return a


def test_a_new_load_balancer_is_built_and_reported_active() -> None:
    server, host = Server(), MemoryLbHost()
    server.lbs[g.LB] = g.payload(status="PENDING_CREATE")
    a = agent(server, host)
    a.step()
    assert host.log == [("build", g.LB)]
    assert server.provisioning("loadbalancers", g.LB) == "ACTIVE"
    assert server.provisioning("members", g.M1) == "ACTIVE"


def test_a_change_cast_reloads_and_finishes_the_change() -> None:
    server, host = Server(), MemoryLbHost()
    server.lbs[g.LB] = g.payload()
    a = agent(server, host)
    a.step()
    changed = g.payload(status="ACTIVE")
    changed["loadbalancer"]["pools"][0]["members"][1]["provisioning_status"] = "PENDING_DELETE"
    server.lbs[g.LB] = changed
    Notifications(a).loadbalancer_changed({}, loadbalancer_id=g.LB)
    a.step()
    assert host.log[-1] == ("reload", g.LB)
    assert g.M2 not in host.deployed[g.LB].config
    assert server.provisioning("members", g.M2) == "DELETED"


def test_a_deleted_load_balancer_is_torn_down_and_reported_deleted() -> None:
    server, host = Server(), MemoryLbHost()
    server.lbs[g.LB] = g.payload()
    a = agent(server, host)
    a.step()
    server.lbs[g.LB] = g.payload(status="PENDING_DELETE")
    a.mark_dirty(g.LB)
    a.step()
    assert host.deployed == {} and host.log[-1] == ("teardown", g.LB)
    assert server.provisioning("loadbalancers", g.LB) == "DELETED"


def test_a_failover_rebuilds_the_load_balancer() -> None:
    server, host = Server(), MemoryLbHost()
    server.lbs[g.LB] = g.payload()
    a = agent(server, host)
    a.step()
    server.lbs[g.LB] = g.payload(status="PENDING_UPDATE")
    Notifications(a).loadbalancer_failover({}, loadbalancer_id=g.LB)
    a.step()
    assert host.log[-2:] == [("teardown", g.LB), ("build", g.LB)]
    assert server.provisioning("loadbalancers", g.LB) == "ACTIVE"


def test_a_full_sync_removes_what_the_server_no_longer_places_here() -> None:
    server, host = Server(), MemoryLbHost()
    server.lbs[g.LB] = g.payload()
    a = agent(server, host)
    a.step()
    del server.lbs[g.LB]  # moved to another host
    a.mark_full_resync()
    a.step()
    assert host.deployed == {}


def test_a_host_that_cannot_build_reports_error_and_retries_on_the_next_sync() -> None:
    server, host = Server(), MemoryLbHost()
    server.lbs[g.LB] = g.payload(status="PENDING_CREATE")
    host.fail.add(g.LB)
    a = agent(server, host)
    a.step()
    assert server.provisioning("loadbalancers", g.LB) == "ERROR"
    host.fail.clear()
    a.mark_full_resync()
    a.step()
    assert host.deployed[g.LB].lb_id == g.LB


def test_health_reports_operating_statuses_when_they_change_and_counters() -> None:
    server, host = Server(), MemoryLbHost()
    server.lbs[g.LB] = g.payload()
    a = agent(server, host)
    host.stat_text[g.LB] = stat()
    a.step()  # built, then the first health report
    assert server.operating(g.M2) == "ONLINE"
    assert server.stats[-1]["total_connections"] == 7
    sent = len(server.statuses)
    a.report_health()
    assert len(server.statuses) == sent  # nothing changed: nothing sent
    host.stat_text[g.LB] = stat(m2="DOWN")
    a.report_health()
    assert server.operating(g.M2) == "ERROR" and server.operating(g.POOL) == "DEGRADED"


def test_the_server_away_keeps_what_is_served_and_syncs_later() -> None:
    server, host = Server(), MemoryLbHost()
    server.lbs[g.LB] = g.payload()
    a = agent(server, host)
    a.step()
    server.down = True
    a.mark_full_resync()
    a.step()
    assert g.LB in host.deployed
    server.down = False
    a.step()  # the failed full sync is due again
    assert g.LB in host.deployed


def test_the_second_agent_of_a_pair_applies_but_does_not_report_provisioning() -> None:
    server, host = Server(), MemoryLbHost()
    server.lbs[g.LB] = dict(g.payload(status="PENDING_CREATE"), report_provisioning=False)
    a = agent(server, host)
    host.stat_text[g.LB] = stat()
    a.step()
    assert host.log == [("build", g.LB)]
    assert server.provisioning("loadbalancers", g.LB) is None
    assert server.operating(g.M1) == "ONLINE"  # its health, when it answers, still counts


def test_the_agent_reports_its_availability_zone_for_compute_zone_placement() -> None:
    a = agent(Server(), MemoryLbHost())
    assert a.state()["availability_zone"] == "nova"
    a.conf.set_override("availability_zone", "az2", "AGENT")
    assert a.state()["availability_zone"] == "az2"
    assert a.state()["agent_type"] == "Loadbalancerv2 agent"
