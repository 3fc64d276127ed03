"""What the VPN collections share beyond ``TableCollection``'s reads: the
name columns every VPN resource shows, a new row's owner and name, and the
ordered child rows (peer CIDRs, endpoints)."""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection, Table

from neutrino.context import Context
from neutrino.plugins import store


def named(row: Any) -> dict[str, Any]:
    return {"id": row.id, "name": row.name, "description": row.description,
            "project_id": row.project_id, "tenant_id": row.project_id}


def new_row(ctx: Context, item: dict[str, Any]) -> dict[str, Any]:
    project = item.get("project_id") or item.get("tenant_id") or ctx.project_id
    return {"id": store.new_id(), "project_id": project, "name": item.get("name") or "",
            "description": item.get("description") or ""}


def children(conn: Connection, table: Table, key: str, value: str,
             ids: list[str]) -> dict[str, list[str]]:
    """The ordered ``value`` column of ``table``'s rows per parent id."""
    out: dict[str, list[str]] = {i: [] for i in ids}
    for part in store.chunks(ids):
        for r in conn.execute(sa.select(table.c[key], table.c[value]).where(
                table.c[key].in_(part)).order_by(table.c[key], table.c.position)):
            out[r[0]].append(r[1])
    return out
