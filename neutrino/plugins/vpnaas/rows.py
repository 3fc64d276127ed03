"""What the VPN collections share: owner-scoped row reads and the
``ListQuery`` read of one table, as upstream scopes them (a project sees its
own rows, an admin every row; another project's row is the resource's 404)."""
from __future__ import annotations

from typing import Any, Callable

import sqlalchemy as sa
from sqlalchemy import Connection, Table

from neutrino.context import Context
from neutrino.plugins import store


def owned_row(conn: Connection, ctx: Context, table: Table, rid: str,
              not_found: Callable[[], Exception], for_update: bool = False) -> Any:
    row = store.get_row(conn, table, rid, not_found, for_update=for_update)
    if not ctx.is_admin and row.project_id != ctx.project_id:
        raise not_found()
    return row


def listed(conn: Connection, ctx: Context, table: Table, query: store.ListQuery,
           special: dict[str, store.FilterBuilder] | None = None) -> tuple[list[Any], bool]:
    clauses = store.column_clauses(table, query.filters, special or {})
    if not ctx.is_admin:
        clauses.append(table.c.project_id == ctx.project_id)
    rows, more = store.paged_select(conn, table, clauses, query)
    return list(rows), more


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
