"""The two VRRP ports of an ACTIVE_STANDBY load balancer.

As Octavia gives each amphora of a pair a port of its own on the VIP
network, each allowed to carry the VIP address, a load balancer with the
``ACTIVE_STANDBY`` topology has two ports (``octavia-lb-vrrp-<lb>-0`` and
``-1``, device ``lb-<lb>``, owner ``Octavia``), each bound to the host of
one of its two agents; keepalived between them puts the VIP address on the
master's. The VIP port itself only holds the address (and any floating IP).
"""
from __future__ import annotations

import dataclasses

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino.db import tables as t

P, PB, IP = t.ports.c, t.ml2_port_bindings.c, t.ipallocations.c
PREFIX = "octavia-lb-vrrp-"
DEVICE_OWNER = "Octavia"


@dataclasses.dataclass(frozen=True)
class VrrpPort:
    index: int  # 0: the first choice for master (higher priority)
    id: str
    host: str
    address: str


def name(lb_id: str, index: int) -> str:
    return f"{PREFIX}{lb_id}-{index}"


def device_id(lb_id: str) -> str:
    return f"lb-{lb_id}"


def ports(conn: Connection, lb_id: str) -> list[VrrpPort]:
    rows = conn.execute(
        sa.select(P.id, P.name, PB.host, IP.ip_address)
        .select_from(t.ports.outerjoin(t.ml2_port_bindings, PB.port_id == P.id)
                     .outerjoin(t.ipallocations, IP.port_id == P.id))
        .where(P.device_id == device_id(lb_id), P.name.like(f"{PREFIX}%"))
        .order_by(P.name))
    out: dict[str, VrrpPort] = {}
    for r in rows:
        if r.id not in out:
            out[r.id] = VrrpPort(int(r.name.rsplit("-", 1)[1]), r.id, r.host or "",
                                 r.ip_address or "")
    return sorted(out.values(), key=lambda p: p.index)


def router_id(lb_id: str) -> int:
    """A VRRP router id (1-255) from the load balancer's id."""
    return int(lb_id.replace("-", "")[:8], 16) % 255 + 1
