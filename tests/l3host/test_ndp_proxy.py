"""Real IPv6 packets through a router's NDP proxy (``l3-ndp-proxy``).

The external host takes the whole /48 as on-link (as the upstream router of
an NDP-proxied network does), so it reaches an instance's global address
only when the router answers its neighbour solicitations on the gateway;
addresses not proxied stay unreachable from outside even by a route
through the router (the filter drops them), as upstream's agent does.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from neutrino.agents.l3 import ndp
from neutrino.agents.l3.model import desired_router
from neutrino.agents.l3.router import RouterManager
from tests.l3host.fabric import Fabric, namespaces, need_root, sh
from tests.l3host.routers import gateway, interface, router

VM1, VM2 = "2001:db8:77:1::11", "2001:db8:77:1::12"
QG = "2001:db8:77::10"


def _proxied(topo: "Topology", *addresses: str, enabled: bool = True) -> dict[str, Any]:
    r = dict(topo.router, enable_ndp_proxy=enabled,
             _ndp_proxies=[{"id": a, "port_id": "p", "ip_address": a} for a in addresses])
    return r


class Topology:
    def __init__(self, fabric: Fabric) -> None:
        self.fabric = fabric
        self.qr = interface("2001:db8:77:1::/64", "2001:db8:77:1::1", "fa:16:3e:00:6a:01")
        self.gw = gateway("2001:db8:77::/64", QG, "2001:db8:77::1", "fa:16:3e:00:6e:01")
        net = self.qr["network_id"]
        self.vm1 = fabric.host("vm1", net, None, None, "fa:16:3e:00:61:11")
        self.vm2 = fabric.host("vm2", net, None, None, "fa:16:3e:00:61:12")
        for ns, address in ((self.vm1, VM1), (self.vm2, VM2)):
            sh("ip", "-n", ns, "addr", "add", f"{address}/64", "dev", "eth0", "nodad")
            sh("ip", "-n", ns, "-6", "route", "add", "default", "via", "2001:db8:77:1::1")
        self.ext = fabric.host("ext", self.gw["network_id"], None, None, "fa:16:3e:00:6e:99")
        sh("ip", "-n", self.ext, "addr", "add", "2001:db8:77::1/48", "dev", "eth0", "nodad")
        self.router = router([self.qr], self.gw, enable_snat=False)
        self.ns = "qrouter-" + self.router["id"]
        self.manager: RouterManager

    def reaches(self, address: str) -> bool:
        """ping6 from the external host, with its neighbour cache forgotten first."""
        sh("ip", "-n", self.ext, "neigh", "flush", "all")
        for _ in range(4):  # the router's addresses may still be tentative (DAD)
            if sh("ip", "netns", "exec", self.ext, "ping", "-6", "-c1", "-W1", address,
                  check=False).returncode == 0:
                return True
        return False


@pytest.fixture
def topo(tmp_path: Path) -> Iterator[Topology]:
    need_root()
    fabric = Fabric()
    topology = None
    try:
        topology = Topology(fabric)
        topology.manager = RouterManager(fabric, ra_confs_path=str(tmp_path / "ra"))
        yield topology
    finally:
        if topology is not None:
            topology.manager.remove(topology.router["id"])  # its radvd too
        if topology is not None and topology.ns in namespaces():
            sh("ip", "netns", "delete", topology.ns, check=False)
        fabric.cleanup()


def test_external_host_reaches_an_instance_only_through_its_ndp_proxy(topo: Topology) -> None:
    manager = topo.manager
    assert manager.apply(_proxied(topo)).error is None
    assert not topo.reaches(VM1)  # proxying on, but no proxy for the address

    assert manager.apply(_proxied(topo, VM1)).error is None
    assert sh("ip", "netns", "exec", topo.ns, "sysctl", "-n",
              f"net.ipv6.conf.{desired_router(topo.router).gateway_device}.proxy_ndp"
              ).stdout.strip() == "1"
    assert topo.reaches(VM1)
    assert not topo.reaches(VM2)

    assert manager.apply(_proxied(topo, VM1, enabled=False)).error is None
    assert not topo.reaches(VM1)  # enable_ndp_proxy off: no answers, as upstream


def test_unproxied_addresses_are_dropped_even_when_routed_to(topo: Topology) -> None:
    manager = topo.manager
    assert manager.apply(_proxied(topo, VM1)).error is None
    sh("ip", "-n", topo.ext, "-6", "route", "add", f"{VM2}/128", "via", QG)
    assert topo.reaches(VM1)
    assert not topo.reaches(VM2)
    # without proxying, the router routes it like any other packet
    assert manager.apply(_proxied(topo, enabled=False)).error is None
    assert topo.reaches(VM2)


def test_filter_accepts_proxied_addresses_then_drops_the_internal_subnets() -> None:
    r = _proxied_dict()
    gw = desired_router(r).gateway_device
    assert ndp.rules(desired_router(r)) == [
        f'iifname "{gw}" ip6 daddr {VM1} accept',
        f'iifname "{gw}" ip6 daddr {{ 2001:db8:77:1::/64 }} drop']
    assert ndp.rules(desired_router({**r, "enable_ndp_proxy": False})) == []
    assert ndp.rules(desired_router({**r, "gw_port": None})) == []


def _proxied_dict() -> dict[str, Any]:
    qr = interface("2001:db8:77:1::/64", "2001:db8:77:1::1", "fa:16:3e:00:6a:01")
    gw = gateway("2001:db8:77::/64", QG, "2001:db8:77::1", "fa:16:3e:00:6e:01")
    return dict(router([qr], gw), enable_ndp_proxy=True,
                _ndp_proxies=[{"id": "x", "port_id": "p", "ip_address": VM1}])
