"""A distributed router on one host, as upstream's DVR agent builds it (pure).

Given a distributed router as ``sync_routers`` gives it (with the DVR keys
of the server's ``dvr_sync``), this host's ``agent_mode`` and name, it
returns what each of the router's namespaces here should hold:

- ``qrouter-``, on every ``dvr``/``dvr_snat`` host the router is on: the
  distributed ports (``qr-``, the same address and MAC on every host),
  so instances' traffic between the router's subnets is routed on their
  own host; every other port of those subnets as a permanent neighbour
  (``_arp_entries``); per IPv4 subnet a rule sending what leaves the
  subnets to that subnet's SNAT port (``sg-`` on the network node); and,
  when instances here have floating IPs, the ``rfp-`` end of a veth pair
  to the ``fip-`` namespace, carrying the floating IPs, with a rule
  sending each fixed address there and the 1:1 NAT on it;
- ``fip-<external network>``, shared by the host's routers on that
  network: the floating IP agent gateway port (``fg-``) on the external
  network answering ARP for the floating IPs behind it (proxy ARP), the
  ``fpr-`` ends and a host route per floating IP;
- ``snat-``, on the ``dvr_snat`` host of the router's SNAT binding: the
  gateway port (``qg-``) and the SNAT ports, and the SNAT of the
  router's subnets to the gateway address.

The qrouter- and snat- parts are ``DesiredRouter``s (the legacy router's
model, so the same steps build them); what only a distributed router has
is in ``Distributed``.
"""
from __future__ import annotations

import dataclasses
import zlib
from typing import Any

import netaddr

from neutrino.agents.l3 import model

SNAT_PREFIX = model.SNAT_PREFIX
FIP_GATEWAY_PREFIX = model.FIP_GATEWAY_PREFIX
RTR_TO_FIP_PREFIX = "rfp-"
FIP_TO_RTR_PREFIX = "fpr-"
FIP_RT_TABLE = 16  # upstream's table of floating IPs' routes in qrouter-
FIP_RULE_PRIORITY = 32768  # upstream's first floating IP rule priority
FIP_LL_SUBNET = netaddr.IPNetwork("169.254.64.0/18")  # the rfp-/fpr- pairs' addresses
DVR, DVR_SNAT = "dvr", "dvr_snat"


def pair_names(router_id: str) -> tuple[str, str]:
    """``rfp-``/``fpr-`` + the router id cut to 11 characters, as upstream."""
    return (RTR_TO_FIP_PREFIX + router_id)[:14], (FIP_TO_RTR_PREFIX + router_id)[:14]


def pair_addresses(router_id: str) -> tuple[str, str]:
    """The /31 of the router's veth pair (rfp- side, fpr- side), from its id:
    stable across restarts without a file of allocations."""
    slots = FIP_LL_SUBNET.size // 2
    first = FIP_LL_SUBNET.first + 2 * (zlib.crc32(router_id.encode()) % slots)
    return str(netaddr.IPAddress(first)), str(netaddr.IPAddress(first + 1))


@dataclasses.dataclass(frozen=True)
class Neighbour:
    device: str
    ip_address: str
    mac_address: str


@dataclasses.dataclass(frozen=True)
class Rule:
    """``ip rule from <source> lookup <table> priority <priority>``."""

    source: str
    table: int
    priority: int


@dataclasses.dataclass(frozen=True)
class TableRoute:
    """A default route in a table of its own: ``default via <nexthop> dev <device>``."""

    table: int
    nexthop: str
    device: str


@dataclasses.dataclass(frozen=True)
class FipNamespace:
    """The host's ``fip-`` namespace for one external network."""

    namespace: str
    network_id: str
    gateway: model.Device  # the fg- device
    routes: tuple[model.Route, ...]  # the default route(s) via the external subnet


@dataclasses.dataclass(frozen=True)
class FipLink:
    """The router's way to its floating IPs: the rfp-/fpr- pair."""

    rfp: str
    fpr: str
    rfp_address: str
    fpr_address: str
    fip: FipNamespace
    floating_ips: tuple[str, ...]  # floating addresses answered here


@dataclasses.dataclass(frozen=True)
class Distributed:
    """What a distributed router's qrouter- namespace holds besides its qr- ports."""

    neighbours: tuple[Neighbour, ...]
    rules: tuple[Rule, ...]
    table_routes: tuple[TableRoute, ...]
    fip: FipLink | None


@dataclasses.dataclass(frozen=True)
class DvrRouter:
    local: model.DesiredRouter  # qrouter-: the distributed part
    distributed: Distributed
    snat: model.DesiredRouter | None  # snat-, on the SNAT host only


def snat_namespace_name(router_id: str) -> str:
    return model.namespace_name(router_id, "snat-")


def fip_namespace_name(network_id: str) -> str:
    return model.namespace_name(network_id, "fip-")


def _ip_int(address: str) -> int:
    return int(netaddr.IPAddress(address))


def _snat_rules(router: dict[str, Any], local: model.DesiredRouter
                ) -> tuple[list[Rule], list[TableRoute]]:
    """Per IPv4 subnet of an interface, traffic leaving the router's subnets
    goes to that subnet's SNAT port (upstream: a table and a rule priority
    the interface address's integer value)."""
    if not router.get("gw_port"):
        return [], []
    snat_ip: dict[str, str] = {}
    for port in router.get("_snat_router_interfaces", ()):
        for fixed in port.get("fixed_ips", ()):
            snat_ip[fixed["subnet_id"]] = fixed["ip_address"]
    rules: list[Rule] = []
    routes: list[TableRoute] = []
    for port in router.get("_interfaces", ()):
        device = model.device_name(model.INTERNAL_PREFIX, port["id"])
        subnets = {s["id"]: s for s in port.get("subnets", ())}
        for fixed in port.get("fixed_ips", ()):
            subnet = subnets.get(fixed["subnet_id"])
            target = snat_ip.get(fixed["subnet_id"])
            if subnet is None or target is None or netaddr.IPNetwork(subnet["cidr"]).version != 4:
                continue
            table = _ip_int(fixed["ip_address"])
            rules.append(Rule(str(netaddr.IPNetwork(subnet["cidr"]).cidr), table, table))
            routes.append(TableRoute(table, target, device))
    return rules, routes


def _neighbours(router: dict[str, Any]) -> list[Neighbour]:
    device_of = {fixed["subnet_id"]: model.device_name(model.INTERNAL_PREFIX, port["id"])
                 for port in router.get("_interfaces", ()) for fixed in port.get("fixed_ips", ())}
    out = {Neighbour(device_of[e["subnet_id"]], e["ip_address"], e["mac_address"])
           for e in router.get("_arp_entries", ()) if e.get("subnet_id") in device_of}
    return sorted(out, key=lambda n: (n.device, n.ip_address))


def _fip_namespace(router: dict[str, Any]) -> FipNamespace | None:
    ports = router.get("_floatingip_agent_interfaces") or ()
    if not ports:
        return None
    port = ports[0]
    device = model._device(FIP_GATEWAY_PREFIX, port)
    return FipNamespace(fip_namespace_name(port["network_id"]), port["network_id"], device,
                        tuple(r for r in model._gateway_routes(port, device) if r.version == 4))


def local_floating_ips(router: dict[str, Any], host: str) -> list[dict[str, Any]]:
    """The router's floating IPs whose port is bound to this host."""
    return [f for f in router.get("_floatingips", ()) if f.get("host") == host]


def desired(router: dict[str, Any], host: str, agent_mode: str,
            ipv6_gateway: str = "") -> DvrRouter:
    """This host's share of the distributed ``router``."""
    fips = local_floating_ips(router, host)
    fip_ns = _fip_namespace(router) if fips else None
    view = {**router, "gw_port": None, "_floatingips": [], "_port_forwardings": [],
            "enable_ndp_proxy": False}
    local = model.desired_router(view, ipv6_gateway)
    rules, routes = _snat_rules(router, local)
    link: FipLink | None = None
    if fip_ns is not None:
        rfp, fpr = pair_names(router["id"])
        rfp_ip, fpr_ip = pair_addresses(router["id"])
        floating = model._floating_ips({"_floatingips": fips})
        link = FipLink(rfp, fpr, rfp_ip, fpr_ip, fip_ns,
                       tuple(f.floating_ip_address for f in floating))
        for index, fip in enumerate(floating):
            rules.append(Rule(f"{fip.fixed_ip_address}/32", FIP_RT_TABLE,
                              FIP_RULE_PRIORITY + index))
        routes.append(TableRoute(FIP_RT_TABLE, fpr_ip, rfp))
        # the 1:1 NAT of the floating IPs, on rfp- as the legacy router's on qg-
        local = dataclasses.replace(local, gateway_device=rfp, floating_ips=floating,
                                    enable_snat=False)
    snat = None
    if (agent_mode == DVR_SNAT and router.get("gw_port")
            and router.get("gw_port_host") == host):
        snat = model.desired_router(
            {"id": router["id"], "gw_port": router["gw_port"],
             "_interfaces": router.get("_snat_router_interfaces", ()),
             "enable_snat": router.get("enable_snat"),
             "external_gateway_info": router.get("external_gateway_info")},
            ipv6_gateway, namespace=snat_namespace_name(router["id"]),
            internal_prefix=SNAT_PREFIX)
        snat = dataclasses.replace(snat, ra_interfaces=())
    return DvrRouter(local, Distributed(tuple(_neighbours(router)), tuple(rules),
                                        tuple(routes), link), snat)
