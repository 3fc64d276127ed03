"""Real packets through a router the agent built: east-west, SNAT, floating IPs, removal.

Topology (all namespaces, cleaned up afterwards): a fabric with a Linux
bridge per network; two instances on two tenant subnets; an "external host"
(172.24.4.100, also the external subnet's gateway) on the external network;
the router's qr-/qg- devices plugged as veths by a test InterfaceDriver.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest

from neutrino.agents.l3 import garp
from neutrino.agents.l3.agent import L3Agent, L3AgentEndpoint
from neutrino.agents.l3.linux import LinuxHost
from neutrino.agents.l3.router import RouterManager
from neutrino.service import make_conf
from tests.l3host.fabric import Fabric, namespaces, need_root, sh
from tests.l3host.routers import fip, gateway, interface, router
from tests.l3host.test_agent_loop import FakePlugin
from tests.waiting import wait_for

PORT = 9999


class Topology:
    def __init__(self, fabric: Fabric) -> None:
        self.fabric = fabric
        self.qr_a = interface("10.100.1.0/24", "10.100.1.1", "fa:16:3e:00:0a:01")
        self.qr_b = interface("10.100.2.0/24", "10.100.2.1", "fa:16:3e:00:0b:01")
        self.gw = gateway("172.24.4.0/24", "172.24.4.10", "172.24.4.100", "fa:16:3e:00:ee:01")
        self.vm1 = fabric.host("vm1", self.qr_a["network_id"], "10.100.1.11/24", "10.100.1.1",
                               "fa:16:3e:00:01:11")
        self.vm2 = fabric.host("vm2", self.qr_b["network_id"], "10.100.2.11/24", "10.100.2.1",
                               "fa:16:3e:00:02:11")
        self.ext = fabric.host("ext", self.gw["network_id"], "172.24.4.100/24", None,
                               "fa:16:3e:00:ee:99")
        self.fip = fip("172.24.4.20", "10.100.1.11", "")
        self.router = router([self.qr_a, self.qr_b], self.gw, fips=[self.fip])
        self.ns = "qrouter-" + self.router["id"]


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


def test_router_routes_snats_and_serves_a_floating_ip(topo: Topology) -> None:
    manager = RouterManager(topo.fabric)
    result = manager.apply(topo.router)
    assert result.error is None
    assert result.statuses == {topo.fip["id"]: "ACTIVE"}
    f = topo.fabric

    # east-west, both ways
    assert f.pings(topo.vm1, "10.100.2.11")
    assert f.pings(topo.vm2, "10.100.1.11")

    # SNAT: vm2 (no floating IP) reaches the external host as the gateway IP
    f.serve_peer_address(topo.ext, PORT)
    assert f.seen_as(topo.vm2, "172.24.4.100", PORT) == "172.24.4.10"
    # ... and vm1 leaves as its floating IP
    assert f.seen_as(topo.vm1, "172.24.4.100", PORT) == "172.24.4.20"

    # DNAT: the external host reaches vm1 by the floating address, its own address kept
    f.serve_peer_address(topo.vm1, PORT)
    assert f.pings(topo.ext, "172.24.4.20")
    assert f.seen_as(topo.ext, "172.24.4.20", PORT) == "172.24.4.100"
    # hairpin: vm2 reaches vm1's floating IP too (seen as the gateway IP)
    assert f.seen_as(topo.vm2, "172.24.4.20", PORT) == "172.24.4.10"

    # the floating IP leaves the router: unreachable, reported DOWN, vm1 SNATed like others
    topo.router["_floatingips"] = []
    result = manager.apply(topo.router)
    assert result.error is None
    assert result.statuses == {topo.fip["id"]: "DOWN"}
    assert f.seen_as(topo.ext, "172.24.4.20", PORT) is None
    assert not f.pings(topo.ext, "172.24.4.20")
    assert f.seen_as(topo.vm1, "172.24.4.100", PORT) == "172.24.4.10"


def test_enable_snat_false_keeps_tenant_sources(topo: Topology) -> None:
    manager = RouterManager(topo.fabric)
    topo.router["enable_snat"] = False
    topo.router["_floatingips"] = []
    assert manager.apply(topo.router).error is None
    # the external host routes the tenant subnet back through the router
    sh("ip", "-n", topo.ext, "route", "add", "10.100.2.0/24", "via", "172.24.4.10")
    topo.fabric.serve_peer_address(topo.ext, PORT)
    assert topo.fabric.seen_as(topo.vm2, "172.24.4.100", PORT) == "10.100.2.11"


def _addresses(ns: str, dev: str) -> set[str]:
    return LinuxHost().addresses(ns, dev)


def _via_routes(ns: str) -> set[tuple[str, str]]:
    out = json.loads(sh("ip", "-j", "-n", ns, "route", "show").stdout)
    return {(r["dst"], r["gateway"]) for r in out if r.get("gateway")}


def test_reconcile_adds_missing_and_removes_stale_then_delete_cleans_all(
        topo: Topology) -> None:
    manager = RouterManager(topo.fabric)
    topo.router["routes"] = [{"destination": "192.168.7.0/24", "nexthop": "10.100.2.11"}]
    assert manager.apply(topo.router).error is None
    qr_a = "qr-" + topo.qr_a["id"][:11]
    qg = "qg-" + topo.gw["id"][:11]
    assert _addresses(topo.ns, qr_a) == {"10.100.1.1/24"}
    assert _addresses(topo.ns, qg) == {"172.24.4.10/24", "172.24.4.20/32"}
    assert _via_routes(topo.ns) == {("default", "172.24.4.100"),
                                    ("192.168.7.0/24", "10.100.2.11")}
    assert sh("ip", "netns", "exec", topo.ns, "sysctl", "-n",
              "net.ipv4.ip_forward").stdout.strip() == "1"

    # drift on the host: a stray address and route, a missing address
    sh("ip", "-n", topo.ns, "addr", "add", "10.100.1.99/24", "dev", qr_a)
    sh("ip", "-n", topo.ns, "addr", "del", "172.24.4.20/32", "dev", qg)
    sh("ip", "-n", topo.ns, "route", "add", "192.168.8.0/24", "via", "10.100.1.50")
    # and changes: interface B leaves the router, the extra route goes, A's MTU shrinks
    topo.router["_interfaces"] = [topo.qr_a]
    topo.router["routes"] = []
    topo.qr_a["mtu"] = 1400
    assert manager.apply(topo.router).error is None
    assert LinuxHost().mtus(topo.ns)[qr_a] == 1400
    assert _addresses(topo.ns, qr_a) == {"10.100.1.1/24"}
    assert _addresses(topo.ns, qg) == {"172.24.4.10/24", "172.24.4.20/32"}
    assert _via_routes(topo.ns) == {("default", "172.24.4.100")}
    assert LinuxHost().links(topo.ns) == ["lo", qr_a, qg]
    ruleset = sh("ip", "netns", "exec", topo.ns, "nft", "list", "table", "ip",
                 "neutrino_l3").stdout
    assert "10.100.2.0/24" not in ruleset and "10.100.1.0/24" in ruleset

    fabric_links = len(LinuxHost().links(topo.fabric.ns))
    manager.remove(topo.router["id"])
    assert topo.ns not in namespaces()
    # both of the router's remaining veths are gone from the fabric too
    assert len(LinuxHost().links(topo.fabric.ns)) == fabric_links - 2
    manager.remove(topo.router["id"])  # absent is fine


def test_failed_apply_reports_floating_ips_in_error(topo: Topology) -> None:
    class Broken(LinuxHost):
        def nft(self, ns: str, script: str) -> None:
            raise RuntimeError("nft refused")

    manager = RouterManager(topo.fabric, Broken())
    result = manager.apply(topo.router)
    assert isinstance(result.error, RuntimeError)
    assert result.statuses == {topo.fip["id"]: "ERROR"}
    # once it works the floating IP becomes ACTIVE
    manager.host = LinuxHost()
    assert manager.apply(topo.router).statuses == {topo.fip["id"]: "ACTIVE"}
    assert manager.apply(topo.router).statuses == {}




def test_agent_loop_applies_notified_changes_and_a_restart_converges(
        topo: Topology, tmp_path: Path) -> None:
    """The agent (fake server answers) builds the router at start, adds a port
    forwarding after ``routers_updated``; a new agent on the same host (a
    restart) converges without reporting unchanged statuses, and on
    ``router_deleted`` everything goes."""
    plugin = FakePlugin([topo.router])
    agent = L3Agent(_conf(tmp_path), topo.fabric, plugin_rpc=plugin,
                    routers=RouterManager(topo.fabric, OnlyThese({topo.ns})))
    assert agent.process()
    assert plugin.calls[-1] == ("update_floatingip_statuses",
                                (topo.router["id"], {topo.fip["id"]: "ACTIVE"}))
    f = topo.fabric
    f.serve_peer_address(topo.vm2, PORT)
    assert f.seen_as(topo.ext, "172.24.4.30", 2222) is None
    topo.router["_port_forwardings"] = [
        {"floating_ip_address": "172.24.4.30", "internal_ip_address": "10.100.2.11",
         "protocol": "tcp", "external_port": 2222, "internal_port": PORT}]
    L3AgentEndpoint(agent).routers_updated({}, routers=[topo.router["id"]])
    assert agent.process()
    # the external host had failed to resolve 172.24.4.30: the gratuitous ARPs
    # (sent in the background, garp.SCHEDULE) fix it
    assert wait_for(lambda: "fa:16:3e:00:ee:01" in sh(
        "ip", "-n", topo.ext, "neigh", "show", "172.24.4.30").stdout, garp.SCHEDULE[-1] + 5)
    assert f.seen_as(topo.ext, "172.24.4.30", 2222) == "172.24.4.100"

    topo.fip["status"] = "ACTIVE"  # what the server now shows
    calls = len(plugin.calls)
    restarted = L3Agent(_conf(tmp_path), topo.fabric, plugin_rpc=plugin,
                        routers=RouterManager(topo.fabric, OnlyThese({topo.ns})))
    assert restarted.process()
    assert [c[0] for c in plugin.calls[calls:]] == ["sync_routers"]
    assert f.seen_as(topo.ext, "172.24.4.30", 2222) == "172.24.4.100"
    assert f.pings(topo.vm1, "10.100.2.11")

    L3AgentEndpoint(restarted).router_deleted({}, router_id=topo.router["id"])
    assert restarted.process()
    assert topo.ns not in namespaces()


class OnlyThese(LinuxHost):
    """The host as this test's agent sees it: other tests' routers are not its own."""

    def __init__(self, mine: set[str]) -> None:
        self.mine = mine

    def namespaces(self) -> list[str]:
        return [n for n in super().namespaces() if n in self.mine]


def _conf(tmp_path: Path) -> Any:
    path = tmp_path / "l3.conf"
    path.write_text("[DEFAULT]\nhost = l3host-dp\n[AGENT]\nreport_interval = 0\n")
    return make_conf(["--config-file", str(path)])
