"""Real TCP through a router's floating IP and gateway IP under QoS limits
(the ``fip_qos`` and ``gateway_ip_qos`` extensions), on the topology of
``test_dataplane`` (Linux bridges, veth-plugged router devices).

Limits are asserted as bounds with a generous margin: a limited transfer
below 1.5 times the rate, an unlimited one above three times the limited
one (the fabric does several hundred Mbit/s).
"""
from __future__ import annotations

import re
from typing import Any, Iterator

import pytest

from neutrino.agents.l3 import qos
from neutrino.agents.l3.router import RouterManager
from tests.l3host.fabric import Fabric, namespaces, need_root, sh
from tests.l3host.test_dataplane import Topology
from tests.l3host.throughput import throughput

KBPS = 4000
LIMIT = KBPS * 1000 * 1.5  # bit/s a limited transfer stays below
EXTENSIONS = frozenset(qos.EXTENSIONS)


def _policy(pid: str, *directions: str) -> dict[str, Any]:
    # a burst of a tenth of the rate: the default (80%) is a third of a 1 MB transfer
    return {"id": pid, "rules": [{"type": "bandwidth_limit", "direction": d,
                                  "max_kbps": KBPS, "max_burst_kbps": KBPS // 10}
                                 for d in directions]}


@pytest.fixture
def topo() -> Iterator[Topology]:
    need_root()
    fabric = Fabric()
    topology = None
    try:
        topology = Topology(fabric)
        yield topology
    finally:
        if topology is not None and topology.ns in namespaces():
            sh("ip", "netns", "delete", topology.ns, check=False)
        fabric.cleanup()


def _links(ns: str) -> set[str]:
    return {line.split(":")[1].strip().split("@")[0]
            for line in sh("ip", "-o", "-n", ns, "link", "show").stdout.splitlines()}


def _sent_bytes(ns: str, device: str) -> int:
    """Bytes the device's HTB classes sent: a rebuilt qdisc starts again at 0."""
    out = sh("ip", "netns", "exec", ns, "tc", "-s", "class", "show", "dev", device).stdout
    return sum(int(n) for n in re.findall(r"Sent (\d+) bytes", out))


def test_floating_ip_and_gateway_ip_limits_cap_tcp_both_ways_until_removed(
        topo: Topology) -> None:
    manager = RouterManager(topo.fabric, qos_extensions=EXTENSIONS)
    r, vm1, vm2, ext = topo.router, topo.vm1, topo.vm2, topo.ext
    assert manager.apply(r).error is None
    free_in = throughput(ext, vm1, "172.24.4.20")
    # the floating IP's policy: into the instance and out of it
    topo.fip["qos_policy_id"] = "fip-policy"
    policies = {"fip-policy": _policy("fip-policy", "ingress", "egress"),
                "gw-policy": _policy("gw-policy", "ingress", "egress")}
    assert manager.apply(r, policies).error is None
    into = throughput(ext, vm1, "172.24.4.20")  # ingress: towards the floating IP
    out = throughput(vm1, ext, "172.24.4.100")  # egress: the instance's uploads
    # the gateway IP is not limited yet: vm2's SNAT traffic is free
    snat_free = throughput(vm2, ext, "172.24.4.100")
    print(f"\nTCP bit/s: unlimited {free_in:.0f}, FIP ingress {into:.0f}, egress {out:.0f}, "
          f"SNAT unlimited {snat_free:.0f} (limit {KBPS * 1000})")
    assert into < LIMIT and out < LIMIT, (into, out)
    assert free_in > 3 * into and snat_free > 3 * out, (free_in, snat_free)
    # the router's gateway policy limits the SNAT traffic, both ways
    r["external_gateway_info"]["qos_policy_id"] = "gw-policy"
    assert manager.apply(r, policies).error is None
    snat_out = throughput(vm2, ext, "172.24.4.100")
    snat_in = throughput(vm2, ext, "172.24.4.100", mode="download")
    print(f"SNAT limited: egress {snat_out:.0f}, ingress {snat_in:.0f}")
    assert snat_out < LIMIT and snat_in < LIMIT, (snat_out, snat_in)
    # applying the same again leaves the limits in place (their counters run on)
    gw = f"qg-{r['gw_port']['id']}"[:14]
    sent = _sent_bytes(topo.ns, gw)
    assert sent > 0
    assert manager.apply(r, policies).error is None
    assert _sent_bytes(topo.ns, gw) >= sent
    # policies removed: the limits go, the IFB device too
    topo.fip["qos_policy_id"] = None
    r["external_gateway_info"]["qos_policy_id"] = None
    assert manager.apply(r, policies).error is None
    lifted = throughput(ext, vm1, "172.24.4.20")
    snat_lifted = throughput(vm2, ext, "172.24.4.100", mode="download")
    print(f"lifted: FIP ingress {lifted:.0f}, SNAT ingress {snat_lifted:.0f}")
    assert lifted > 3 * into and snat_lifted > 3 * snat_in, (lifted, snat_lifted)
    assert not any(name.startswith(qos.IFB_PREFIX) for name in _links(topo.ns))


def test_a_new_agent_replaces_the_limits_it_finds_and_restores_lost_ones(topo: Topology) -> None:
    r = topo.router
    topo.fip["qos_policy_id"] = "p"
    policies = {"p": _policy("p", "ingress")}
    assert RouterManager(topo.fabric, qos_extensions=EXTENSIONS).apply(r, policies).error is None
    # a restarted agent with the policy changed meanwhile
    policies = {"p": {"id": "p", "rules": [{"type": "bandwidth_limit", "direction": "egress",
                                            "max_kbps": 2000, "max_burst_kbps": 0}]}}
    manager = RouterManager(topo.fabric, qos_extensions=EXTENSIONS)
    assert manager.apply(r, policies).error is None
    gw = f"qg-{r['gw_port']['id']}"[:14]
    classes = sh("ip", "netns", "exec", topo.ns, "tc", "class", "show", "dev", gw).stdout
    assert "rate 2Mbit" in classes and "ceil 2Mbit" in classes, classes
    # a device that lost its qdiscs (re-plugged) gets them back on the next pass
    sh("ip", "netns", "exec", topo.ns, "tc", "qdisc", "del", "dev", gw, "root")
    assert manager.apply(r, policies).error is None
    assert "rate 2Mbit" in sh("ip", "netns", "exec", topo.ns, "tc", "class", "show", "dev",
                              gw).stdout
    assert "ingress" not in sh("ip", "netns", "exec", topo.ns, "tc", "qdisc", "show", "dev",
                               gw).stdout
    assert not any(name.startswith(qos.IFB_PREFIX) for name in _links(topo.ns))
