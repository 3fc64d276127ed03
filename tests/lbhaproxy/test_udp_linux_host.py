"""UDP load balancing on the load-balancer agent's host adapter, for real:
the nftables table in the load balancer's namespace, UDP echo members in
namespaces of their own on one Linux bridge (``test_linux_host``'s lab),
the members' checks run from the load balancer's namespace."""
from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections import Counter
from typing import Any, Iterator

import pytest

from neutrino.agents.loadbalancer import health, plan, udp_health
from neutrino.agents.loadbalancer.linux import LinuxLbHost
from neutrino.resources.lb_graph import LoadBalancer
from tests.conftest import ROOT
from tests.fullstack.hosts import sh
from tests.lbhaproxy import graphs as g
from tests.lbhaproxy.test_linux_host import Lab, VethDriver, pytestmark  # noqa: F401

MEMBERS = {g.U1: "10.0.0.31", g.U2: "10.0.0.32"}


def udp_payload(lb_id: str, **pool: Any) -> dict[str, Any]:
    """A load balancer with only the UDP listener (port 53), its members here."""
    payload = g.payload()
    data = g.udp_graph()
    data["id"] = lb_id
    data["listeners"] = data["listeners"][-1:]
    data["pools"] = data["pools"][-1:]
    for member in data["pools"][0]["members"]:
        member["address"] = MEMBERS[member["id"]]
    data["pools"][0].update(pool)
    payload["loadbalancer"] = data
    return payload


class UdpLab:
    def __init__(self, lab: Lab, lb_host: LinuxLbHost, client: str, lb_id: str) -> None:
        self.lab, self.lb_host, self.client, self.lb_id = lab, lb_host, client, lb_id
        self.backends: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str, ns: str) -> None:
        self.backends[name] = subprocess.Popen(
            ["ip", "netns", "exec", ns, sys.executable, "-m", "tests.lbhaproxy.udp_backend",
             "serve", name, "5353"], cwd=str(ROOT), env={**os.environ, "PYTHONPATH": str(ROOT)})
        self.lab.procs.append(self.backends[name])

    def ask(self, times: int) -> list[str]:
        done = sh("ip", "netns", "exec", self.client, sys.executable, "-m",
                  "tests.lbhaproxy.udp_backend", "ask", "10.0.0.10", "53", str(times),
                  check=False)
        return done.stdout.split()

    def apply(self, down: frozenset[str] = frozenset(), **pool: Any) -> plan.Deployment:
        want = plan.deployment(udp_payload(self.lb_id, **pool),
                               str(self.lb_host.root / self.lb_id), down)
        assert want is not None
        for action in plan.plan({self.lb_id: want},
                                {k: v for k, v in self.lb_host.observe().items()
                                 if k == self.lb_id}):
            if isinstance(action, plan.Build):
                self.lb_host.build(action.deployment)
            elif isinstance(action, plan.Reload):
                self.lb_host.reload(action.deployment)
        return want


@pytest.fixture(scope="module")
def udp_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UdpLab]:
    tmp = tmp_path_factory.mktemp("lbudp")
    lab = Lab(tmp)
    lb_host = LinuxLbHost(str(tmp / "lbaas"), VethDriver(lab.switch, lab.prefix), garps=0)
    lb_id = str(uuid.uuid4())
    try:
        served = UdpLab(lab, lb_host, lab.node("cl", "10.0.0.98"), lb_id)
        for name, address in zip(("u1", "u2"), MEMBERS.values()):
            served.start(name, lab.node(name, address))
        served.apply()
        yield served
    finally:
        lb_host.teardown(lb_id, None)
        lab.destroy()


def test_new_flows_go_round_robin_by_weight(udp_lab: UdpLab) -> None:
    assert udp_lab.ask(1) != ["-"], udp_lab.lb_host.observe()
    answers = Counter(udp_lab.ask(8))
    assert answers == {"u1": 6, "u2": 2}  # weights 3 and 1
    udp_lab.apply(lb_algorithm="SOURCE_IP")
    assert len(set(udp_lab.ask(6))) == 1  # one client, one member
    udp_lab.apply()


def test_a_stopped_member_fails_its_check_and_leaves_the_rotation(udp_lab: UdpLab) -> None:
    lb = LoadBalancer.from_dict(udp_payload(udp_lab.lb_id)["loadbalancer"])
    checks = udp_health.due(lb, {}, 0.0)
    assert udp_lab.lb_host.probe(udp_lab.lb_id, checks) == {g.U1: True, g.U2: True}
    udp_lab.backends["u2"].kill()
    udp_lab.backends["u2"].wait()
    assert udp_lab.lb_host.probe(udp_lab.lb_id, checks) == {g.U1: True, g.U2: False}
    udp_lab.apply(down=frozenset({g.U2}))
    assert set(udp_lab.ask(6)) == {"u1"}
    udp_lab.start("u2", f"{udp_lab.lab.prefix}-u2")
    assert udp_lab.lb_host.probe(udp_lab.lb_id, checks) == {g.U1: True, g.U2: True}
    udp_lab.apply()
    assert set(udp_lab.ask(8)) == {"u1", "u2"}


def test_counters_count_the_listeners_flows(udp_lab: UdpLab) -> None:
    udp_lab.ask(3)
    found = udp_lab.lb_host.udp_stats(udp_lab.lb_id)
    assert found is not None
    lb = LoadBalancer.from_dict(udp_payload(udp_lab.lb_id)["loadbalancer"])
    stats = health.udp_listener_stats(lb, *found)[0]
    assert stats["total_connections"] >= 3 and stats["bytes_in"] > 0 and stats["bytes_out"] > 0
    assert stats["active_connections"] >= 3  # conntrack still holds them
    udp_lab.apply(down=frozenset({g.U2}))  # the table replaced: the counts go on
    again = health.udp_listener_stats(lb, *(udp_lab.lb_host.udp_stats(udp_lab.lb_id) or ("", "")))
    assert again[0]["total_connections"] >= stats["total_connections"]
    assert again[0]["bytes_in"] >= stats["bytes_in"]
    udp_lab.apply()


def test_teardown_leaves_no_namespace_or_file(udp_lab: UdpLab) -> None:
    udp_lab.lb_host.teardown(udp_lab.lb_id, None)
    assert plan.namespace(udp_lab.lb_id) not in sh("ip", "netns", "list").stdout
    assert not (udp_lab.lb_host.root / udp_lab.lb_id).exists()
