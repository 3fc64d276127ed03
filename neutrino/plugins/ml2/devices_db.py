"""What the L2 agents' device calls read, for a whole list of devices at once.

An agent asks about its devices a hundred at a time (and reports them up a
thousand at a time after a resync): read one by one, that is a dozen
statements and two loads of the port per device, which made the server
the slowest part of an agent's full resync. Each function here reads one
table for every device of a call, in ``store.chunks`` of ids.
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino.db import tables as t
from neutrino.plugins.store import chunks

B, L, P = t.ml2_port_bindings.c, t.ml2_port_binding_levels.c, t.ports.c
_RP, _R = t.routerports.c, t.routers.c
# A device named by a full port id; shorter ones are the prefix of one, as
# Linux bridge agents name their taps.
ID_LENGTH = 36


def port_ids(conn: Connection, devices: Iterable[str]) -> dict[str, str]:
    """Device -> the id of the port it names, for the devices that name one."""
    wanted = list(dict.fromkeys(devices))
    full = [d for d in wanted if len(d) >= ID_LENGTH]
    found: dict[str, str] = {}
    for part in chunks(full):
        found.update((i, i) for i in conn.execute(sa.select(P.id).where(P.id.in_(part))).scalars())
    prefixes = [d for d in wanted if len(d) < ID_LENGTH]
    for part in chunks(prefixes):
        matches = list(conn.execute(sa.select(P.id).where(
            sa.or_(*[P.id.startswith(d, autoescape=True) for d in part]))).scalars())
        for length in {len(d) for d in part}:
            by_prefix = {pid[:length]: pid for pid in sorted(matches, reverse=True)}
            found.update((d, by_prefix[d]) for d in part if len(d) == length and d in by_prefix)
    return found


def bindings(conn: Connection, ids: Sequence[str]) -> dict[str, Any]:
    """Each port's binding row (ports without one are left out)."""
    return {row.port_id: row for part in chunks(ids) for row in conn.execute(
        sa.select(t.ml2_port_bindings).where(B.port_id.in_(part)))}


def bound_to(conn: Connection, host: str, vnic_type: str) -> list[str]:
    """The ids of the ports bound to ``host`` with ``vnic_type``, in id order."""
    return list(conn.execute(sa.select(B.port_id).where(B.host == host,
                                                        B.vnic_type == vnic_type)
                             .order_by(B.port_id)).scalars())


def router_ports_on_many_hosts(conn: Connection, ids: Sequence[str]) -> set[str]:
    """The gateway and interface ports of HA routers among ``ids`` (every
    host of the router wires them; keepalived decides where they carry
    addresses) and the interfaces of distributed routers (``dvr``: every
    host the router routes on wires them), so they have details for any host."""
    ha = {pid for part in chunks(ids) for pid in conn.execute(
        sa.select(_RP.port_id).join(t.routers, _R.id == _RP.router_id)
        .where(_RP.port_id.in_(part), _R.ha.is_(True),
               _RP.port_type != "network:router_ha_interface")).scalars()}
    # ``dvr``: a distributed router's interfaces are wired on every host it routes on
    return ha | {pid for part in chunks(ids) for pid in conn.execute(
        sa.select(P.id).where(
            P.id.in_(part), P.device_owner == "network:router_interface_distributed")).scalars()}


def bound_segments(conn: Connection, ids: Sequence[str]) -> dict[str, str | None]:
    """Each bound port's segment id: its binding's last (deepest) level's."""
    deepest: dict[str, tuple[int, str | None]] = {}
    for part in chunks(ids):
        # The active binding's levels: an inactive binding (``binding-extended``)
        # keeps its own under its host.
        for row in conn.execute(sa.select(L.port_id, L.level, L.segment_id)
                                .join(t.ml2_port_bindings,
                                      (B.port_id == L.port_id) & (B.host == L.host))
                                .where(L.port_id.in_(part))):
            if row.port_id not in deepest or row.level > deepest[row.port_id][0]:
                deepest[row.port_id] = (row.level, row.segment_id)
    return {pid: segment for pid, (_, segment) in deepest.items()}


def network_mtus(conn: Connection, network_ids: Iterable[str]) -> dict[str, int | None]:
    wanted = sorted(set(network_ids))
    return {row.id: row.mtu for part in chunks(wanted) for row in conn.execute(
        sa.select(t.networks.c.id, t.networks.c.mtu).where(t.networks.c.id.in_(part)))}


def statuses(conn: Connection, ids: Sequence[str]) -> dict[str, str]:
    return {row.id: row.status for part in chunks(ids) for row in conn.execute(
        sa.select(P.id, P.status).where(P.id.in_(part)))}

