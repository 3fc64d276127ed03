"""IPAM's entry point for ports: a port's address request in, its allocations out.

The ports plugin says what the port asks for (its ``fixed_ips``, its MAC,
whether a router owns it) and which of its network's subnets it may take
automatic addresses from (routed networks narrow them to a segment, a
decision of the plugins); IPAM applies upstream's rules to pick, check and
derive the addresses, and hands back (subnet_id, ip_address) pairs for the
plugin to write with the port.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import netaddr
import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.db import tables as t
from neutrino.ipam import allocator
from neutrino.ipam import subnet_rules as rules

# (subnet_id, ip_address)
Allocation = tuple[str, str]

# Built once: every port create reads its network's subnets (with their
# allocation pools, one row per pool, and service types).
_POOL = t.allocation_pools.c
_KIND = t.subnet_service_types.c
_SUBNETS = (sa.select(t.subnets, _POOL.first_ip, _POOL.last_ip, _KIND.service_type)
            .select_from(t.subnets
                         .outerjoin(t.allocation_pools, _POOL.subnet_id == t.subnets.c.id)
                         .outerjoin(t.subnet_service_types, _KIND.subnet_id == t.subnets.c.id))
            .where(t.subnets.c.network_id == sa.bindparam("network"))
            .order_by(t.subnets.c.created_at, t.subnets.c.id, _POOL.id, _KIND.service_type))
_SUBNET_COLUMNS = tuple(t.subnets.c.keys())
SERVICE_TYPES = "service_types"  # in a subnet's dict: the device owners it serves
DHCP_OWNER = "network:dhcp"


@dataclass
class AddressRequest:
    """What a port asks of IPAM.

    ``fixed_ips`` None asks for one address of each kind from any subnet;
    ``subnets`` are all of the network's (``network_subnets``), ``automatic``
    those automatic addresses may come from; ``keep`` are the addresses the
    port holds already (an update), kept when asked for again.
    """

    network_id: str
    mac: str
    fixed_ips: list[dict[str, Any]] | None
    is_router: bool
    subnets: list[dict[str, Any]]
    automatic: list[dict[str, Any]]
    keep: dict[Allocation, bool] = field(default_factory=dict)


def network_subnets(conn: Connection, network_id: str) -> list[dict[str, Any]]:
    """The network's subnets as dicts of their columns, each with its pools
    (``allocator.POOLS``), in one query."""
    found: dict[str, dict[str, Any]] = {}
    for row in conn.execute(_SUBNETS, {"network": network_id}):
        subnet = found.get(row.id)
        if subnet is None:
            subnet = found[row.id] = dict(zip(_SUBNET_COLUMNS, row))
            subnet[allocator.POOLS] = []
            subnet[SERVICE_TYPES] = []
        pool = (row.first_ip, row.last_ip)
        if row.first_ip is not None and pool not in subnet[allocator.POOLS]:
            subnet[allocator.POOLS].append(pool)
        if row.service_type is not None and row.service_type not in subnet[SERVICE_TYPES]:
            subnet[SERVICE_TYPES].append(row.service_type)
    return list(found.values())


def serving(subnets: list[dict[str, Any]], network_id: str,
            device_owner: str) -> list[dict[str, Any]]:
    """``subnet-service-types``: the subnets a port of ``device_owner`` may
    take addresses from, those naming its owner first (then those serving
    everyone); a DHCP port may use any subnet with DHCP on. None of them
    on a network with subnets is upstream's 409."""
    typed = [s for s in subnets if device_owner in s[SERVICE_TYPES]
             or (device_owner == DHCP_OWNER and s["enable_dhcp"] and s[SERVICE_TYPES])]
    untyped = [s for s in subnets if not s[SERVICE_TYPES]]
    if subnets and not typed and not untyped:
        raise errors.IpAddressGenerationFailureNoMatchingSubnet(
            network_id=network_id, service_type=device_owner)
    return typed + untyped


def allocate(conn: Connection, request: AddressRequest) -> list[Allocation]:
    """The port's addresses, per upstream's rules: those asked for (checked
    free and inside their subnet), else one from the IPv4 and one from the
    stateful IPv6 subnets; and, but for routers, the EUI-64 address of every
    automatic (SLAAC) subnet it may use."""
    out: list[Allocation] = []
    if request.fixed_ips is None:
        v4 = [s for s in request.automatic if s["ip_version"] == 4]
        v6_stateful = [s for s in request.automatic if s["ip_version"] == 6
                       and not rules.is_auto_address_subnet(s)]
        for group in (v4, v6_stateful):
            if group:
                out.append(_from_any(conn, request.network_id, group))
    else:
        by_id = {s["id"]: s for s in request.subnets}
        # An address asked for by value is that request's, whatever its
        # place in the list; a request by subnet alone reuses one of the
        # port's other addresses there, each at most once, so asking twice
        # for the same subnet adds an address rather than repeating one.
        claimed = {item["ip_address"] for item in request.fixed_ips
                   if item.get("ip_address") is not None}
        for item in request.fixed_ips:
            out.append(_one_requested(conn, request, item, by_id, claimed))
    if not request.is_router:
        have = {sid for sid, _ in out}
        for s in request.automatic:
            if rules.is_auto_address_subnet(s) and s["id"] not in have:
                out.append((s["id"], rules.eui64_address(s["cidr"], request.mac)))
    return out


def _from_any(conn: Connection, network_id: str, group: list[dict[str, Any]]) -> Allocation:
    """An address from the first subnet of ``group`` that has one free.

    Upstream tries the subnets in id order (not creation order), so every
    automatic port lands on the same, lowest-id subnet while it lasts; those
    naming the port's service type come first."""
    for subnet in sorted(group, key=lambda s: (not s.get(SERVICE_TYPES), s["id"])):
        ip = allocator.pick_address(conn, subnet)
        if ip is not None:
            return subnet["id"], ip
    raise errors.IpAddressGenerationFailure(net_id=network_id)


def _one_requested(conn: Connection, request: AddressRequest, item: dict[str, Any],
                   by_id: dict[str, dict[str, Any]], claimed: set[str]) -> Allocation:
    network_id, keep = request.network_id, request.keep
    subnet_id, ip = item.get("subnet_id"), item.get("ip_address")
    if subnet_id is not None and subnet_id not in by_id:
        if not _subnet_exists(conn, subnet_id):
            raise errors.SubnetNotFound(subnet_id=subnet_id)
        raise errors.InvalidInput(
            error_message=f"Failed to create port on network {network_id}, because "
                          f"fixed_ips included invalid subnet {subnet_id}")
    if subnet_id is None:
        if ip is None:
            raise errors.InvalidInput(error_message="IP allocation requires subnet_id or ip_address")
        matches = [s for s in by_id.values()
                   if netaddr.IPAddress(ip) in netaddr.IPNetwork(s["cidr"])]
        if not matches:
            raise errors.InvalidIpForNetwork(ip_address=ip)
        subnet_id = matches[0]["id"]
    subnet = by_id[subnet_id]
    auto = rules.is_auto_address_subnet(subnet) and not request.is_router
    if ip is None:
        existing = [k for k in keep if k[0] == subnet_id and k[1] not in claimed]
        if existing:
            claimed.add(existing[0][1])
            return existing[0]
        if auto:
            return subnet_id, rules.eui64_address(subnet["cidr"], request.mac)
        picked = allocator.pick_address(conn, subnet)
        if picked is None:
            raise errors.IpAddressGenerationFailure(net_id=network_id)
        return subnet_id, picked
    if auto and ip != rules.eui64_address(subnet["cidr"], request.mac):
        raise errors.AllocationOnAutoAddressSubnet(ip=ip, subnet_id=subnet_id)
    if (subnet_id, ip) in keep:
        return subnet_id, ip
    allocator.check_requested(conn, subnet, ip)
    return subnet_id, ip


def _subnet_exists(conn: Connection, subnet_id: str) -> bool:
    return conn.execute(sa.select(t.subnets.c.id)
                        .where(t.subnets.c.id == subnet_id)).first() is not None


def readdress(conn: Connection, port_id: str, network_id: str, mac: str) -> None:
    """A new MAC means new EUI-64 addresses on SLAAC/stateless subnets."""
    subnets = {s["id"]: s for s in network_subnets(conn, network_id)}
    allocs = list(conn.execute(sa.select(t.ipallocations)
                               .where(t.ipallocations.c.port_id == port_id)))
    for alloc in allocs:
        subnet = subnets.get(alloc.subnet_id)
        if subnet is None or not rules.is_auto_address_subnet(subnet):
            continue
        conn.execute(sa.update(t.ipallocations).where(
            t.ipallocations.c.port_id == port_id,
            t.ipallocations.c.subnet_id == alloc.subnet_id,
            t.ipallocations.c.ip_address == alloc.ip_address)
            .values(ip_address=rules.eui64_address(subnet["cidr"], mac)))


def taken(conn: Connection, pairs: list[Allocation], explicit: set[str]) -> Allocation | None:
    """After a failed insert: the first address the caller asked for that
    another port holds (None: the failure was a lost race)."""
    for subnet_id, ip in pairs:
        if ip in explicit and allocator.is_taken(conn, subnet_id, ip):
            return subnet_id, ip
    return None


def generate_mac(base_mac: str) -> str:
    """A new port's MAC under ``base_mac``."""
    return allocator.generate_mac(base_mac)
