"""Where a router routes, for ``trace --live``: which host's L3 agent to ask.

The API's ports do not say it: an HA router has a port on every agent it
is scheduled to, and only one of them routes (the one keepalived made
master, whose state the agent reported); a distributed router's
interfaces are bound to no host at all. So the trace plugin reads the
scheduler's bindings (``routerl3agentbindings``) and, for HA routers, the
state each agent last reported (``ha_router_agent_port_bindings``).
``central`` names the host of a router's centralized part (a legacy
router, an HA router's active copy, a distributed router's SNAT part), or
why no host can be asked: asking a standby would answer for a namespace
that does not route.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import sqlalchemy as sa

from neutrino.db import tables as t
from neutrino.plugins import store

ACTIVE = "active"


@dataclass(frozen=True)
class Binding:
    """One L3 agent the router is scheduled to; ``state``: an HA router's
    state as that agent last reported it (None for other routers)."""
    host: str
    state: str | None = None


@dataclass(frozen=True)
class Placement:
    router_id: str
    distributed: bool = False
    ha: bool = False
    bindings: tuple[Binding, ...] = ()  # in the scheduler's order

    def central(self) -> tuple[str, str]:
        """``(host, "")``: where the centralized part routes; ``("", why)``
        when no host routes it."""
        if not self.bindings:
            return "", f"router {self.router_id} is scheduled to no L3 agent"
        if not self.ha:
            return self.bindings[0].host, ""
        active = [b.host for b in self.bindings if b.state == ACTIVE]
        if len(active) == 1:
            return active[0], ""
        states = ", ".join(f"{b.host}: {b.state or 'unknown'}" for b in self.bindings)
        if not active:
            return "", (f"no L3 agent of HA router {self.router_id} is active ({states}): "
                        "a standby does not route, so none was asked")
        return "", (f"HA router {self.router_id} is active on several hosts ({states}): "
                    "which one routes depends on the switches, so none was asked")


def read(conn: Any, router_ids: Sequence[str]) -> dict[str, Placement]:
    """The placement of each router of ``router_ids`` that exists."""
    r, b, a = t.routers.c, t.routerl3agentbindings.c, t.agents.c
    ha = t.ha_router_agent_port_bindings.c
    kinds: dict[str, tuple[bool, bool]] = {}
    hosts: dict[str, list[tuple[str, str]]] = {}
    states: dict[tuple[str, str], str] = {}
    for part in store.chunks(sorted(set(router_ids))):
        for row in conn.execute(sa.select(r.id, r.distributed, r.ha).where(r.id.in_(part))):
            kinds[row.id] = (bool(row.distributed), bool(row.ha))
        for row in conn.execute(sa.select(b.router_id, b.l3_agent_id, a.host)
                                .join(t.agents, a.id == b.l3_agent_id)
                                .where(b.router_id.in_(part)).order_by(b.binding_index)):
            hosts.setdefault(row.router_id, []).append((row.l3_agent_id, row.host))
        for row in conn.execute(sa.select(ha.router_id, ha.l3_agent_id, ha.state)
                                .where(ha.router_id.in_(part), ha.l3_agent_id.is_not(None))):
            states[(row.router_id, row.l3_agent_id)] = row.state
    found = {}
    for router_id, (distributed, is_ha) in kinds.items():
        bindings = tuple(Binding(host, states.get((router_id, agent)) if is_ha else None)
                         for agent, host in hosts.get(router_id, ()))
        found[router_id] = Placement(router_id, distributed, is_ha, bindings)
    return found
