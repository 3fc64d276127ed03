"""What a router should look like on the host, computed from the server's router dict.

Pure: the input is one router as the server's ``sync_routers`` returns it
(upstream's shape: ``gw_port``, ``_interfaces``, ``_floatingips``, ``routes``,
``enable_snat``; optionally ``_port_forwardings``, ``_conntrack_helpers``,
``enable_ndp_proxy`` and ``_ndp_proxies``), the output is the desired
namespace, devices with their addresses, routes, NAT rules and conntrack
helpers. Nothing here
touches the host, so every decision is unit-tested by what it returns;
``router.py`` makes the host match it through the adapter in ``linux.py``
(the NAT rules as the nftables table ``nat.py`` renders).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Iterable

import netaddr

NS_PREFIX = "qrouter-"
INTERNAL_PREFIX = "qr-"
GATEWAY_PREFIX = "qg-"
HA_PREFIX = "ha-"
SNAT_PREFIX = "sg-"  # ``dvr``: a distributed router's SNAT ports, in its snat- namespace
FIP_GATEWAY_PREFIX = "fg-"  # ``dvr``: a host's floating IP gateway, in its fip- namespace
DEVICE_PREFIXES = (INTERNAL_PREFIX, GATEWAY_PREFIX, HA_PREFIX, SNAT_PREFIX, FIP_GATEWAY_PREFIX)


def device_name(prefix: str, port_id: str) -> str:
    """Upstream's names: prefix + port id cut to 14 characters (``qr-1234abcd-ef``)."""
    return (prefix + port_id)[:14]


def namespace_name(router_id: str, prefix: str = NS_PREFIX) -> str:
    """``qrouter-<id>``; a distributed router's also ``snat-<id>`` and the
    host's ``fip-<external network id>``."""
    return prefix + router_id


@dataclasses.dataclass(frozen=True)
class Device:
    """One router port as a Linux device in the router's namespace."""

    name: str
    port_id: str
    network_id: str
    mac_address: str
    mtu: int | None
    cidrs: tuple[str, ...]  # "10.0.0.1/24", the addresses the device carries


@dataclasses.dataclass(frozen=True)
class Route:
    destination: str  # "default" or a CIDR
    nexthop: str
    device: str | None = None
    onlink: bool = False

    @property
    def version(self) -> int:
        return netaddr.IPAddress(self.nexthop).version


@dataclasses.dataclass(frozen=True)
class FloatingIp:
    id: str
    floating_ip_address: str
    fixed_ip_address: str
    status: str | None
    qos_policy_id: str | None = None  # ``qos-fip``


@dataclasses.dataclass(frozen=True)
class PortForwarding:
    floating_ip_address: str
    internal_ip_address: str
    protocol: str  # tcp / udp
    external_port: str  # "80" or "8000:8010"
    internal_port: str


@dataclasses.dataclass(frozen=True)
class ConntrackHelper:
    """Traffic to ``protocol``/``port`` goes through the kernel's ``helper``."""

    helper: str  # upstream's name: ftp, tftp, sip, ...
    protocol: str  # tcp / udp
    port: int


@dataclasses.dataclass(frozen=True)
class Ha:
    """An HA router's VRRP side: keepalived owns the VIPs and routes then."""

    vr_id: int
    device: str  # the ``ha-`` device on the HA network
    cidr: str  # this host's address on it (169.254.192.x/18)
    state: str | None  # what the server last heard from this host

    @property
    def primary_vip(self) -> str:
        """The address VRRP itself moves (upstream: 169.254.0.<vr_id>/24)."""
        return f"169.254.0.{self.vr_id}/24"


@dataclasses.dataclass(frozen=True)
class RaSubnet:
    """One IPv6 subnet of an internal port, as router advertisements need it."""

    cidr: str
    ra_mode: str | None  # slaac / dhcpv6-stateful / dhcpv6-stateless / None
    dns_nameservers: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class RaInterface:
    """An internal device with IPv6 subnets: the router advertises itself on it."""

    device: str
    mtu: int
    subnets: tuple[RaSubnet, ...]


@dataclasses.dataclass(frozen=True)
class NdpProxy:
    addresses: tuple[str, ...]
    subnets: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class DesiredRouter:
    router_id: str
    namespace: str
    devices: tuple[Device, ...]
    routes: tuple[Route, ...]
    gateway_device: str | None
    gateway_ips: tuple[str, ...]  # IPv4 addresses of the gateway port (SNAT source)
    snat_sources: tuple[str, ...]  # IPv4 tenant CIDRs SNATed to the gateway IP
    enable_snat: bool
    floating_ips: tuple[FloatingIp, ...]
    port_forwardings: tuple[PortForwarding, ...]
    ha: Ha | None = None
    ra_interfaces: tuple[RaInterface, ...] = ()
    # accept_ra of the gateway device: 2 (learn the IPv6 default route from
    # the external network's routers, forwarding notwithstanding) when
    # neither an external subnet of the port nor the agent's ipv6_gateway
    # gives an IPv6 gateway, else 0
    gateway_accept_ra: int = 0
    gateway_qos_policy_id: str | None = None  # ``qos-gateway-ip``
    conntrack_helpers: tuple[ConntrackHelper, ...] = ()
    # ``l3-ndp-proxy``: the global IPv6 addresses behind the router the gateway
    # device answers neighbour solicitations for, and the internal IPv6
    # subnets inbound traffic reaches only at those addresses; None: the
    # router does not proxy (``enable_ndp_proxy`` off, or no gateway)
    ndp_proxy: NdpProxy | None = None

    @property
    def device_names(self) -> set[str]:
        return {d.name for d in self.devices}

    def addresses(self, device: str) -> set[str]:
        """Every address the device should carry (floating IPs as /32 on qg-)."""
        for dev in self.devices:
            if dev.name == device:
                wanted = set(dev.cidrs)
                if device == self.gateway_device:
                    wanted |= {f"{a}/32" for a in self.nat_addresses()}
                return wanted
        return set()

    def nat_addresses(self) -> list[str]:
        """Floating addresses the gateway device answers for (FIPs and port forwardings)."""
        seen = dict.fromkeys([f.floating_ip_address for f in self.floating_ips]
                             + [p.floating_ip_address for p in self.port_forwardings])
        return list(seen)


def _cidrs(port: dict[str, Any]) -> tuple[str, ...]:
    """``ip/prefixlen`` per fixed IP; the prefix length comes from the fixed IP
    (``prefixlen``, as upstream's sync data) or else the port's subnet CIDR."""
    subnets = {s["id"]: s for s in port.get("subnets", ())}
    out = []
    for fixed in port.get("fixed_ips", ()):
        prefixlen = fixed.get("prefixlen")
        if prefixlen is None:
            subnet = subnets.get(fixed.get("subnet_id"))
            if subnet is None:
                continue
            prefixlen = netaddr.IPNetwork(subnet["cidr"]).prefixlen
        out.append(f"{fixed['ip_address']}/{prefixlen}")
    return tuple(out)


def _device(prefix: str, port: dict[str, Any]) -> Device:
    return Device(name=device_name(prefix, port["id"]), port_id=port["id"],
                  network_id=port["network_id"], mac_address=port["mac_address"],
                  mtu=port.get("mtu"), cidrs=_cidrs(port))


def _gateway_routes(gw: dict[str, Any], device: Device) -> list[Route]:
    """A default route per IP version, via the external subnet's gateway; on-link
    when that gateway lies outside every address of the device (upstream allows it)."""
    nets = [netaddr.IPNetwork(c) for c in device.cidrs]
    routes: list[Route] = []
    versions: set[int] = set()
    on_port = {f.get("subnet_id") for f in gw.get("fixed_ips", ())}
    for subnet in gw.get("subnets", ()):
        gateway = subnet.get("gateway_ip")
        if not gateway or subnet.get("id") not in on_port:
            continue
        address = netaddr.IPAddress(gateway)
        if address.version in versions:
            continue
        versions.add(address.version)
        onlink = not any(address in n for n in nets if n.version == address.version)
        routes.append(Route("default", str(address), device.name, onlink))
    return routes


def _ra_interfaces(ports: Iterable[dict[str, Any]]) -> tuple[RaInterface, ...]:
    """Each internal port with an IPv6 subnet, whatever its ``ipv6_ra_mode``
    (as upstream: a subnet without one adds no prefix, but the router still
    advertises itself on the link)."""
    out = []
    for port in ports:
        subnets = tuple(RaSubnet(s["cidr"], s.get("ipv6_ra_mode"),
                                 tuple(s.get("dns_nameservers") or ()))
                        for s in port.get("subnets", ())
                        if netaddr.IPNetwork(s["cidr"]).version == 6)
        if subnets:
            out.append(RaInterface(device_name(INTERNAL_PREFIX, port["id"]),
                                   int(port.get("mtu") or 0), subnets))
    return tuple(sorted(out, key=lambda i: i.device))


def _ipv6_gateway_route(routes: list[Route], device: Device, ipv6_gateway: str
                        ) -> list[Route]:
    """The agent's ``ipv6_gateway`` (a link-local address) as the IPv6 default
    route, when no external subnet gives one."""
    if not ipv6_gateway or any(r.version == 6 and r.destination == "default" for r in routes):
        return []
    return [Route("default", ipv6_gateway, device.name)]


def _gateway_accept_ra(gw: dict[str, Any] | None, routes: list[Route]) -> int:
    if gw is None:
        return 0
    v6_default = any(r.version == 6 and r.destination == "default" for r in routes)
    return 0 if v6_default else 2


def _extra_routes(routes: Iterable[dict[str, Any]]) -> list[Route]:
    return [Route(str(netaddr.IPNetwork(r["destination"]).cidr), r["nexthop"])
            for r in routes]


def _floating_ips(router: dict[str, Any]) -> tuple[FloatingIp, ...]:
    out = []
    for fip in router.get("_floatingips", ()):
        if not fip.get("fixed_ip_address") or not fip.get("floating_ip_address"):
            continue
        if netaddr.IPAddress(fip["floating_ip_address"]).version != 4:
            continue
        out.append(FloatingIp(fip["id"], fip["floating_ip_address"], fip["fixed_ip_address"],
                              fip.get("status"), fip.get("qos_policy_id")))
    return tuple(sorted(out, key=lambda f: (f.floating_ip_address, f.id)))


def _port_range(pf: dict[str, Any], which: str) -> str:
    ranged = pf.get(f"{which}_port_range")
    if ranged:
        return str(ranged)
    return str(pf[f"{which}_port"])


def _port_forwardings(router: dict[str, Any]) -> tuple[PortForwarding, ...]:
    out = [PortForwarding(pf["floating_ip_address"], pf["internal_ip_address"],
                          pf["protocol"].lower(), _port_range(pf, "external"),
                          _port_range(pf, "internal"))
           for pf in router.get("_port_forwardings", ())]
    return tuple(sorted(out, key=lambda p: (p.floating_ip_address, p.protocol,
                                            p.external_port)))


def _conntrack_helpers(router: dict[str, Any]) -> tuple[ConntrackHelper, ...]:
    """``_conntrack_helpers`` of the sync data (with the conntrack helper plugin),
    ordered so that an unchanged set renders the same table."""
    out = {ConntrackHelper(str(c["helper"]), str(c["protocol"]).lower(), int(c["port"]))
           for c in router.get("_conntrack_helpers", ())}
    return tuple(sorted(out, key=lambda c: (c.protocol, c.port, c.helper)))


def _snat_enabled(router: dict[str, Any]) -> bool:
    """``enable_snat`` of the sync data, else of ``external_gateway_info``; on by default."""
    if router.get("enable_snat") is not None:
        return bool(router["enable_snat"])
    info = router.get("external_gateway_info") or {}
    return bool(info.get("enable_snat", True))


def desired_router(router: dict[str, Any], ipv6_gateway: str = "",
                   namespace: str | None = None,
                   internal_prefix: str = INTERNAL_PREFIX) -> DesiredRouter:
    """The host state for ``router`` (an upstream ``sync_routers`` dict);
    ``ipv6_gateway``: the agent's option of that name; ``namespace`` and
    ``internal_prefix``: a distributed router's snat- part's."""
    interfaces = sorted((_device(internal_prefix, p) for p in router.get("_interfaces", ())),
                        key=lambda d: d.name)
    gw = router.get("gw_port")
    gw_device = _device(GATEWAY_PREFIX, gw) if gw else None
    devices = [*interfaces] + ([gw_device] if gw_device else [])
    routes = _gateway_routes(gw, gw_device) if gw and gw_device else []
    if gw_device is not None:
        routes += _ipv6_gateway_route(routes, gw_device, ipv6_gateway)
    accept_ra = _gateway_accept_ra(gw, routes)
    routes += _extra_routes(router.get("routes") or ())
    gateway_ips = tuple(c.split("/")[0] for c in (gw_device.cidrs if gw_device else ())
                        if netaddr.IPNetwork(c).version == 4)
    sources = sorted({str(netaddr.IPNetwork(c).cidr) for d in interfaces for c in d.cidrs
                      if netaddr.IPNetwork(c).version == 4}, key=netaddr.IPNetwork)
    has_gw = gw_device is not None
    ha = _ha(router)
    if ha is not None:
        ha_port = router["_ha_interface"]
        devices.append(_device(HA_PREFIX, ha_port))
    return DesiredRouter(
        router_id=router["id"], namespace=namespace or namespace_name(router["id"]),
        devices=tuple(devices), routes=tuple(routes),
        gateway_device=gw_device.name if gw_device else None,
        gateway_ips=gateway_ips, snat_sources=tuple(sources),
        enable_snat=_snat_enabled(router) and has_gw,
        floating_ips=_floating_ips(router) if has_gw else (),
        port_forwardings=_port_forwardings(router) if has_gw else (), ha=ha,
        ra_interfaces=_ra_interfaces(router.get("_interfaces", ())),
        gateway_accept_ra=accept_ra,
        gateway_qos_policy_id=(router.get("external_gateway_info") or {}).get("qos_policy_id")
        if has_gw else None,
        conntrack_helpers=_conntrack_helpers(router),
        ndp_proxy=_ndp_proxy(router) if has_gw else None)


def _ndp_proxy(router: dict[str, Any]) -> NdpProxy | None:
    """As upstream's agent extension: proxied addresses only while the
    router's ``enable_ndp_proxy`` holds; every internal IPv6 subnet is
    guarded (the server refuses proxies across address scopes)."""
    if not router.get("enable_ndp_proxy"):
        return None
    addresses = sorted({str(netaddr.IPAddress(p["ip_address"]))
                        for p in router.get("_ndp_proxies", ())}, key=netaddr.IPAddress)
    subnets = sorted({str(netaddr.IPNetwork(s["cidr"]).cidr)
                      for port in router.get("_interfaces", ()) for s in port.get("subnets", ())
                      if netaddr.IPNetwork(s["cidr"]).version == 6}, key=netaddr.IPNetwork)
    return NdpProxy(tuple(addresses), tuple(subnets))


def _ha(router: dict[str, Any]) -> Ha | None:
    """HA settings when the router is HA and this host has its HA port."""
    port = router.get("_ha_interface")
    if not router.get("ha") or not port or not router.get("ha_vr_id"):
        return None
    cidrs = _cidrs(port)
    if not cidrs:
        return None
    return Ha(vr_id=int(router["ha_vr_id"]), device=device_name(HA_PREFIX, port["id"]),
              cidr=cidrs[0], state=router.get("_ha_state"))
