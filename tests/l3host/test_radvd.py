"""Real router advertisements: radvd in the router's namespace, instances on Linux
bridges taking their addresses and default route from it (SLAAC), reloads,
restarts, stops; and the gateway device learning an IPv6 default route from
the external network's router.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import netaddr
import pytest

from neutrino.agents.l3 import ra
from neutrino.agents.l3.radvd import Radvd
from neutrino.agents.l3.router import RouterManager
from tests.l3host.fabric import Fabric, namespaces, need_root, sh
from tests.l3host.ipv6 import (
    default_gateways,
    global_addresses,
    link_local,
    needs_radvd,
    needs_rdisc6,
    ping6,
    slaac_address,
    solicited_flags,
)
from tests.l3host.routers import gateway, interface, router
from tests.waiting import wait_for

pytestmark = [needs_radvd, needs_rdisc6]
FAST = ra.Settings(min_interval=3, max_interval=4)  # advertisements every 3-4 s


def v6_interface(cidr: str, mac: str, mode: str | None) -> dict[str, Any]:
    port = interface(cidr, str(netaddr.IPNetwork(cidr).network + 1), mac, mtu=1450)
    port["subnets"][0]["ipv6_ra_mode"] = mode
    return port


class Topology:
    def __init__(self, fabric: Fabric, confs: Path) -> None:
        self.fabric = fabric
        self.qr_a = v6_interface("2001:db8:1::/64", "fa:16:3e:00:0a:01", "slaac")
        self.qr_b = v6_interface("2001:db8:2::/64", "fa:16:3e:00:0b:01", "slaac")
        self.gw = gateway("172.24.4.0/24", "172.24.4.10", "172.24.4.100", "fa:16:3e:00:ee:01")
        self.vm_a = fabric.host("vma", self.qr_a["network_id"], None, None, "fa:16:3e:00:01:11")
        self.vm_b = fabric.host("vmb", self.qr_b["network_id"], None, None, "fa:16:3e:00:02:11")
        self.router = router([self.qr_a, self.qr_b], self.gw)
        self.ns = "qrouter-" + self.router["id"]
        self.manager = RouterManager(fabric, ra_confs_path=str(confs), ra_settings=FAST)
        self.radvd = self.manager.radvd(self.router["id"])


@pytest.fixture
def topo(tmp_path: Path) -> Iterator[Topology]:
    need_root()
    fabric = Fabric()
    topology = None
    try:
        topology = Topology(fabric, tmp_path / "ra")
        yield topology
    finally:
        if topology is not None:
            topology.radvd.stop()
            if topology.ns in namespaces():
                sh("ip", "netns", "delete", topology.ns, check=False)
        fabric.cleanup()


def test_slaac_instances_get_address_and_default_route_from_radvd_and_ping_across(
        topo: Topology) -> None:
    assert topo.manager.apply(topo.router).error is None
    vm_a_ip = slaac_address("2001:db8:1::/64", "fa:16:3e:00:01:11")
    vm_b_ip = slaac_address("2001:db8:2::/64", "fa:16:3e:00:02:11")
    assert wait_for(lambda: vm_a_ip in global_addresses(topo.vm_a), 15), \
        sh("ip", "-n", topo.vm_a, "-6", "addr").stdout
    assert wait_for(lambda: vm_b_ip in global_addresses(topo.vm_b), 15)
    assert default_gateways(topo.vm_a) == {link_local("fa:16:3e:00:0a:01")}
    assert default_gateways(topo.vm_b) == {link_local("fa:16:3e:00:0b:01")}
    assert ping6(topo.vm_a, vm_b_ip) and ping6(topo.vm_b, vm_a_ip)
    flags = solicited_flags(topo.vm_a)
    assert (flags["Stateful address conf."], flags["Stateful other conf."]) == ("No", "No")
    assert flags["MTU"] == "1450"

    # network B turns stateful: radvd is reloaded (same process) and sets M
    pid = topo.radvd.pid()
    topo.qr_b["subnets"][0]["ipv6_ra_mode"] = "dhcpv6-stateful"
    assert topo.manager.apply(topo.router).error is None
    assert topo.radvd.pid() == pid
    assert wait_for(lambda: solicited_flags(topo.vm_b).get("Stateful address conf.") == "Yes",
                    10)
    assert solicited_flags(topo.vm_b)["Autonomous address conf."] == "No"

    # a radvd that died is noticed and started again by the next apply
    sh("kill", "-9", str(pid))
    assert wait_for(lambda: topo.manager.radvd_stopped() == [topo.router["id"]], 5)
    assert topo.manager.apply(topo.router).error is None
    assert topo.radvd.pid() not in (None, pid)
    assert topo.manager.radvd_stopped() == []

    # no IPv6 interface left: radvd stops and its files go
    topo.router["_interfaces"] = [interface("10.100.1.0/24", "10.100.1.1",
                                            "fa:16:3e:00:0c:01")]
    assert topo.manager.apply(topo.router).error is None
    assert topo.radvd.pid() is None and not topo.radvd.dir.exists()


def test_removing_the_router_stops_its_radvd_which_withdraws_the_default_route(
        topo: Topology) -> None:
    assert topo.manager.apply(topo.router).error is None
    assert topo.radvd.pid() is not None
    assert (topo.radvd.conf.stat().st_mode & 0o777) == 0o444
    topo.manager.ra_settings = ra.Settings()  # upstream's intervals: a 300 s router lifetime
    assert topo.manager.apply(topo.router).error is None
    assert wait_for(lambda: default_gateways(topo.vm_a), 15)
    topo.manager.remove(topo.router["id"])
    assert topo.radvd.pid() is None and not topo.radvd.dir.exists()
    assert topo.ns not in namespaces()
    # radvd's last advertisement (router lifetime 0) went out before its devices:
    # the instance drops the route now, not when its lifetime ends
    assert wait_for(lambda: not default_gateways(topo.vm_a), 10)


def test_gateway_learns_an_ipv6_default_route_from_the_external_router_and_keeps_it(
        topo: Topology, tmp_path: Path) -> None:
    """No external subnet gives an IPv6 gateway: the qg- device accepts the
    external network's advertisements (forwarding notwithstanding), and the
    route they give survives the router being redone."""
    ext = topo.fabric.host("ext", topo.gw["network_id"], "172.24.4.100/24", None,
                           "fa:16:3e:00:ee:99")
    sh("ip", "netns", "exec", ext, "sysctl", "-qw", "net.ipv6.conf.all.forwarding=1")
    upstream = Radvd(str(tmp_path / "ext-ra"), "ext")
    try:
        topo.router["_interfaces"] = [topo.qr_a]
        assert topo.manager.apply(topo.router).error is None
        qg = "qg-" + topo.gw["id"][:11]
        assert sh("ip", "netns", "exec", topo.ns, "sysctl", "-n",
                  f"net.ipv6.conf.{qg}.accept_ra").stdout.strip() == "2"
        upstream.ensure(ext, "interface eth0\n{\n    AdvSendAdvert on;\n"
                        "    MinRtrAdvInterval 3;\n    MaxRtrAdvInterval 4;\n};\n",
                        ra.Settings(user="root"))
        ext_lla = link_local("fa:16:3e:00:ee:99")
        assert wait_for(lambda: default_gateways(topo.ns, qg) == {ext_lla}, 15)
        assert topo.manager.apply(topo.router).error is None
        assert default_gateways(topo.ns, qg) == {ext_lla}
    finally:
        upstream.stop()


def test_ipv6_gateway_option_gives_the_gateway_device_a_link_local_default_route(
        tmp_path: Path) -> None:
    need_root()
    fabric = Fabric()
    gw = gateway("172.24.4.0/24", "172.24.4.10", "172.24.4.100", "fa:16:3e:00:ee:01")
    r = router([interface("10.100.1.0/24", "10.100.1.1", "fa:16:3e:00:0a:01")], gw)
    ns, qg = "qrouter-" + r["id"], "qg-" + gw["id"][:11]
    try:
        manager = RouterManager(fabric, ra_confs_path=str(tmp_path), ipv6_gateway="fe80::99")
        assert manager.apply(r).error is None
        assert default_gateways(ns, qg) == {"fe80::99"}
        assert sh("ip", "netns", "exec", ns, "sysctl", "-n",
                  f"net.ipv6.conf.{qg}.accept_ra").stdout.strip() == "0"
    finally:
        sh("ip", "netns", "delete", ns, check=False)
        fabric.cleanup()
