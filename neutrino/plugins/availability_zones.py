"""Availability zone hints of networks and routers, and zone-aware choices.

A network or router asks for zones (``availability_zone_hints``, or
``[DEFAULT] default_availability_zones`` when it names none); every zone it
asks for must be one some agent of its kind reported, else 404
AvailabilityZoneNotFound, as upstream. The hints are kept as upstream keeps
them, a JSON list in a text column, sorted. What it is given is shown as
``availability_zones``: the zones of the agents hosting it.

The choices are pure functions of agents (anything with an
``availability_zone``), so both schedulers share them and tests need no
database.
"""
from __future__ import annotations

import json
from collections import defaultdict
from typing import Any, Iterable, Sequence, TypeVar

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.db import tables as t
from neutrino.plugins.agents import AGENT_TYPE_DHCP, AGENT_TYPE_L3

HINTS = "availability_zone_hints"
ZONES = "availability_zones"
AGENT_TYPES = {"network": AGENT_TYPE_DHCP, "router": AGENT_TYPE_L3}

AgentT = TypeVar("AgentT")


def requested(data: dict[str, Any], defaults: Sequence[str]) -> list[str]:
    """The zones a new resource asks for: its own, else the configured ones."""
    return sorted(data.get(HINTS) or []) or list(defaults)


def to_text(hints: Sequence[str]) -> str | None:
    return json.dumps(list(hints)) if hints else None


def from_text(text: str | None) -> list[str]:
    try:
        found = json.loads(text) if text else []
    except ValueError:
        return []
    return [str(z) for z in found] if isinstance(found, list) else []


def validate(conn: Connection, resource: str, hints: Sequence[str]) -> None:
    """Every hinted zone is one an agent of the resource's kind reported."""
    if not hints:
        return
    a = t.agents.c
    known = set(conn.execute(sa.select(a.availability_zone).distinct().where(
        a.agent_type == AGENT_TYPES[resource], a.availability_zone.in_(list(hints)))).scalars())
    missing = sorted(set(hints) - known)
    if missing:
        raise errors.AvailabilityZoneNotFound(availability_zone=missing[0])


def zones_of(agents: Iterable[Any]) -> list[str]:
    """The distinct zones of the agents hosting a resource, in a stable order."""
    return sorted({a.availability_zone for a in agents if a.availability_zone})


# -- choosing agents ---------------------------------------------------------------------

def in_zones(agents: Iterable[AgentT], hints: Sequence[str]) -> list[AgentT]:
    """The agents a resource with these hints may go to (all without hints)."""
    if not hints:
        return list(agents)
    wanted = set(hints)
    return [a for a in agents if getattr(a, "availability_zone", None) in wanted]


def spread(ordered: Sequence[AgentT], needed: int,
           hosting: Iterable[Any] = ()) -> list[AgentT]:
    """``needed`` agents from ``ordered`` (best first) spread over zones:
    each pick from the zone holding the fewest of the resource's agents
    (``hosting`` counted), the first such zone in ``ordered`` among equals,
    and within a zone its best agent; as upstream's AZ-aware schedulers."""
    by_zone: dict[Any, list[AgentT]] = defaultdict(list)
    for agent in ordered:
        by_zone[getattr(agent, "availability_zone", None)].append(agent)
    count = {zone: 0 for zone in by_zone}  # insertion order: the best agent's zone first
    for agent in hosting:
        zone = getattr(agent, "availability_zone", None)
        if zone in count:
            count[zone] += 1
    chosen: list[AgentT] = []
    while needed > len(chosen) and count:
        zone = min(count, key=lambda z: count[z])
        chosen.append(by_zone[zone].pop(0))
        if by_zone[zone]:
            count[zone] += 1
        else:
            del count[zone]
    return chosen
