"""``port_associations`` of local IPs: a port answering for a local IP on its host.

An association is keyed by its port within its local IP (a port may answer
for several local IPs); it never changes, so agents are told of it when it
is made and when it goes (a port's go with the port, the port's own removal
telling its agent).
"""
from __future__ import annotations

from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import store
from neutrino.resources import local_ip as res

A, L, B = t.local_ip_associations, t.local_ips, t.ml2_port_bindings


def shown() -> Any:
    """Associations as the API and the agents see them: with their local IP's
    address, mode, network and owner, and the host their port is bound to."""
    return (sa.select(A.c.fixed_port_id.label("id"), A.c.local_ip_id, A.c.fixed_port_id,
                      A.c.fixed_ip, L.c.local_ip_address, L.c.ip_mode, L.c.network_id,
                      L.c.project_id, sa.func.coalesce(B.c.host, "").label("host"))
            .select_from(A.join(L, L.c.id == A.c.local_ip_id)
                         .outerjoin(B, B.c.port_id == A.c.fixed_port_id))
            .subquery("port_associations"))


def to_dict(row: Any) -> dict[str, Any]:
    return {"local_ip_id": row.local_ip_id, "fixed_port_id": row.fixed_port_id,
            "fixed_ip": row.fixed_ip, "local_ip_address": row.local_ip_address,
            "host": row.host, "project_id": row.project_id, "tenant_id": row.project_id}


def for_agent(row: Any) -> dict[str, Any]:
    """What an agent needs of an association (upstream pushes the object)."""
    return {**to_dict(row), "ip_mode": row.ip_mode, "network_id": row.network_id}


def read(conn: Connection, *where: Any) -> list[Any]:
    view = shown()
    return list(conn.execute(sa.select(view).where(*[w(view) for w in where])
                             .order_by(view.c.local_ip_id, view.c.fixed_port_id)))


def one(conn: Connection, lip_id: str, port_id: str) -> Any:
    rows = read(conn, lambda v: v.c.local_ip_id == lip_id, lambda v: v.c.fixed_port_id == port_id)
    if not rows:
        raise errors.LocalIPAssociationNotFound(local_ip_id=lip_id, port_id=port_id)
    return rows[0]


def chosen_ip(port_id: str, ips: list[str], requested: str | None) -> str:
    """The port's fixed IP an association (or a given local port) uses, with
    upstream's refusals: no IP, an IP it lacks, several and none named."""
    if requested:
        if requested not in ips:
            raise errors.LocalIPRequestedIPNotFound(port_id=port_id, ip=requested)
        return requested
    if not ips:
        raise errors.LocalIPNoIP(port_id=port_id)
    if len(ips) > 1:
        raise errors.LocalIPNoRequestedIP(port_id=port_id)
    return ips[0]


def port_ips(conn: Connection, port_id: str) -> list[str]:
    ip = t.ipallocations.c
    return [r.ip_address for r in conn.execute(
        sa.select(ip.ip_address).where(ip.port_id == port_id).order_by(ip.ip_address))]


def own_port(conn: Connection, ctx: Context, port_id: str, resource: str) -> Any:
    """The port as upstream reads it with the caller's context (its own, or
    any for an admin); another's is "not found", a 400 naming the port."""
    row = conn.execute(sa.select(t.ports).where(t.ports.c.id == port_id)).first()
    if row is None or not (ctx.is_admin or row.project_id == ctx.project_id):
        raise errors.BadRequest(resource=resource, msg=f"Port {port_id} not found")
    return row


class PortAssociations:
    """Serves ``port_associations`` with the core collections' interface."""

    def __init__(self, plugin: Any) -> None:
        self.plugin = plugin

    def get(self, ctx: Context, plural: str, rid: str,
            parent_id: str | None = None) -> dict[str, Any]:
        with self.plugin.db.reader() as conn:
            if parent_id is None:
                rows = read(conn, lambda v: v.c.fixed_port_id == rid)
                if not rows:
                    raise errors.ResourceNotFound()
                return to_dict(rows[0])
            return to_dict(one(conn, parent_id, rid))

    def list(self, ctx: Context, plural: str,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        view = shown()
        clauses = store.column_clauses(cast(Any, view), query.filters, {})
        with self.plugin.db.reader() as conn:
            rows, more = store.paged_select(conn, cast(Any, view), clauses, query)
        return [to_dict(r) for r in rows], more

    def create(self, ctx: Context, plural: str,
               items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        def op(conn: Connection) -> list[Any]:
            return [self._create_one(conn, ctx, item) for item in items]
        made = self.plugin.core.write(op)
        self.plugin.pusher.push([for_agent(r) for r in made], "created")
        return [to_dict(r) for r in made]

    def _create_one(self, conn: Connection, ctx: Context, item: dict[str, Any]) -> Any:
        lip_id, port_id = item[res.PARENT_KEY], item["fixed_port_id"]
        store.get_row(conn, L, lip_id, lambda: errors.LocalIPNotFound(id=lip_id),
                      for_update=True)
        own_port(conn, ctx, port_id, "local_ip_port_association")
        fixed_ip = chosen_ip(port_id, port_ips(conn, port_id), item.get("fixed_ip"))
        exists = conn.execute(sa.select(A.c.fixed_port_id).where(
            A.c.local_ip_id == lip_id, A.c.fixed_port_id == port_id)).first()
        if exists is not None:
            raise errors.LocalIPAssociationExists(local_ip_id=lip_id, port_id=port_id)
        conn.execute(sa.insert(A).values(local_ip_id=lip_id, fixed_port_id=port_id,
                                         fixed_ip=fixed_ip))
        return one(conn, lip_id, port_id)

    def update(self, ctx: Context, plural: str, rid: str, data: dict[str, Any],
               revision: int | None = None) -> Any:
        raise errors.MethodNotAllowed()

    def delete(self, ctx: Context, plural: str, rid: str, revision: int | None = None,
               parent_id: str | None = None) -> None:
        lip_id = parent_id or ""

        def op(conn: Connection) -> Any:
            row = one(conn, lip_id, rid)
            conn.execute(sa.delete(A).where(A.c.local_ip_id == lip_id,
                                            A.c.fixed_port_id == rid))
            return row
        gone = self.plugin.core.write(op)
        self.plugin.pusher.push([for_agent(gone)], "deleted")
