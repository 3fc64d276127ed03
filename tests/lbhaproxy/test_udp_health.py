"""UDP members' checks (pure plan), their statuses and the UDP counters, and
the agent acting on them over an in-memory host."""
from __future__ import annotations

import json
import socket

from neutrino.agents.loadbalancer import health, nft_udp, probe, udp_health
from neutrino.agents.loadbalancer.memory_host import MemoryLbHost
from neutrino.resources.lb_graph import LoadBalancer
from tests.lbhaproxy import graphs as g
from tests.lbhaproxy.test_agent import Server, agent
from tests.lbhaproxy.test_health import stat


def udp(**kw: object) -> LoadBalancer:
    return LoadBalancer.from_dict(g.udp_graph(**kw))  # type: ignore[arg-type]


def run(lb: LoadBalancer, rounds: list[dict[str, bool]]) -> dict[str, udp_health.Health]:
    state: dict[str, udp_health.Health] = {}
    for i, results in enumerate(rounds):
        state = udp_health.record(lb, state, results, float(i * 2))
    return state


def test_checks_are_due_every_delay_against_the_monitor_address() -> None:
    data = g.udp_graph()
    data["pools"][-1]["members"][1].update(monitor_address="10.9.9.9", monitor_port=7)
    lb = LoadBalancer.from_dict(data)
    checks = udp_health.due(lb, {}, 0.0)
    assert [(c.member_id, c.type, c.address, c.port, c.timeout) for c in checks] == [
        (g.U1, "UDP-CONNECT", "10.0.1.7", 5353, 1.0), (g.U2, "UDP-CONNECT", "10.9.9.9", 7, 1.0)]
    state = udp_health.record(lb, {}, {g.U1: True, g.U2: True}, 0.0)
    assert udp_health.due(lb, state, 1.0) == []
    assert len(udp_health.due(lb, state, 2.0)) == 2
    assert udp_health.next_due(lb, state) == 2.0


def test_a_member_leaves_after_fall_failures_and_returns_after_rise_passes() -> None:
    lb = udp()  # max_retries_down 3, max_retries 2
    fail, ok = {g.U1: False, g.U2: True}, {g.U1: True, g.U2: True}
    assert udp_health.down(run(lb, [fail, fail])) == frozenset()
    state = run(lb, [fail, fail, fail])
    assert udp_health.down(state) == {g.U1}
    assert udp_health.member_statuses(lb, state) == {g.U1: "ERROR", g.U2: "ONLINE"}
    assert udp_health.down(run(lb, [fail, fail, fail, ok])) == {g.U1}
    assert udp_health.down(run(lb, [fail, fail, fail, ok, ok])) == frozenset()
    assert udp_health.down(run(lb, [fail, fail, ok, fail])) == frozenset()


def test_members_without_a_monitor_or_down_are_not_checked() -> None:
    assert udp_health.due(udp(monitor=None), {}, 0.0) == []
    data = g.udp_graph()
    data["pools"][-1]["members"][0]["admin_state_up"] = False
    assert [c.member_id for c in udp_health.due(LoadBalancer.from_dict(data), {}, 0.0)] == [g.U2]
    assert udp_health.due(g.loadbalancer(), {}, 0.0) == []  # haproxy checks TCP pools


def statuses(lb: LoadBalancer, checked: dict[str, str]) -> dict[str, str]:
    out = health.statuses(lb, health.parse_stat(stat()), checked)
    return {s["id"]: s["operating_status"] for s in out}


def test_udp_statuses_come_from_the_checks() -> None:
    lb = udp()
    got = statuses(lb, {g.U1: "ONLINE", g.U2: "ONLINE"})
    assert got[g.UDP_LISTENER] == got[g.UDP_POOL] == got[g.U1] == got[g.LB] == "ONLINE"
    got = statuses(lb, {g.U1: "ONLINE", g.U2: "ERROR"})
    assert got[g.U2] == "ERROR" and got[g.UDP_POOL] == "DEGRADED" and got[g.LB] == "DEGRADED"
    got = statuses(lb, {g.U1: "ERROR", g.U2: "ERROR"})
    assert got[g.UDP_POOL] == "ERROR"
    got = statuses(udp(monitor=None), {})
    assert got[g.U1] == got[g.U2] == "NO_MONITOR" and got[g.UDP_POOL] == "ONLINE"


COUNTERS = json.dumps({"nftables": [
    {"metainfo": {"version": "1.0.6"}},
    *({"counter": {"family": "inet", "name": name, "table": "neutrino_lb", "handle": i,
                   "packets": packets, "bytes": size}}
      for i, (name, packets, size) in enumerate(zip(nft_udp.counter_names(g.UDP_LISTENER),
                                                     (5, 4, 3), (500, 400, 300))))]})
CONNTRACK = (
    "ipv4     2 udp      17 28 src=192.0.2.5 dst=10.0.0.10 sport=4000 dport=53 "
    "src=10.0.1.7 dst=10.0.0.10 sport=5353 dport=4000 mark=0 zone=0 use=2\n"
    "ipv4     2 udp      17 28 src=192.0.2.6 dst=10.0.0.10 sport=4001 dport=53 [UNREPLIED] "
    "src=10.0.2.7 dst=10.0.0.10 sport=5353 dport=4001 mark=0 zone=0 use=2\n"
    "ipv4     2 tcp      6 28 ESTABLISHED src=192.0.2.6 dst=10.0.0.10 sport=4001 dport=53 "
    "src=10.0.2.7 dst=10.0.0.10 sport=5353 dport=4001 mark=0 zone=0 use=2\n"
    "ipv4     2 udp      17 28 src=192.0.2.6 dst=10.0.0.10 sport=4001 dport=54 "
    "src=10.0.2.7 dst=10.0.0.10 sport=5353 dport=4001 mark=0 zone=0 use=2\n")


def test_udp_counters_come_from_nftables_and_conntrack() -> None:
    assert health.udp_listener_stats(udp(), COUNTERS, CONNTRACK) == [{
        "listener_id": g.UDP_LISTENER, "bytes_in": 500, "bytes_out": 400,
        "active_connections": 2, "total_connections": 3, "request_errors": 0}]
    # haproxy's listener rows leave the UDP listener out
    assert [s["listener_id"] for s in health.listener_stats(udp(), health.parse_stat(stat()))
            ] == [g.LISTENER]


def test_the_agent_takes_a_failing_member_out_of_the_table_and_back() -> None:
    server, host = Server(), MemoryLbHost()
    server.lbs[g.LB] = {**g.payload(), "loadbalancer": g.udp_graph(status="PENDING_CREATE")}
    host.stat_text[g.LB] = stat()
    a = agent(server, host)
    a.step()
    assert "10.0.1.7 . 5353" in host.deployed[g.LB].udp
    assert server.provisioning("listeners", g.UDP_LISTENER) == "ACTIVE"
    host.failing.add(g.U1)
    for now in (2.0, 4.0, 6.0):
        a.check_udp_members(now)
    assert "10.0.1.7" not in host.deployed[g.LB].udp
    assert host.log[-1] == ("reload", g.LB)
    a.report_health()
    assert server.operating(g.U1) == "ERROR" and server.operating(g.UDP_POOL) == "DEGRADED"
    host.failing.clear()
    for now in (8.0, 10.0):
        a.check_udp_members(now)
    assert "10.0.1.7 . 5353" in host.deployed[g.LB].udp
    a.report_health()
    assert server.operating(g.U1) == "ONLINE"
    assert a.next_check() == 12.0


def test_udp_connect_fails_only_on_port_unreachable() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as quiet:
        quiet.bind(("127.0.0.1", 0))
        assert probe.udp_connect("127.0.0.1", quiet.getsockname()[1], 0.2)
        port = quiet.getsockname()[1]
    assert not probe.udp_connect("127.0.0.1", port, 0.5)
    assert probe.expected("200-204,301", 203) and not probe.expected("200,202", 201)
