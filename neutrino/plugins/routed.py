"""Routed networks: subnets bound to segments, and the subnets a port may use.

A network is *routed* when its subnets are bound to its segments
(``segment_id``, extension ``segment``): each segment is its own L2 domain
with its own subnets, and a port gets addresses from the subnets of the
segment its host reaches. A host reaches a segment when an agent on it maps
the segment's physical network (``bridge_mappings``, ``interface_mappings``
or ``device_mappings`` in its reported configuration), as upstream derives
its segment-host mappings. Subnets without a segment are reachable from
everywhere; a network's subnets are either all bound or none.

Without a host a port on a routed network cannot know its segment: its
addresses are *deferred* (``ip_allocation: deferred``) until it gets one.
"""
from __future__ import annotations

import json
from typing import Any, Iterable, Sequence

import netaddr
import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.db import tables as t

HOST = "binding:host_id"
UNCHANGED: Any = object()
_MAPPINGS = ("bridge_mappings", "interface_mappings", "device_mappings")

# ``ip_allocation`` values (extension ``ip_allocation``).
IMMEDIATE, DEFERRED, NONE = "immediate", "deferred", "none"


# -- subnets and segments ------------------------------------------------------------

def segment_row(conn: Connection, segment_id: str) -> Any:
    row = conn.execute(sa.select(t.network_segments)
                       .where(t.network_segments.c.id == segment_id)).first()
    if row is None:
        raise errors.SegmentNotFound(segment_id=segment_id)
    return row


def check_subnet_segment(conn: Connection, network_id: str, segment_id: str | None,
                         old_segment_id: Any = UNCHANGED,
                         siblings: Sequence[Any] | None = None) -> None:
    """Upstream's rules for a subnet's segment, on create (after the subnet's
    row is written) or on update (``old_segment_id`` given, before it is).

    All subnets of a network are bound or none is; a bound subnet keeps its
    segment; an unbound subnet may be bound only when it is the network's
    only subnet and the network has a single segment; the segment must be a
    static segment of the subnet's network.

    ``siblings``: on create, the network's other subnets (``segment_id``)
    as read before the new one was written, when the caller has them.
    """
    if siblings is not None:
        ids = [*(r.segment_id for r in siblings), segment_id]
    else:
        ids = [r.segment_id for r in conn.execute(
            sa.select(t.subnets.c.segment_id).where(t.subnets.c.network_id == network_id))]
    associated = set(ids)
    if None in associated and len(associated) > 1:
        raise errors.SubnetsNotAllAssociatedWithSegments(network_id=network_id)
    if old_segment_id is not UNCHANGED and old_segment_id != segment_id:
        if len(ids) > 1:
            raise errors.SubnetsNotAllAssociatedWithSegments(network_id=network_id)
        if None not in associated and segment_id not in associated:
            raise errors.SubnetSegmentAssociationChangeNotAllowed()
        count = conn.execute(sa.select(sa.func.count()).select_from(t.network_segments)
                             .where(t.network_segments.c.network_id == network_id)).scalar()
        if (count or 0) > 1:
            raise errors.NoUpdateSubnetWhenMultipleSegmentsOnNetwork(network_id=network_id)
    if segment_id:
        segment = segment_row(conn, segment_id)
        if segment.network_id != network_id:
            raise errors.NetworkIdsDontMatch(subnet_network=network_id, segment_id=segment_id)
        if segment.is_dynamic:
            raise errors.SubnetCantAssociateToDynamicSegment()


def is_routed(subnets: Iterable[dict[str, Any]]) -> bool:
    return any(s.get("segment_id") for s in subnets)


# -- hosts ---------------------------------------------------------------------------

def host_physnets(conn: Connection, host: str) -> set[str]:
    """Physical networks the agents on ``host`` have mapped (dead ones too:
    a mapping, like upstream's, outlives a missed heartbeat)."""
    out: set[str] = set()
    for row in conn.execute(sa.select(t.agents.c.configurations)
                            .where(t.agents.c.host == host)):
        try:
            config = json.loads(row.configurations or "{}")
        except ValueError:
            continue
        for key in _MAPPINGS:
            mapping = config.get(key) if isinstance(config, dict) else None
            if isinstance(mapping, dict):
                out.update(str(k) for k in mapping)
    return out


def host_segment_ids(conn: Connection, network_id: str, host: str) -> set[str]:
    physnets = host_physnets(conn, host)
    if not physnets:
        return set()
    seg = t.network_segments
    return {r.id for r in conn.execute(sa.select(seg.c.id).where(
        seg.c.network_id == network_id, seg.c.physical_network.in_(sorted(physnets))))}


def bound_host(conn: Connection, port_id: str) -> str:
    host = conn.execute(sa.select(t.ml2_port_bindings.c.host)
                        .where(t.ml2_port_bindings.c.port_id == port_id)).scalar()
    return host or ""


# -- ports ---------------------------------------------------------------------------

def usable_subnets(conn: Connection, network_id: str, subnets: list[dict[str, Any]],
                   host: str) -> list[dict[str, Any]] | None:
    """The subnets an automatically addressed port may use; None when its
    addresses must wait for a host (deferred)."""
    if not is_routed(subnets):
        return subnets
    if not host:
        return None
    reachable = host_segment_ids(conn, network_id, host)
    usable = [s for s in subnets if s.get("segment_id") in reachable]
    if not usable:
        raise errors.HostNotConnectedToAnySegment(host=host, network_id=network_id)
    return usable


def requested_segments(subnets: list[dict[str, Any]],
                       requested: list[dict[str, Any]]) -> set[str | None]:
    """Segments of the subnets the requested fixed IPs name; addresses from
    two segments at once are refused (a port lives in one segment)."""
    found: set[str | None] = set()
    for item in requested:
        subnet = None
        if item.get("subnet_id"):
            subnet = next((s for s in subnets if s["id"] == item["subnet_id"]), None)
        elif item.get("ip_address"):
            ip = netaddr.IPAddress(item["ip_address"])
            subnet = next((s for s in subnets if ip in netaddr.IPNetwork(s["cidr"])), None)
        if subnet is None:
            continue  # reported later, with the error upstream gives
        found.add(subnet.get("segment_id"))
        if len(found) > 1:
            raise errors.FixedIpsSubnetsNotOnSameSegment()
    return found


def check_host_fits(conn: Connection, port_id: str, network_id: str, host: str,
                    subnet_ids: set[str]) -> None:
    """A bound port moving to ``host`` must keep addresses that work there."""
    rows = list(conn.execute(sa.select(t.subnets.c.id, t.subnets.c.segment_id)
                             .where(t.subnets.c.id.in_(sorted(subnet_ids)))))
    if not any(r.segment_id for r in rows):
        return
    reachable = host_segment_ids(conn, network_id, host)
    if any(r.segment_id not in reachable for r in rows):
        raise errors.HostNotCompatibleWithFixedIps(host=host, port_id=port_id)
