"""``dvr``: distributed routers, as the API and the server keep them.

A distributed router routes east-west on every compute host and keeps
SNAT on a central host. What that means for the API and the database
(upstream's contract; the hosts' side belongs to the agents):

- its interface ports are ``network:router_interface_distributed`` (the
  L2 and L3 agents of each host wire them locally), not
  ``network:router_interface``;
- while it has a gateway, each interface port has a twin
  ``network:router_centralized_snat`` port on the same subnets, owned by
  no project, where the central SNAT namespace sits; the twins come and
  go with the gateway and the interfaces;
- ``distributed`` changes only while the router is administratively down
  (``router-admin-state-down-before-update``), and the change rewrites its
  ports' owners and twins.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino.db import tables as t
from neutrino.plugins import store
from neutrino.plugins.l3 import common as c

if TYPE_CHECKING:
    from neutrino.db.engine import Database
    from neutrino.plugins.core import CorePlugin

INTERFACE_DISTRIBUTED = "network:router_interface_distributed"
CENTRALIZED_SNAT = "network:router_centralized_snat"


HA_REPLICATED = "network:ha_router_replicated_interface"


def interface_owner(distributed: bool, ha: bool = False) -> str:
    """Interface ports' owner: distributed wins over HA (``l3-ha``)."""
    if distributed:
        return INTERFACE_DISTRIBUTED
    return HA_REPLICATED if ha else c.INTERFACE


def check_migration(router: Any, distributed: bool | None) -> bool:
    """Whether ``distributed`` really changes; refused on an active router."""
    if distributed is None or bool(router.distributed) == distributed:
        return False
    if router.admin_state_up:
        raise c.bad_router("Cannot change the 'distributed' attribute of active routers. "
                           "Please set router admin_state_up to False prior to upgrade")
    return True


class Distributed:
    """Keeps a router's interface owners and SNAT twins as ``distributed`` says."""

    def __init__(self, core: CorePlugin, db: Database) -> None:
        self.core = core
        self.db = db

    def migrate(self, router_id: str, distributed: bool | None = None,
                ha: bool | None = None) -> None:
        """Switch the router between centralized and distributed, and/or
        HA and not (``l3-ha``); the interfaces' owners follow."""
        def flip(conn: Connection) -> tuple[str, list[str]]:
            row = c.lock_router(conn, router_id)
            values = {k: v for k, v in (("distributed", distributed), ("ha", ha))
                      if v is not None}
            store.bump(conn, t.routers, router_id, values)
            owner = interface_owner(values.get("distributed", row.distributed),
                                    values.get("ha", row.ha))
            return owner, [p.id for p in c.router_ports(conn, router_id, c.INTERFACE)]
        owner, port_ids = self.core.write(flip)
        for port_id in port_ids:
            self.core.update(c.internal(), "ports", port_id, {"device_owner": owner})
        self.sync(router_id)

    def sync(self, router_id: str) -> None:
        """Create the SNAT twins a distributed router with a gateway needs,
        and remove the ones it no longer needs."""
        with self.db.reader() as conn:
            row = conn.execute(sa.select(t.routers).where(t.routers.c.id == router_id)).first()
            if row is None:
                return
            interfaces = c.router_ports(conn, router_id, c.INTERFACE)
            twins = c.router_ports(conn, router_id, CENTRALIZED_SNAT)
            ips = c.port_ips(conn, [p.id for p in [*interfaces, *twins]])
        wanted: dict[tuple[str, ...], str] = {}
        if row.distributed and row.gw_port_id:
            for port in interfaces:
                subnets = tuple(sorted({a.subnet_id for a in ips.get(port.id, [])}))
                if subnets:
                    wanted[subnets] = port.network_id
        have = {tuple(sorted({a.subnet_id for a in ips.get(p.id, [])})): p.id for p in twins}
        for subnets, port_id in have.items():
            if subnets not in wanted:
                self._drop(router_id, port_id)
        for subnets, network_id in wanted.items():
            if subnets not in have:
                self._add(router_id, network_id, subnets)

    def _add(self, router_id: str, network_id: str, subnets: tuple[str, ...]) -> None:
        port = self.core.create(c.internal(), "ports", [{
            "project_id": "", "network_id": network_id, "name": "", "admin_state_up": True,
            "device_id": router_id, "device_owner": CENTRALIZED_SNAT,
            "fixed_ips": [{"subnet_id": s} for s in subnets],
            "port_security_enabled": False}])[0]

        def link(conn: Connection) -> None:
            c.lock_router(conn, router_id)
            conn.execute(sa.insert(t.routerports).values(
                router_id=router_id, port_id=port["id"], port_type=CENTRALIZED_SNAT))
        try:
            self.core.write(link)
        except Exception:
            self.core.delete(c.internal(), "ports", port["id"])
            raise

    def _drop(self, router_id: str, port_id: str) -> None:
        self.core.write(lambda conn: conn.execute(sa.delete(t.routerports).where(
            t.routerports.c.port_id == port_id, t.routerports.c.router_id == router_id)))
        try:
            self.core.delete(c.internal(), "ports", port_id)
        except Exception:  # noqa: BLE001 - already gone
            pass
