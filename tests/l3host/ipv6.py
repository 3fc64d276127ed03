"""What an IPv6 host in a namespace got from router advertisements, read with
``ip -j`` and ``rdisc6`` (Debian ndisc6)."""
from __future__ import annotations

import json
import shutil

import netaddr
import pytest

from tests.l3host.fabric import sh

needs_rdisc6 = pytest.mark.skipif(shutil.which("rdisc6") is None,
                                  reason="needs rdisc6 (Debian ndisc6)")
needs_radvd = pytest.mark.skipif(shutil.which("radvd") is None,
                                 reason="needs radvd (Debian radvd)")


def slaac_address(cidr: str, mac: str) -> str:
    return str(netaddr.EUI(mac).ipv6(netaddr.IPNetwork(cidr).network))


def link_local(mac: str) -> str:
    return str(netaddr.EUI(mac).ipv6_link_local())


def global_addresses(ns: str) -> set[str]:
    out = json.loads(sh("ip", "-j", "-n", ns, "-6", "addr", "show", "dev", "eth0",
                        "scope", "global").stdout or "[]")
    return {a["local"] for link in out for a in link.get("addr_info", ())
            if a.get("local") and not a.get("tentative")}


def default_gateways(ns: str, dev: str = "eth0") -> set[str]:
    out = json.loads(sh("ip", "-j", "-n", ns, "-6", "route", "show", "default",
                        "dev", dev).stdout or "[]")
    return {r["gateway"] for r in out if r.get("gateway")}


def ping6(ns: str, address: str) -> bool:
    return any(sh("ip", "netns", "exec", ns, "ping", "-6", "-c1", "-W1", address,
                  check=False).returncode == 0 for _ in range(3))


def solicited_flags(ns: str) -> dict[str, str]:
    """The flags of the router advertisement answering a solicitation (rdisc6)."""
    out = sh("ip", "netns", "exec", ns, "rdisc6", "-1", "-w", "2000", "eth0",
             check=False).stdout
    flags = {}
    for line in out.splitlines():
        if ":" in line:
            key, value = line.split(":", 1)
            flags.setdefault(key.strip(), value.split()[0] if value.split() else "")
    return flags
