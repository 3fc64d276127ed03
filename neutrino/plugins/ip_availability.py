"""``network-ip-availability``: how many addresses each network and subnet has, and uses.

Upstream's counting, kept exactly: a subnet's ``total_ips`` is the size of
its allocation pools (the whole CIDR when it has none), ``used_ips`` the
number of allocated addresses. The details (``network-ip-availability-
details``) add the CIDR's size (IPv4 without network and broadcast) and
the allocations inside the pools. Sizes are Python ints from address
arithmetic, exact for an IPv6 /64 and never enumerated.

A page of networks costs a fixed number of queries whatever its length:
networks, their subnets, their pools, the allocation counts (``GROUP
BY``), and the allocated addresses only when the details are asked for.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import netaddr
import sqlalchemy as sa
from oslo_policy import policy
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import store
from neutrino.plugins.base import ApiExtension, ServicePlugin
from neutrino.resources import ip_availability as res

DETAILS = "ip_availability_details"
n = t.networks.c
s = t.subnets.c
a = t.ipallocations.c


def _network_clauses(filters: dict[str, list[Any]]) -> list[Any]:
    out = []
    for key, column in (("network_id", n.id), ("network_name", n.name),
                        ("project_id", n.project_id), ("tenant_id", n.project_id)):
        if filters.get(key):
            out.append(column.in_(filters[key]))
    if "ip_version" in filters:
        out.append(n.id.in_(sa.select(s.network_id).where(
            s.ip_version.in_(res.version_filter(filters["ip_version"])))))
    return out


def _pool_size(pools: list[Any]) -> int:
    return sum(netaddr.IPRange(p.first_ip, p.last_ip).size for p in pools)


def _in_pools(address: str, pools: list[tuple[int, int]]) -> bool:
    value = int(netaddr.IPAddress(address))
    return any(first <= value <= last for first, last in pools)


class IpAvailabilities:
    """The ``network_ip_availabilities`` collection (read-only)."""

    def __init__(self, db: Any) -> None:
        self.db = db

    def list(self, ctx: Context, plural: str,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        # ``network_id`` is the networks' ``id`` column for sorting and markers.
        paging = dataclasses.replace(query, sorts=[
            ("id" if key == "network_id" else key, asc) for key, asc in query.sorts])
        details = not query.fields or DETAILS in query.fields
        with self.db.reader() as conn:
            rows, more = store.paged_select(conn, t.networks, _network_clauses(query.filters),
                                            paging)
            versions = (res.version_filter(query.filters["ip_version"])
                        if "ip_version" in query.filters else None)
            return self._availabilities(conn, rows, versions, details), more

    def get(self, ctx: Context, plural: str, rid: str) -> dict[str, Any]:
        with self.db.reader() as conn:
            row = store.get_row(conn, t.networks, rid,
                                lambda: errors.NetworkNotFound(net_id=rid))
            return self._availabilities(conn, [row], None, True)[0]

    def _availabilities(self, conn: Connection, networks: list[Any], versions: list[int] | None,
                        details: bool) -> list[dict[str, Any]]:
        ids = [r.id for r in networks]
        subnets = self._subnets(conn, ids, versions)
        subnet_ids = [sub.id for rows in subnets.values() for sub in rows]
        pools = store.children(conn, t.allocation_pools, "subnet_id", subnet_ids,
                               (t.allocation_pools.c.id,))
        used = self._used(conn, subnet_ids)
        in_pools = self._used_in_pools(conn, subnet_ids, pools) if details else {}
        out = []
        for net in networks:
            entries = [self._subnet_entry(sub, pools[sub.id], used.get(sub.id, 0),
                                          in_pools.get(sub.id, 0), details)
                       for sub in subnets.get(net.id, [])]
            item: dict[str, Any] = {
                "network_id": net.id, "network_name": net.name, "project_id": net.project_id,
                "tenant_id": net.project_id, "subnet_ip_availability": entries,
                "used_ips": sum(e["used_ips"] for e in entries),
                "total_ips": sum(e["total_ips"] for e in entries)}
            if details:
                item[DETAILS] = {key: sum(e[DETAILS][key] for e in entries) for key in (
                    "total_ips_in_subnet", "total_ips_in_allocation_pool",
                    "used_ips_in_subnet", "used_ips_in_allocation_pool")}
            out.append(item)
        return out

    def _subnets(self, conn: Connection, network_ids: list[str],
                 versions: list[int] | None) -> dict[str, list[Any]]:
        out: dict[str, list[Any]] = {}
        for part in store.chunks(network_ids):
            stmt = (sa.select(s.id, s.network_id, s.name, s.cidr, s.ip_version)
                    .where(s.network_id.in_(part)).order_by(s.created_at, s.id))
            if versions is not None:
                stmt = stmt.where(s.ip_version.in_(versions))
            for row in conn.execute(stmt):
                out.setdefault(row.network_id, []).append(row)
        return out

    def _used(self, conn: Connection, subnet_ids: list[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for part in store.chunks(subnet_ids):
            out.update((row.subnet_id, row.used) for row in conn.execute(
                sa.select(a.subnet_id, sa.func.count().label("used"))
                .where(a.subnet_id.in_(part)).group_by(a.subnet_id)))
        return out

    def _used_in_pools(self, conn: Connection, subnet_ids: list[str],
                       pools: dict[str, list[Any]]) -> dict[str, int]:
        bounds = {sid: [(int(netaddr.IPAddress(p.first_ip)), int(netaddr.IPAddress(p.last_ip)))
                        for p in rows] for sid, rows in pools.items()}
        out: dict[str, int] = {}
        for part in store.chunks([sid for sid in subnet_ids if bounds.get(sid)]):
            for row in conn.execute(sa.select(a.subnet_id, a.ip_address)
                                    .where(a.subnet_id.in_(part))):
                if _in_pools(row.ip_address, bounds[row.subnet_id]):
                    out[row.subnet_id] = out.get(row.subnet_id, 0) + 1
        return out

    def _subnet_entry(self, sub: Any, pools: list[Any], used: int, used_in_pools: int,
                      details: bool) -> dict[str, Any]:
        cidr_size = netaddr.IPNetwork(sub.cidr).size
        pooled = _pool_size(pools)
        entry: dict[str, Any] = {
            "subnet_id": sub.id, "ip_version": sub.ip_version, "cidr": sub.cidr,
            "subnet_name": sub.name, "used_ips": used,
            "total_ips": pooled if pools else cidr_size}
        if details:
            entry[DETAILS] = {
                "total_ips_in_subnet": cidr_size - 2 if sub.ip_version == 4 else cidr_size,
                "total_ips_in_allocation_pool": pooled,
                "used_ips_in_subnet": used,
                "used_ips_in_allocation_pool": used_in_pools}
        return entry

    def create(self, *args: Any, **kwargs: Any) -> Any:
        raise errors.MethodNotAllowed()

    update = delete = create


class NetworkIpAvailabilityPlugin(ServicePlugin):
    """Provides IP availability data for each network and subnet."""

    service_type = "network-ip-availability"
    supported_extension_aliases = (res.AVAILABILITY.alias, res.DETAILS.alias)

    def __init__(self, conf: Any, db: Any) -> None:
        super().__init__(conf, db)
        self.availabilities = IpAvailabilities(db)

    def collections(self) -> dict[str, Any]:
        return {"network_ip_availabilities": self.availabilities}

    def extensions(self) -> list[ApiExtension]:
        rules = [policy.RuleDefault("get_network_ip_availability",
                                    "(rule:admin_only) or (rule:service_api)",
                                    scope_types=["project"])]
        return [ApiExtension(descriptor=res.AVAILABILITY,
                             resources=[res.NETWORK_IP_AVAILABILITY], policies=rules),
                ApiExtension(descriptor=res.DETAILS)]
