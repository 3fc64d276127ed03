"""IPv6 router advertisements of a router: radvd.conf and radvd's command line (pure).

Upstream's semantics (``ipv6_ra_mode`` of each IPv6 subnet on an internal
port): a router with any internal port on an IPv6 subnet runs radvd, which
advertises the router on each such port's link (so instances take it as
their default router) with

- the prefix of each ``slaac`` and ``dhcpv6-stateless`` subnet as
  autonomous (instances build their address from it, EUI-64), of each
  ``dhcpv6-stateful`` subnet as on-link only (addresses come from DHCPv6);
  a subnet without ``ipv6_ra_mode`` adds no prefix;
- the managed flag (M: ask DHCPv6 for addresses) for a ``dhcpv6-stateful``
  subnet, the other-configuration flag (O: ask DHCPv6 for options) for a
  ``dhcpv6-stateless`` one;
- the network's MTU (when IPv6 can use it) and, from ``slaac`` subnets,
  up to three DNS servers (RDNSS);
- a route to the metadata service's link-local address.

Subnets whose ``ipv6_address_mode`` is set without ``ipv6_ra_mode`` expect
another router's advertisements; the server refuses them as router
interfaces. HA routers get no radvd here (their IPv6 is not implemented),
nor do prefixes obtained by prefix delegation (not implemented).
``radvd.py`` runs the daemon.
"""
from __future__ import annotations

import dataclasses

from neutrino.agents.l3.model import DesiredRouter, RaInterface

SLAAC, STATEFUL, STATELESS = "slaac", "dhcpv6-stateful", "dhcpv6-stateless"
AUTONOMOUS_MODES = (SLAAC, STATELESS)
IPV6_MIN_MTU = 1280
MAX_RDNSS = 3  # radvd takes at most three servers in one RDNSS option
METADATA_LLA_ROUTE = "fe80::a9fe:a9fe/128"


@dataclasses.dataclass(frozen=True)
class Settings:
    """The agent's ``min_rtr_adv_interval``, ``max_rtr_adv_interval`` and ``radvd_user``."""

    min_interval: int = 30
    max_interval: int = 100
    user: str = ""


def needed(router: DesiredRouter) -> bool:
    """Whether the router runs radvd on this host."""
    return bool(router.ra_interfaces) and router.ha is None


def _section(iface: RaInterface, settings: Settings) -> list[str]:
    modes = {s.ra_mode for s in iface.subnets}
    lines = [f"interface {iface.device}", "{", "    AdvSendAdvert on;",
             f"    MinRtrAdvInterval {settings.min_interval};",
             f"    MaxRtrAdvInterval {settings.max_interval};"]
    if iface.mtu >= IPV6_MIN_MTU:
        lines.append(f"    AdvLinkMTU {iface.mtu};")
    if STATELESS in modes:
        lines.append("    AdvOtherConfigFlag on;")
    if STATEFUL in modes:
        lines.append("    AdvManagedFlag on;")
    dns = [d for s in iface.subnets if s.ra_mode == SLAAC for d in s.dns_nameservers]
    if dns:
        lines += [f"    RDNSS {' '.join(dns[:MAX_RDNSS])}", "    {", "    };"]
    prefixes = ([(s.cidr, "on") for s in iface.subnets if s.ra_mode in AUTONOMOUS_MODES]
                + [(s.cidr, "off") for s in iface.subnets if s.ra_mode == STATEFUL])
    for cidr, autonomous in prefixes:
        lines += [f"    prefix {cidr}", "    {", "        AdvOnLink on;",
                  f"        AdvAutonomous {autonomous};", "    };"]
    lines += [f"    route {METADATA_LLA_ROUTE}", "    {", "    };", "};"]
    return lines


def config(router: DesiredRouter, settings: Settings) -> str:
    """radvd.conf of the router: one interface section per IPv6 internal port."""
    lines: list[str] = []
    for iface in router.ra_interfaces:
        lines += _section(iface, settings)
    return "\n".join(lines) + "\n"


def command(conf: str, pid_file: str, log_file: str, settings: Settings,
            agent_user: str) -> list[str]:
    """radvd's argv (it daemonizes). ``radvd_user`` as upstream reads it: empty
    means the agent's own user, ``root`` means no ``-u`` at all."""
    argv = ["radvd", "-C", conf, "-p", pid_file, "-m", "logfile", "-l", log_file]
    if settings.user != "root":
        argv += ["-u", settings.user or agent_user]
    return argv
