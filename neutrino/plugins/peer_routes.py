"""``segments-peer-subnet-host-routes``: on a routed network, each segment's
subnets carry host routes to the other segments' subnets.

A host on one segment reaches the others only through its own subnet's
gateway (they share no L2), so each subnet of a segment gets, through its
gateway, a route to every subnet of the same IP version on another segment,
unless a route the owner gave already covers it. The routes follow the
network's subnets: added when a segment's subnet is created, moved when a
gateway changes, dropped when the subnet they lead to is deleted. The other
subnets whose routes change this way keep their revision, as upstream's do.
"""
from __future__ import annotations

from typing import Any

import netaddr
import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino.db import tables as t

Route = dict[str, str]

_SUBNETS = sa.select(t.subnets.c.id, t.subnets.c.cidr, t.subnets.c.ip_version,
                     t.subnets.c.segment_id, t.subnets.c.gateway_ip).where(
    t.subnets.c.network_id == sa.bindparam("network"))


def network_subnets(conn: Connection, network_id: str) -> list[Any]:
    return conn.execute(_SUBNETS, {"network": network_id}).all()


def calculate(subnets: list[Any], ip_version: int, segment_id: str | None,
              host_routes: list[Route], gateway_ip: str | None,
              subnet_id: str | None = None, old_gateway_ip: str | None = None,
              deleted_cidr: str | None = None) -> list[Route]:
    """``host_routes`` with the routes to the peer subnets among ``subnets``
    added (and those through ``old_gateway_ip``, or to ``deleted_cidr``,
    taken away), as upstream computes them."""
    routes = [dict(r) for r in host_routes]
    covered = [netaddr.IPNetwork(r["destination"]) for r in routes]
    if deleted_cidr:
        gone = {"destination": deleted_cidr, "nexthop": gateway_ip}
        if gone in routes:
            routes.remove(gone)
    for peer in subnets:
        if (peer.id == subnet_id or peer.segment_id == segment_id
                or peer.ip_version != ip_version):
            continue
        net = netaddr.IPNetwork(peer.cidr)
        if old_gateway_ip:
            old = {"destination": str(peer.cidr), "nexthop": old_gateway_ip}
            if old in routes:
                routes.remove(old)
                covered.remove(net)
        if gateway_ip and not any(net in other for other in covered):
            routes.append({"destination": peer.cidr, "nexthop": gateway_ip})
    return routes


def differ(a: list[Route], b: list[Route]) -> bool:
    return {(r["destination"], r["nexthop"]) for r in a} != \
        {(r["destination"], r["nexthop"]) for r in b}


def refresh(conn: Connection, network_id: str, deleted_cidr: str | None = None) -> None:
    """Every subnet of the network with its routes recomputed, written where
    they changed."""
    subnets = network_subnets(conn, network_id)
    if not subnets:
        return
    r = t.subnet_routes
    held: dict[str, list[Route]] = {s.id: [] for s in subnets}
    for row in conn.execute(sa.select(r.c.subnet_id, r.c.destination, r.c.nexthop)
                            .where(r.c.subnet_id.in_(list(held)))):
        held[row.subnet_id].append({"destination": row.destination, "nexthop": row.nexthop})
    for subnet in subnets:
        now = held[subnet.id]
        wanted = calculate(subnets, subnet.ip_version, subnet.segment_id, now,
                           subnet.gateway_ip, subnet_id=subnet.id, deleted_cidr=deleted_cidr)
        if differ(now, wanted):
            conn.execute(sa.delete(r).where(r.c.subnet_id == subnet.id))
            unique = {(x["destination"], x["nexthop"]): x for x in wanted}
            if unique:
                conn.execute(sa.insert(r), [{"subnet_id": subnet.id, **route}
                                            for route in unique.values()])
