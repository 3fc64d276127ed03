"""Where the haproxy provider's load balancers run.

A load balancer runs on the host its VIP port is bound to
(``binding:host_id``): the binding is the record (no table of its own),
and binding the port is also what has the host's L2 agent wire the VIP
device the load-balancer agent plugs. The host is chosen among the
load-balancer agents that are alive and administratively up, the least
loaded first (load balancers bound there), as upstream's LBaaS agent
scheduler could. A load balancer in an availability zone whose profile
names a ``compute_zone`` runs only on agents of that zone (their
``[AGENT] availability_zone``), as Octavia's amphora driver boots amphorae
only in that compute zone.
"""
from __future__ import annotations

import dataclasses
from typing import Iterable

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino.db import tables as t
from neutrino.plugins.ml2 import agents_db

AGENT_TYPE = "Loadbalancerv2 agent"
A, PB = t.agents.c, t.ml2_port_bindings.c


@dataclasses.dataclass(frozen=True)
class LbAgent:
    host: str
    alive: bool
    admin_state_up: bool
    availability_zone: str = ""

    @property
    def usable(self) -> bool:
        return self.alive and self.admin_state_up


def agents(conn: Connection, down_time: int) -> dict[str, LbAgent]:
    now = agents_db.utcnow()
    rows = conn.execute(sa.select(A.host, A.heartbeat_timestamp, A.admin_state_up,
                                  A.availability_zone)
                        .where(A.agent_type == AGENT_TYPE))
    return {r.host: LbAgent(r.host, agents_db.is_alive(r.heartbeat_timestamp, down_time, now),
                            bool(r.admin_state_up), r.availability_zone or "")
            for r in rows}


def in_zone(candidates: dict[str, LbAgent], zone: str | None) -> dict[str, LbAgent]:
    """The agents of ``zone`` (all of them when no zone is asked for)."""
    if not zone:
        return dict(candidates)
    return {h: a for h, a in candidates.items() if a.availability_zone == zone}


def hosts_of(conn: Connection, port_ids: Iterable[str]) -> dict[str, str]:
    """Each VIP port's bound host ("" when unbound)."""
    ids = list(dict.fromkeys(port_ids))
    if not ids:
        return {}
    rows = conn.execute(sa.select(PB.port_id, PB.host).where(PB.port_id.in_(ids)))
    found = {r.port_id: r.host or "" for r in rows}
    return {i: found.get(i, "") for i in ids}


def choose(candidates: dict[str, LbAgent], load: dict[str, int],
           avoid: str | None = None) -> str | None:
    """The least loaded usable agent's host (``avoid`` only when it is the
    only one), None when there is none."""
    usable = sorted(h for h, a in candidates.items() if a.usable)
    if not usable:
        return None
    others = [h for h in usable if h != avoid] or usable
    return min(others, key=lambda h: (load.get(h, 0), h))
