"""Pure rules for subnets: gateway, allocation pools, IPv6 modes, routes.

No database here: each function takes values and returns values or raises
the error upstream raises, so every rule is unit-testable in isolation.
"""
from __future__ import annotations

from typing import Any

import netaddr

from neutrino import errors

MAX_DNS_NAMESERVERS = 5
MAX_HOST_ROUTES = 20
AUTO_MODES = ("slaac", "dhcpv6-stateless")


IPV4_MIN_MTU = 68
IPV6_MIN_MTU = 1280


def check_mtu_fits(network_id: str, mtu: int | None, ip_versions: set[int]) -> None:
    """A network's MTU must carry every IP version of its subnets: IPv4
    needs 68 octets, IPv6 1280 (None: not known, nothing to check). Below
    68 upstream names the IPv4 minimum whatever the versions. Checked when
    a subnet comes and when the MTU changes (where 0, which would mean the
    largest, is refused too, as upstream), never when a network without
    subnets is made."""
    if mtu is None or mtu >= IPV6_MIN_MTU or not ip_versions:
        return
    if mtu < IPV4_MIN_MTU:
        raise errors.NetworkMTUSubnetConflict(net_id=network_id, mtu=IPV4_MIN_MTU)
    if 6 in ip_versions:
        raise errors.NetworkMTUSubnetConflict(net_id=network_id, mtu=IPV6_MIN_MTU)


def invalid(msg: str) -> errors.InvalidInput:
    return errors.InvalidInput(error_message=msg)


def check_version(cidr: str, ip_version: int) -> netaddr.IPNetwork:
    net = netaddr.IPNetwork(cidr)
    if net.version != ip_version:
        raise invalid(f"cidr '{cidr}' does not match the ip_version '{ip_version}'")
    if net.version == 6 and net.network == netaddr.IPAddress("::"):
        raise invalid("IPv6 subnet '::' is not supported")
    return net


def check_usable(net: netaddr.IPNetwork, enable_dhcp: bool, ra_mode: str | None,
                 addr_mode: str | None) -> None:
    """What a subnet's CIDR and DHCP settings must satisfy, in upstream's order
    (so that the first failure reported is the one upstream reports)."""
    if enable_dhcp and net.version == 4 and net.network == netaddr.IPAddress("0.0.0.0"):
        raise invalid("First IP '0.0.0.0' of network is not supported if enable_dhcp "
                      "is True.")
    if net.prefixlen == 0 and net.version == 4:
        raise invalid("0.0.0.0/0 is not allowed as a subnet cidr")
    check_dhcp_prefix(net, enable_dhcp)
    if not enable_dhcp and (ra_mode or addr_mode):
        raise invalid("ipv6_ra_mode or ipv6_address_mode cannot be set when enable_dhcp "
                      "is set to False")


def gateway_is_invalid(net: netaddr.IPNetwork, gateway: str) -> bool:
    """An IPv4 network or broadcast address can never be a gateway.

    In IPv6 the network address is the subnet-router anycast address, which
    is exactly what upstream picks as the default gateway.
    """
    ip = netaddr.IPAddress(gateway)
    if ip not in net or net.version == 6:
        return False
    if net.prefixlen >= 31:
        return False
    return ip in (net.network, net.broadcast)


def default_gateway(net: netaddr.IPNetwork) -> str | None:
    """First address of IPv4 subnets; the subnet-router anycast for IPv6."""
    if net.version == 6:
        return str(net.network)
    if net.prefixlen == 32:
        return None
    return str(netaddr.IPAddress(net.first + 1))


def check_dhcp_prefix(net: netaddr.IPNetwork, enable_dhcp: bool) -> None:
    """DHCP needs room for a server address: no /31, /32 (or /128)."""
    too_small = net.prefixlen >= 31 if net.version == 4 else net.prefixlen == 128
    if enable_dhcp and too_small:
        raise invalid("Subnet has a prefix length that is incompatible with DHCP "
                      "service enabled")


def check_gateway(net: netaddr.IPNetwork, gateway: str | None) -> None:
    if gateway is None:
        return
    if netaddr.IPAddress(gateway).version != net.version:
        raise invalid(f"gateway_ip '{gateway}' does not match the ip_version "
                      f"'{net.version}'")
    if gateway_is_invalid(net, gateway):
        raise invalid("Gateway is not valid on subnet")


def _usable_bounds(net: netaddr.IPNetwork) -> tuple[int, int]:
    if net.version == 4 and net.prefixlen < 31:
        return net.first + 1, net.last - 1
    if net.version == 6 and net.prefixlen < 127:
        return net.first + 1, net.last
    return net.first, net.last


def default_pools(net: netaddr.IPNetwork, gateway: str | None) -> list[dict[str, str]]:
    first, last = _usable_bounds(net)
    ranges = netaddr.IPSet(netaddr.IPRange(first, last)) if first <= last else netaddr.IPSet()
    if gateway is not None:
        ranges.remove(netaddr.IPAddress(gateway))
    return [{"start": str(netaddr.IPAddress(r.first, net.version)),
             "end": str(netaddr.IPAddress(r.last, net.version))}
            for r in ranges.iter_ipranges()]


def check_pools(net: netaddr.IPNetwork, pools: list[dict[str, str]],
                gateway: str | None) -> list[dict[str, str]]:
    """Validate explicit pools: order, bounds, overlap and the gateway."""
    first, last = _usable_bounds(net)
    ranges = []
    for pool in pools:
        start, end = netaddr.IPAddress(pool["start"]), netaddr.IPAddress(pool["end"])
        text = f"{pool['start']}-{pool['end']}"
        if start.version != net.version or end.version != net.version:
            raise invalid(f"Allocation pool {text} version does not match "
                          f"the subnet cidr {net}")
        if start > end:
            raise errors.InvalidAllocationPool(
                pool=str({"start": pool["start"], "end": pool["end"]}))
        if int(start) < first or int(end) > last:
            raise errors.OutOfBoundsAllocationPool(pool=text, subnet_cidr=str(net))
        ranges.append(netaddr.IPRange(start, end))
    for i, a in enumerate(ranges):
        for b in ranges[i + 1:]:
            if a.first <= b.last and b.first <= a.last:
                raise errors.OverlappingAllocationPools(
                    pool_1=str(a), pool_2=str(b), subnet_cidr=str(net))
    if gateway is not None:
        gw = netaddr.IPAddress(gateway)
        for r in ranges:
            if gw in r:
                raise errors.GatewayConflictWithAllocationPools(
                    ip_address=gateway, pool=str(r))
    return [{"start": str(netaddr.IPAddress(r.first, net.version)),
             "end": str(netaddr.IPAddress(r.last, net.version))} for r in ranges]


def check_ipv6_modes(ip_version: int, ra_mode: str | None, addr_mode: str | None,
                     net: netaddr.IPNetwork | None) -> None:
    if ip_version == 4:
        if ra_mode is not None:
            raise invalid("ipv6_ra_mode is not valid when ip_version is 4")
        if addr_mode is not None:
            raise invalid("ipv6_address_mode is not valid when ip_version is 4")
        return
    if ra_mode and addr_mode and ra_mode != addr_mode:
        raise invalid(f"ipv6_ra_mode set to '{ra_mode}' with ipv6_address_mode set "
                      f"to '{addr_mode}' is not valid. If both attributes are set, "
                      f"they must be the same value")
    if net is not None and (ra_mode in AUTO_MODES or addr_mode in AUTO_MODES):
        if net.prefixlen != 64:
            raise invalid(f"Invalid CIDR {net} for IPv6 address mode. OpenStack uses "
                          f"the EUI-64 address format, which requires the prefix "
                          f"to be /64")


def check_nameservers(subnet_id: str, servers: list[str], ip_version: int) -> None:
    if len(servers) > MAX_DNS_NAMESERVERS:
        raise errors.DNSNameServersExhausted(subnet_id=subnet_id,
                                             quota=MAX_DNS_NAMESERVERS)


def check_routes(subnet_id: str, routes: list[dict[str, str]], ip_version: int) -> None:
    if len(routes) > MAX_HOST_ROUTES:
        raise errors.HostRoutesExhausted(subnet_id=subnet_id, quota=MAX_HOST_ROUTES)
    for route in routes:
        for key in ("destination", "nexthop"):
            if netaddr.IPNetwork(route[key]).version != ip_version:
                raise invalid(f"{key} '{route[key]}' does not match the "
                              f"ip_version '{ip_version}'")


def is_auto_address_subnet(subnet: dict[str, Any]) -> bool:
    return subnet["ip_version"] == 6 and (
        subnet.get("ipv6_address_mode") in AUTO_MODES
        or (subnet.get("ipv6_address_mode") is None
            and subnet.get("ipv6_ra_mode") in AUTO_MODES))


def eui64_address(cidr: str, mac: str) -> str:
    """The SLAAC address a host with ``mac`` takes on a /64."""
    net = netaddr.IPNetwork(cidr)
    eui = netaddr.EUI(mac)
    return str(eui.ipv6(net.first))
