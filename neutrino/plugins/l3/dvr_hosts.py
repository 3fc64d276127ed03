"""``dvr``: where a distributed router lives, as upstream schedules it.

A distributed router is not bound to the compute hosts it routes on: it
is on every host whose L3 agent runs in ``dvr`` or ``dvr_snat`` mode and
that has a port the router serves (an instance, a DHCP port: upstream's
"DVR serviceable" ports) on one of its interfaces' subnets. Only its SNAT
part is bound (``routerl3agentbindings``) to one ``dvr_snat`` agent, and
only while it has a gateway. These are the reads both the notifier and
the agents' ``sync_routers`` use.
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino.db import tables as t
from neutrino.plugins import store
from neutrino.plugins.ml2.dvr_ports import serviceable

DVR, DVR_SNAT = "dvr", "dvr_snat"
DVR_MODES = (DVR, DVR_SNAT)
INTERFACE_DISTRIBUTED = "network:router_interface_distributed"
FIP_AGENT_GATEWAY = "network:floatingip_agent_gateway"

rp, ip, p, b, r = (t.routerports.c, t.ipallocations.c, t.ports.c, t.ml2_port_bindings.c,
                   t.routers.c)


def _router_subnets(conn: Connection, router_ids: Sequence[str] | None) -> dict[str, set[str]]:
    """The subnets of each distributed router's interfaces (all routers: None)."""
    query = (sa.select(rp.router_id, ip.subnet_id).join(t.ipallocations, ip.port_id == rp.port_id)
             .join(t.ports, p.id == rp.port_id).join(t.routers, r.id == rp.router_id)
             .where(p.device_owner == INTERFACE_DISTRIBUTED, r.distributed.is_(True)))
    out: dict[str, set[str]] = {}
    parts: Iterable[Any] = [None] if router_ids is None else store.chunks(list(router_ids))
    for part in parts:
        q = query if part is None else query.where(rp.router_id.in_(part))
        for row in conn.execute(q):
            out.setdefault(row.router_id, set()).add(row.subnet_id)
    return out


def _hosts_of_subnets(conn: Connection, subnet_ids: set[str]) -> dict[str, set[str]]:
    """The hosts of each subnet's serviceable ports."""
    out: dict[str, set[str]] = {}
    for part in store.chunks(sorted(subnet_ids)):
        for row in conn.execute(sa.select(ip.subnet_id, p.device_owner, b.host)
                                .join(t.ports, p.id == ip.port_id)
                                .join(t.ml2_port_bindings, b.port_id == p.id)
                                .where(ip.subnet_id.in_(part), b.host != "")):
            if serviceable(row.device_owner or ""):
                out.setdefault(row.subnet_id, set()).add(row.host)
    return out


def hosts_of(conn: Connection, router_ids: Sequence[str]) -> dict[str, set[str]]:
    """The hosts each distributed router among ``router_ids`` routes on."""
    subnets = _router_subnets(conn, router_ids)
    by_subnet = _hosts_of_subnets(conn, set().union(*subnets.values()) if subnets else set())
    return {rid: set().union(*(by_subnet.get(s, set()) for s in subs))
            for rid, subs in subnets.items()}


def router_ids_on_host(conn: Connection, host: str) -> list[str]:
    """The distributed routers with a serviceable port on ``host``."""
    subnets = _router_subnets(conn, None)
    wanted = set().union(*subnets.values()) if subnets else set()
    if not wanted:
        return []
    here = {row.subnet_id for part in store.chunks(sorted(wanted)) for row in conn.execute(
        sa.select(ip.subnet_id, p.device_owner).join(t.ports, p.id == ip.port_id)
        .join(t.ml2_port_bindings, b.port_id == p.id)
        .where(ip.subnet_id.in_(part), b.host == host)) if serviceable(row.device_owner or "")}
    return sorted(rid for rid, subs in subnets.items() if subs & here)


def routers_of_subnets(conn: Connection, subnet_ids: Sequence[str]) -> list[str]:
    """The distributed routers with an interface on any of ``subnet_ids``."""
    if not subnet_ids:
        return []
    return sorted({row.router_id for row in conn.execute(
        sa.select(rp.router_id).join(t.ipallocations, ip.port_id == rp.port_id)
        .join(t.ports, p.id == rp.port_id).join(t.routers, r.id == rp.router_id)
        .where(ip.subnet_id.in_(list(subnet_ids)), p.device_owner == INTERFACE_DISTRIBUTED,
               r.distributed.is_(True)))})
