"""The routes a BGP speaker advertises, read from the L3 tables as upstream
computes them (centralized routers; DVR's per-host routes are not served).

- Floating IP host routes (IPv4 speakers advertising floating IP host
  routes): each floating IP of a gateway network bound to the speaker that
  is associated through an enabled, non-distributed router, as
  ``<address>/32`` with the router's IPv4 gateway address as next hop.
- Project networks (speakers advertising tenant networks): the subnets of
  the speaker's IP version behind an enabled router whose gateway is on a
  bound network, when their subnet pool's address scope is one of the
  scopes of that network's subnets; the next hop is the router's gateway
  address of the same IP version.
"""
from __future__ import annotations

from typing import Any, Iterable

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino.db import tables as t
from neutrino.plugins.l3 import common as l3

SNAT = "network:router_centralized_snat"

Route = dict[str, Any]  # {"destination": cidr, "next_hop": address}


def _gateway_ips(conn: Connection, network_ids: list[str], ip_version: int,
                 router_ids: Iterable[str] | None = None) -> dict[str, str]:
    """Router id -> its gateway address of ``ip_version`` on one of the
    networks, for enabled non-distributed routers."""
    r, a, s = t.routers, t.ipallocations, t.subnets
    where = [r.c.admin_state_up.is_(True), r.c.distributed.is_(False),
             a.c.port_id == r.c.gw_port_id, s.c.id == a.c.subnet_id,
             s.c.ip_version == ip_version, s.c.network_id.in_(network_ids)]
    if router_ids is not None:
        where.append(r.c.id.in_(list(router_ids)))
    rows = conn.execute(sa.select(r.c.id, a.c.ip_address).where(*where)
                        .order_by(r.c.id, a.c.ip_address)).all()
    out: dict[str, str] = {}
    for router_id, address in rows:
        out.setdefault(router_id, address)
    return out


def floating_ip_routes(conn: Connection, network_ids: list[str]) -> list[Route]:
    if not network_ids:
        return []
    f = t.floatingips
    fips = conn.execute(sa.select(f.c.floating_ip_address, f.c.router_id).where(
        f.c.floating_network_id.in_(network_ids), f.c.router_id.is_not(None))
        .order_by(f.c.floating_ip_address)).all()
    hops = _gateway_ips(conn, network_ids, 4, {row.router_id for row in fips})
    return [{"destination": f"{row.floating_ip_address}/32", "next_hop": hops[row.router_id]}
            for row in fips if row.router_id in hops]


def _scopes(conn: Connection, network_ids: list[str], ip_version: int) -> list[str]:
    s, p = t.subnets, t.subnetpools
    return sorted({row[0] for row in conn.execute(sa.select(p.c.address_scope_id).where(
        s.c.network_id.in_(network_ids), s.c.ip_version == ip_version,
        p.c.id == s.c.subnetpool_id, p.c.address_scope_id.is_not(None)))})


def tenant_network_routes(conn: Connection, network_ids: list[str],
                          ip_version: int) -> list[Route]:
    if not network_ids:
        return []
    scopes = _scopes(conn, network_ids, ip_version)
    if not scopes:
        return []
    hops = _gateway_ips(conn, network_ids, ip_version)
    if not hops:
        return []
    rp, a, s, p = t.routerports, t.ipallocations, t.subnets, t.subnetpools
    rows = conn.execute(sa.select(rp.c.router_id, s.c.cidr).distinct().where(
        rp.c.router_id.in_(list(hops)), rp.c.port_type.not_in((l3.GATEWAY, SNAT)),
        a.c.port_id == rp.c.port_id, s.c.id == a.c.subnet_id,
        s.c.ip_version == ip_version, s.c.network_id.not_in(network_ids),
        p.c.id == s.c.subnetpool_id, p.c.address_scope_id.in_(scopes))
        .order_by(s.c.cidr, rp.c.router_id)).all()
    return [{"destination": row.cidr, "next_hop": hops[row.router_id]} for row in rows]


def speaker_routes(conn: Connection, speaker: Any) -> list[Route]:
    """Every route ``speaker`` (its row) advertises: floating IPs first."""
    b = t.bgp_speaker_network_bindings
    network_ids = [row[0] for row in conn.execute(sa.select(b.c.network_id).where(
        b.c.bgp_speaker_id == speaker.id).order_by(b.c.network_id))]
    routes: list[Route] = []
    if speaker.advertise_floating_ip_host_routes and speaker.ip_version == 4:
        routes += floating_ip_routes(conn, network_ids)
    if speaker.advertise_tenant_networks:
        routes += tenant_network_routes(conn, network_ids, speaker.ip_version)
    return routes


def speakers_on_networks(conn: Connection, network_ids: Iterable[str]) -> list[str]:
    """The speakers bound to any of the networks."""
    b = t.bgp_speaker_network_bindings
    ids = [n for n in network_ids if n]
    if not ids:
        return []
    return sorted({row[0] for row in conn.execute(sa.select(b.c.bgp_speaker_id).where(
        b.c.network_id.in_(ids)))})
