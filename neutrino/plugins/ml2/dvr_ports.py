"""``dvr``: the ports a distributed router is on a host for (upstream's
"DVR serviceable" ports: instances, DHCP ports, load balancers, trunk
subports): where such a port is bound, the router routes."""
from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino.db import tables as t


def ports_on_host(conn: Connection, host: str, subnet_ids: list[str]) -> list[str]:
    """Ids of the serviceable ports of ``subnet_ids`` bound to ``host``."""
    p, a, b = t.ports.c, t.ipallocations.c, t.ml2_port_bindings.c
    rows = conn.execute(sa.select(p.id, p.device_owner).distinct()
                        .join(t.ipallocations, a.port_id == p.id)
                        .join(t.ml2_port_bindings, b.port_id == p.id)
                        .where(a.subnet_id.in_(subnet_ids), b.host == host))
    return sorted(r.id for r in rows if serviceable(r.device_owner or ""))


def serviceable(device_owner: str) -> bool:
    """Ports a distributed router is hosted for (upstream's DVR serviceable ports)."""
    return device_owner.startswith("compute:") or device_owner in (
        "network:dhcp", "neutron:LOADBALANCERV2", "trunk:subport")
