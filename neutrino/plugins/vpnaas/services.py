"""``vpnservices``: IPsec on a router's gateway.

The router must be the caller's (or the admin's pick) and have a gateway;
the optional (legacy) ``subnet_id`` must be on one of its interfaces. The
tunnel's local addresses (``external_v4_ip``/``external_v6_ip``) are the
gateway's first address of each version when the service is made, as
upstream's IPsec driver records them. A service is ``PENDING_CREATE`` until
the L3 agent hosting its router reports it; while pending it cannot be
updated (upstream's rule). It cannot go while connections use it.
"""
from __future__ import annotations

from typing import Any, Sequence

import netaddr
import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins.table_collection import TableCollection
from neutrino.plugins.vpnaas import exceptions as exc
from neutrino.plugins.vpnaas import rows

S, C = t.vpnservices, t.ipsec_site_connections
PENDING = ("PENDING_CREATE", "PENDING_UPDATE", "PENDING_DELETE")
UPDATABLE = ("name", "description", "admin_state_up")


def _not_found(rid: str) -> Any:
    return lambda: exc.VPNServiceNotFound(vpnservice_id=rid)


def to_dict(row: Any) -> dict[str, Any]:
    return {**rows.named(row), "router_id": row.router_id, "subnet_id": row.subnet_id,
            "flavor_id": row.flavor_id, "admin_state_up": row.admin_state_up,
            "status": row.status, "external_v4_ip": row.external_v4_ip,
            "external_v6_ip": row.external_v6_ip}


def refuse_pending(rid: str, status: str) -> None:
    if status in PENDING:
        raise exc.VPNStateInvalidToUpdate(id=rid, state=status)


def gateway_ips(conn: Connection, router_id: str) -> list[str]:
    """The router's gateway addresses, in allocation order."""
    r, a = t.routers.c, t.ipallocations.c
    return [row.ip_address for row in conn.execute(
        sa.select(a.ip_address).join(t.routers, r.gw_port_id == a.port_id).where(
            r.id == router_id).order_by(a.ip_address))]


def first_of_version(addresses: list[str], version: int) -> str | None:
    return next((ip for ip in addresses if netaddr.IPAddress(ip).version == version), None)


def check_subnet_on_router(conn: Connection, router_id: str, subnet_id: str) -> None:
    p, a = t.ports.c, t.ipallocations.c
    on = conn.execute(sa.select(p.id).join(t.ipallocations, a.port_id == p.id).where(
        p.device_id == router_id, a.subnet_id == subnet_id).limit(1)).first()
    if on is None:
        raise exc.SubnetIsNotConnectedToRouter(subnet_id=subnet_id, router_id=router_id)


class VpnServices(TableCollection):
    """The ``vpnservices`` collection."""

    table = S

    def not_found(self, rid: str) -> Exception:
        return _not_found(rid)()  # type: ignore[no-any-return]

    def to_dicts(self, conn: Connection, found: Sequence[Any]) -> list[dict[str, Any]]:
        return [to_dict(r) for r in found]

    def _router(self, conn: Connection, ctx: Context, router_id: str) -> Any:
        router = conn.execute(sa.select(t.routers).where(t.routers.c.id == router_id)).first()
        if router is None or (not ctx.is_admin and router.project_id != ctx.project_id):
            raise errors.RouterNotFound(router_id=router_id)
        if router.gw_port_id is None:
            raise exc.RouterIsNotExternal(router_id=router_id)
        return router

    def create(self, ctx: Context, plural: str,
               items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for item in items:
            self.plugin.flavors.check(ctx, item.get("flavor_id"))

        def op(conn: Connection) -> list[dict[str, Any]]:
            out = []
            for item in items:
                router_id = item["router_id"]
                self._router(conn, ctx, router_id)
                if item.get("subnet_id") is not None:
                    check_subnet_on_router(conn, router_id, item["subnet_id"])
                gw = gateway_ips(conn, router_id)
                row = {**rows.new_row(ctx, item), "router_id": router_id,
                       "subnet_id": item.get("subnet_id"), "flavor_id": item.get("flavor_id"),
                       "admin_state_up": item.get("admin_state_up", True),
                       "status": "PENDING_CREATE",
                       "external_v4_ip": first_of_version(gw, 4),
                       "external_v6_ip": first_of_version(gw, 6)}
                conn.execute(sa.insert(S).values(**row))
                out.append(to_dict(self.row(conn, Context.admin(), row["id"])))
            return out
        made = self.plugin.core.write(op)
        for service in made:
            self.plugin.notify_router(service["router_id"])
        return made  # type: ignore[no-any-return]

    def update(self, ctx: Context, plural: str, rid: str, data: dict[str, Any],
               revision: int | None = None) -> dict[str, Any]:
        def op(conn: Connection) -> dict[str, Any]:
            row = self.row(conn, ctx, rid, for_update=True)
            refuse_pending(rid, row.status)
            values = {k: data[k] for k in UPDATABLE if k in data}
            if values:
                conn.execute(sa.update(S).where(S.c.id == rid).values(**values))
            return to_dict(self.row(conn, ctx, rid))
        done = self.plugin.core.write(op)
        self.plugin.notify_router(done["router_id"])
        return done  # type: ignore[no-any-return]

    def delete(self, ctx: Context, plural: str, rid: str, revision: int | None = None) -> None:
        def op(conn: Connection) -> str:
            row = self.row(conn, ctx, rid, for_update=True)
            if conn.execute(sa.select(C.c.id).where(C.c.vpnservice_id == rid).limit(1)).first():
                raise exc.VPNServiceInUse(vpnservice_id=rid)
            conn.execute(sa.delete(S).where(S.c.id == rid))
            return str(row.router_id)
        self.plugin.notify_router(self.plugin.core.write(op))
