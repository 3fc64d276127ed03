"""``dvr``: each host's DVR MAC, the source address distributed routers'
packets carry once they leave that host (upstream's ``dvr_host_macs``).

Every host routes for the same router interface MAC; a MAC of the host's
own, made under ``[DEFAULT] dvr_base_mac`` the first time the host's L2
agent asks and kept since, keeps the fabric's switches from seeing one MAC
behind many hosts. Two servers making one host's MAC at once agree: the
host is the key, the loser reads the winner's.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy import Connection
from sqlalchemy import exc as sa_exc

from neutrino import errors
from neutrino.db import tables as t
from neutrino.ipam import request as ipam
from neutrino.rpc import topics
from neutrino.rpc.casts import Casts

if TYPE_CHECKING:
    from neutrino.plugins.core import CorePlugin

M = t.dvr_host_macs.c
ATTEMPTS = 16  # random MACs tried before giving up (upstream's mac_generation_retries)


def as_dict(row: Any) -> dict[str, str]:
    return {"host": row.host, "mac_address": row.mac_address}


def listed(conn: Connection) -> list[dict[str, str]]:
    return [as_dict(r) for r in conn.execute(sa.select(t.dvr_host_macs).order_by(M.host))]


def _announce(core: CorePlugin) -> None:
    """Every L2 agent learns the new MAC (upstream's ``dvr_mac_address_update``)."""
    with core.db.reader() as conn:
        macs = listed(conn)
    Casts(core.conf).cast(topics.DVR_UPDATE, "dvr_mac_address_update", fanout=True,
                          dvr_macs=macs)


def of_host(core: CorePlugin, host: str) -> dict[str, str]:
    """The host's MAC, made when it has none."""
    with core.db.reader() as conn:
        row = conn.execute(sa.select(t.dvr_host_macs).where(M.host == host)).first()
    if row is not None:
        return as_dict(row)
    base = core.conf.dvr_base_mac
    for _ in range(ATTEMPTS):
        mac = ipam.generate_mac(base)

        def make(conn: Connection, mac: str = mac) -> dict[str, str] | None:
            existing = conn.execute(sa.select(t.dvr_host_macs).where(M.host == host)).first()
            if existing is not None:
                return as_dict(existing)
            try:
                with conn.begin_nested():
                    conn.execute(sa.insert(t.dvr_host_macs).values(host=host, mac_address=mac))
            except sa_exc.IntegrityError:
                return None  # that MAC is taken, or the host got one meanwhile
            return {"host": host, "mac_address": mac}
        made = core.write(make)
        if made is not None:
            _announce(core)
            return made
    raise errors.HostMacAddressGenerationFailure(host=host)
