"""A router's external gateway: its port on an external network, and SNAT.

Setting a gateway creates a port (``network:router_gateway``, no project,
as upstream) with an address from each IP version of the external network
or the requested ``external_fixed_ips``; moving to another network
replaces the port; clearing deletes it. Floating IPs served through the
gateway keep it in place.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import events as ev
from neutrino.plugins import store
from neutrino.plugins.l3 import common as c

if TYPE_CHECKING:
    from oslo_config import cfg

    from neutrino.db.engine import Database
    from neutrino.plugins.core import CorePlugin
    from neutrino.plugins.l3.dvr import Distributed

# The events (``plugins.events``) other plugins hear of a router's gateway:
# (conn, ctx, gateway) before it goes, (conn, ctx, gateway, info) before its
# addresses change; the gateway is its port's id, network and fixed IPs.
ROUTER_GATEWAYS = "router_gateways"


def _not_external(network_id: str) -> errors.BadRequest:
    return c.bad_router(f"Network {network_id} is not an external network")


def validate(conn: Connection, ctx: Context, info: dict[str, Any]) -> None:
    """The requested gateway, before anything changes: a network the caller
    sees (an ``access_as_external`` entry for its project or ``*``)."""
    c.external_network(conn, info["network_id"], _not_external, ctx)
    gateways = {r.gateway_ip for r in conn.execute(
        sa.select(t.subnets.c.gateway_ip).where(t.subnets.c.network_id == info["network_id"]))}
    for fixed in info.get("external_fixed_ips") or []:
        if fixed.get("ip_address") and fixed["ip_address"] in gateways:
            raise c.bad_router(f"External IP {fixed['ip_address']} is the same as the "
                               f"gateway IP")


@dataclass(eq=False)
class Gateway:
    """Gateway changes of routers; a distributed router's SNAT ports follow them."""

    core: CorePlugin
    conf: cfg.ConfigOpts
    db: Database
    distributed: Distributed

    def set(self, ctx: Context, router_id: str, info: dict[str, Any] | None) -> None:
        """Make the router's gateway what ``info`` says (None: no gateway)."""
        with self.db.reader() as conn:
            row = store.get_row(conn, t.routers, router_id, lambda: c.router_not_found(router_id))
            current = self._port(conn, row.gw_port_id)
            if info is not None:
                validate(conn, ctx, info)
        if info is None:
            if current is not None:
                self.detach(router_id, current)
            return
        same_network = current is not None and current["network_id"] == info["network_id"]
        snat = info.get("enable_snat")
        if snat is None:
            snat = row.enable_snat if same_network else self.conf.enable_snat_by_default
        if same_network:
            wanted = info.get("external_fixed_ips")
            if wanted and self._ips_differ(current, wanted):
                with self.db.reader() as conn:
                    self.core.events.notify(ROUTER_GATEWAYS, ev.PRECOMMIT_UPDATE, conn, ctx,
                                            {"router_id": router_id, **current}, info)
                self.core.update(c.internal(), "ports", current["id"], {"fixed_ips": wanted})
            self.core.write(lambda conn: self._set_snat(conn, router_id, snat))
            return
        if current is not None:
            self.detach(router_id, current)
        self.attach(router_id, info, snat)

    def _port(self, conn: Connection, port_id: str | None) -> dict[str, Any] | None:
        if port_id is None:
            return None
        row = conn.execute(sa.select(t.ports.c.id, t.ports.c.network_id)
                           .where(t.ports.c.id == port_id)).first()
        if row is None:
            return None
        ips = c.port_ips(conn, [port_id])[port_id]
        return {"id": row.id, "network_id": row.network_id,
                "fixed_ips": [{"subnet_id": a.subnet_id, "ip_address": a.ip_address}
                              for a in ips]}

    @staticmethod
    def _ips_differ(current: dict[str, Any], wanted: list[dict[str, Any]]) -> bool:
        subnets = {i["subnet_id"] for i in current["fixed_ips"]}
        new_subnets = {i["subnet_id"] for i in wanted if i.get("subnet_id")}
        if new_subnets != subnets:
            return True
        ips = {i["ip_address"] for i in current["fixed_ips"]}
        return {i["ip_address"] for i in wanted if i.get("ip_address")} != ips

    def _set_snat(self, conn: Connection, router_id: str, snat: bool) -> None:
        row = c.lock_router(conn, router_id)
        if row.enable_snat != snat:
            store.bump(conn, t.routers, router_id, {"enable_snat": snat})

    def attach(self, router_id: str, info: dict[str, Any], snat: bool) -> None:
        network_id = info["network_id"]
        with self.db.reader() as conn:
            row = store.get_row(conn, t.routers, router_id, lambda: c.router_not_found(router_id))
            subnets = list(conn.execute(sa.select(t.subnets)
                                        .where(t.subnets.c.network_id == network_id)))
            c.check_new_subnets(conn, row.id, subnets)
        port = self.core.create(c.internal(), "ports", [{
            "project_id": "", "network_id": network_id, "name": "", "admin_state_up": True,
            "device_id": router_id, "device_owner": c.GATEWAY,
            "fixed_ips": info.get("external_fixed_ips") or None,
            "port_security_enabled": False}])[0]

        def link(conn: Connection) -> None:
            row = c.lock_router(conn, router_id)
            if row.gw_port_id is not None:
                raise errors.Conflict(message=f"Router {router_id} already has a gateway")
            conn.execute(sa.insert(t.routerports).values(router_id=router_id,
                                                         port_id=port["id"], port_type=c.GATEWAY))
            store.bump(conn, t.routers, router_id, {"gw_port_id": port["id"],
                                                    "enable_snat": snat})
        try:
            self.core.write(link)
        except Exception:
            self.core.delete(c.internal(), "ports", port["id"])
            raise
        self.distributed.sync(router_id)

    def detach(self, router_id: str, current: dict[str, Any]) -> None:
        """Drop the gateway; refused while floating IPs are served through it."""
        def unlink(conn: Connection) -> None:
            row = c.lock_router(conn, router_id)
            if row.gw_port_id != current["id"]:
                return
            fip = conn.execute(sa.select(t.floatingips.c.id).where(
                t.floatingips.c.router_id == router_id,
                t.floatingips.c.floating_network_id == current["network_id"]).limit(1)).first()
            if fip is not None:
                raise errors.RouterExternalGatewayInUseByFloatingIp(
                    router_id=router_id, net_id=current["network_id"])
            # other service plugins' say (NDP proxies keep the gateway)
            self.core.events.notify(ROUTER_GATEWAYS, ev.PRECOMMIT_DELETE, conn, c.internal(),
                                    {"router_id": router_id, **current})
            conn.execute(sa.delete(t.routerports).where(
                t.routerports.c.port_id == current["id"]))
            store.bump(conn, t.routers, router_id, {"gw_port_id": None})
        self.core.write(unlink)
        self._delete_port(current["id"])
        self.distributed.sync(router_id)

    def _delete_port(self, port_id: str) -> None:
        try:
            self.core.delete(c.internal(), "ports", port_id)
        except errors.PortNotFound:
            pass
