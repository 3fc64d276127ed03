"""``endpoint_groups``: what a site connection joins, by type.

Local groups list subnets (which must exist and be seen by the caller),
peer groups list CIDRs; the other types upstream lists are stored as given.
Endpoints never change after creation; a group named by a connection
cannot be deleted.
"""
from __future__ import annotations

from typing import Any, Sequence

import netaddr
import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import rbac, store
from neutrino.plugins.table_collection import TableCollection
from neutrino.plugins.vpnaas import exceptions as exc
from neutrino.plugins.vpnaas import rows
from neutrino.resources import validators as v
from neutrino.resources import vpnaas as res

G, E, C = t.vpn_endpoint_groups, t.vpn_endpoints, t.ipsec_site_connections


def _not_found(rid: str) -> Any:
    return lambda: exc.VPNEndpointGroupNotFound(endpoint_group_id=rid)


def visible_subnets(conn: Connection, ctx: Context, ids: list[str]) -> dict[str, Any]:
    """The subnets of ``ids`` the caller may see (own, or on a network they see)."""
    s, n = t.subnets.c, t.networks.c
    stmt = sa.select(s.id, s.cidr, s.ip_version, s.project_id).join(
        t.networks, n.id == s.network_id).where(s.id.in_(ids))
    seen = rbac.network_visible_clause(ctx)
    if seen is not None:
        stmt = stmt.where(sa.or_(s.project_id == ctx.project_id, seen))
    return {r.id: r for r in conn.execute(stmt)}


def check_endpoints(conn: Connection, ctx: Context, group: dict[str, Any]) -> None:
    """Upstream's reference validator: at least one endpoint, none twice,
    CIDRs valid, subnets existing."""
    endpoints, kind = group["endpoints"], group["type"]
    if not endpoints:
        raise exc.MissingEndpointForEndpointGroup(group=group)
    seen: set[str] = set()
    for endpoint in endpoints:
        if endpoint in seen:
            raise exc.InvalidEndpointInEndpointGroup(
                group_type=kind, endpoint=endpoint, why="Endpoints have to be unique")
        seen.add(endpoint)
    if kind == res.CIDR_ENDPOINT:
        for endpoint in endpoints:
            try:
                v.subnet(endpoint)
            except v.Invalid:
                raise exc.InvalidEndpointInEndpointGroup(
                    group_type=kind, endpoint=endpoint, why="Invalid CIDR") from None
    elif kind == res.SUBNET_ENDPOINT:
        for endpoint in endpoints:
            try:
                v.uuid(endpoint)
            except v.Invalid:
                raise exc.InvalidEndpointInEndpointGroup(
                    group_type=kind, endpoint=endpoint, why="Invalid UUID") from None
        found = visible_subnets(conn, ctx, endpoints)
        for endpoint in endpoints:
            if endpoint not in found:
                raise exc.NonExistingSubnetInEndpointGroup(subnet=endpoint)


def cidr_version(cidr: str) -> int:
    return int(netaddr.IPNetwork(cidr).version)


class EndpointGroups(TableCollection):
    """The ``endpoint_groups`` collection."""

    table = G

    def not_found(self, rid: str) -> Exception:
        return _not_found(rid)()  # type: ignore[no-any-return]

    def filters(self) -> dict[str, store.FilterBuilder]:
        return {"type": lambda values: G.c.endpoint_type.in_(values)}

    def to_dicts(self, conn: Connection, found: Sequence[Any]) -> list[dict[str, Any]]:
        ids = [r.id for r in found]
        eps = rows.children(conn, E, "endpoint_group_id", "endpoint", ids)
        return [{**rows.named(r), "type": r.endpoint_type, "endpoints": eps[r.id]}
                for r in found]

    def create(self, ctx: Context, plural: str,
               items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        def op(conn: Connection) -> list[dict[str, Any]]:
            out = []
            for item in items:
                check_endpoints(conn, ctx, item)
                row = {**rows.new_row(ctx, item), "endpoint_type": item["type"]}
                conn.execute(sa.insert(G).values(**row))
                conn.execute(sa.insert(E), [
                    {"endpoint_group_id": row["id"], "endpoint": ep, "position": i}
                    for i, ep in enumerate(item["endpoints"])])
                out.append(self.load(conn, Context.admin(), row["id"]))
            return out
        return self.plugin.core.write(op)  # type: ignore[no-any-return]

    def update(self, ctx: Context, plural: str, rid: str, data: dict[str, Any],
               revision: int | None = None) -> dict[str, Any]:
        def op(conn: Connection) -> dict[str, Any]:
            self.row(conn, ctx, rid, for_update=True)
            values = {k: data[k] for k in ("name", "description") if k in data}
            if values:
                conn.execute(sa.update(G).where(G.c.id == rid).values(**values))
            return self.load(conn, ctx, rid)
        return self.plugin.core.write(op)  # type: ignore[no-any-return]

    def delete(self, ctx: Context, plural: str, rid: str, revision: int | None = None) -> None:
        def op(conn: Connection) -> None:
            self.row(conn, ctx, rid, for_update=True)
            used = conn.execute(sa.select(C.c.id).where(sa.or_(
                C.c.local_ep_group_id == rid, C.c.peer_ep_group_id == rid)).limit(1)).first()
            if used is not None:
                raise exc.EndpointGroupInUse(group_id=rid)
            conn.execute(sa.delete(E).where(E.c.endpoint_group_id == rid))
            conn.execute(sa.delete(G).where(G.c.id == rid))
        self.plugin.core.write(op)
