"""A route from the host into the all-in-one's external network.

DevStack puts the external network's gateway address on a br-ex of the
host itself, so floating IPs answer a plain ``ping`` from the host. The
all-in-one's br-ex lives in its own namespace instead; this module joins
the two with a veth pair of its own (a small link network, ``[aio]
host_link``: one end in the host, one in the namespace, which forwards) and
routes the external prefix from the host over it. Replies find their way
back because the routers' default gateway is that namespace's br-ex.

It adds one device and one route to the host and nothing else: no existing
interface or route is changed, and when the external prefix or the link
network is already routed on the host it refuses, with the route in the
way, rather than shadow it. Deleting the host's end of the pair (at stop,
or with the namespace) takes the route with it.
"""
from __future__ import annotations

import hashlib
import ipaddress
import json
from dataclasses import dataclass
from typing import Any, Iterable

from neutrino.agents import iproute


class Refused(RuntimeError):
    """The host already routes an address the route would need."""


@dataclass(frozen=True)
class Link:
    host_device: str  # in the host's namespace
    inner_device: str  # in the all-in-one's namespace
    host_address: ipaddress.IPv4Interface
    inner_address: ipaddress.IPv4Interface


def link_for(namespace: str, link_cidr: str) -> Link:
    """The pair of ``namespace``: names unique to it (two all-in-ones with
    different namespaces never share a device), the link network's first
    two addresses."""
    net = ipaddress.IPv4Network(link_cidr, strict=True)
    if net.num_addresses < 4:
        raise ValueError(f"[aio] host_link {link_cidr}: needs two host addresses (a /30)")
    tag = hashlib.sha1(namespace.encode()).hexdigest()[:8]
    first, second = list(net.hosts())[:2]
    return Link(f"naio{tag}h", f"naio{tag}n",
                ipaddress.IPv4Interface(f"{first}/{net.prefixlen}"),
                ipaddress.IPv4Interface(f"{second}/{net.prefixlen}"))


def in_the_way(routes: Iterable[dict[str, Any]],
               wanted: Iterable[ipaddress.IPv4Network]) -> str | None:
    """The first of the host's routes (``ip -json route`` entries) that
    covers or lies inside one of ``wanted``, as ``ip`` shows it; a default
    route is not in the way (that is what the new route is more specific
    than)."""
    wanted = list(wanted)
    for route in routes:
        dst = route.get("dst", "")
        if dst in ("", "default"):
            continue
        try:
            net = ipaddress.IPv4Network(dst, strict=False)
        except ValueError:
            continue
        if net.prefixlen == 0:
            continue
        if any(net.overlaps(w) for w in wanted):
            where = " ".join(f"{k} {route[k]}" for k in ("dev", "table") if route.get(k))
            return f"{dst} {where}".strip()
    return None


class HostRoute:
    """The external prefix ``prefix`` routed from the host into ``namespace``."""

    def __init__(self, namespace: str, prefix: str, link_cidr: str) -> None:
        self.namespace = namespace
        self.prefix = ipaddress.IPv4Interface(prefix).network
        self.link = link_for(namespace, link_cidr)

    def start(self) -> None:
        """Add the pair and the route; ``Refused`` when the host already
        routes the prefix or the link network (nothing is then added)."""
        link = self.link
        iproute.delete_link(link.host_device)  # ours by name: a crashed run's
        routes = json.loads(iproute.ip("-4", "-json", "route", "show", "table", "all") or "[]")
        found = in_the_way(routes, [self.prefix, link.host_address.network])
        if found:
            raise Refused(f"the host already routes {found}")
        iproute.ip("link", "add", link.host_device, "type", "veth", "peer", "name",
                   link.inner_device, "netns", self.namespace)
        try:
            self._configure()
        except Exception:
            iproute.delete_link(link.host_device)
            raise

    def _configure(self) -> None:
        link, ns = self.link, self.namespace
        # no IPv6 router solicitations or addresses on a link only IPv4 crosses
        for device, where in ((link.host_device, None), (link.inner_device, ns)):
            if where:
                iproute.netns_exec(where, "sysctl", "-qw",
                                   f"net.ipv6.conf.{device}.disable_ipv6=1", check=False)
            else:
                _sysctl(f"net/ipv6/conf/{device}/disable_ipv6", "1")
        iproute.ip("addr", "add", str(link.host_address), "dev", link.host_device)
        iproute.ip("link", "set", link.host_device, "up")
        iproute.ip("addr", "add", str(link.inner_address), "dev", link.inner_device,
                   namespace=ns)
        iproute.ip("link", "set", link.inner_device, "up", namespace=ns)
        # the namespace's own setting (sysctls are per network namespace)
        iproute.netns_exec(ns, "sysctl", "-qw", "net.ipv4.ip_forward=1")
        iproute.ip("route", "add", str(self.prefix), "via", str(link.inner_address.ip),
                   "dev", link.host_device)

    def stop(self) -> None:
        """The pair removed (its route goes with it); absent is fine."""
        iproute.delete_link(self.link.host_device)


def _sysctl(path: str, value: str) -> None:
    try:
        with open(f"/proc/sys/{path}", "w", encoding="ascii") as f:
            f.write(value)
    except OSError:
        pass  # a kernel without IPv6: nothing to turn off
