"""``floatingip-pools``: ``GET /v2.0/floatingip_pools``.

The subnets of the external networks the caller may allocate floating IPs
from, one query. As upstream, each pool names the caller's project (the
pool is "available to" it), whoever owns the subnet.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import rbac, store

if TYPE_CHECKING:
    from neutrino.db.engine import Database


class FloatingIpPools:
    """Serves ``floatingip_pools``: list only."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def list(self, ctx: Context, plural: str,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        s, n = t.subnets.c, t.networks.c
        stmt = (sa.select(s.id, s.name, s.network_id, s.cidr)
                .join(t.networks, n.id == s.network_id)
                .where(rbac.is_external_clause(s.network_id))
                .order_by(s.network_id, s.created_at, s.id))
        if not ctx.is_admin:
            stmt = stmt.where(sa.or_(n.project_id == ctx.project_id,
                                     rbac.network_access_clause(ctx.project_id,
                                                                s.network_id)))
        with self.db.reader() as conn:
            rows = conn.execute(stmt).all()
        return [{"subnet_id": r.id, "subnet_name": r.name, "network_id": r.network_id,
                 "cidr": r.cidr, "project_id": ctx.project_id, "tenant_id": ctx.project_id}
                for r in rows], False

    def get(self, ctx: Context, plural: str, rid: str) -> dict[str, Any]:
        raise errors.HTTPNotFound()

    def create(self, *args: Any, **kwargs: Any) -> Any:
        # Upstream's web layer adds the caller's project to the body and
        # then refuses it: pools cannot be created.
        raise errors.HTTPBadRequest(msg="Attribute 'project_id' not allowed in POST")

    def update(self, *args: Any, **kwargs: Any) -> Any:
        raise errors.MethodNotAllowed()

    delete = update
