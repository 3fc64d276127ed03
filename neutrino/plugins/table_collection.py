"""The reads of a service plugin's collection that is one table.

Service collections (VPN services and policies, endpoint groups, IPsec
connections, BGP speakers and peers, NDP proxies, local IPs) each read a
resource as its row and a list as one paged ``SELECT``; most scope both to
the caller's project as upstream does (a project sees its own rows, an
admin every row, another project's row is the resource's 404). They used to
write those reads again each; here they are written once, and a collection
says only what is its own: its table, its 404, how rows are shown, and any
filter that is not a column's own values.
"""
from __future__ import annotations

import abc
from typing import Any, Sequence

from sqlalchemy import Connection, Row, Table

from neutrino.context import Context
from neutrino.plugins import store


class TableCollection(abc.ABC):
    """``get`` and ``list`` of the service collections' interface over
    ``table``; ``owner_scoped`` False for admin-only collections, whose
    policy already keeps other callers out."""

    table: Table
    owner_scoped = True

    def __init__(self, plugin: Any) -> None:
        self.plugin = plugin

    @abc.abstractmethod
    def not_found(self, rid: str) -> Exception:
        """The collection's own 404."""

    @abc.abstractmethod
    def to_dicts(self, conn: Connection, rows: Sequence[Row[Any]]) -> list[dict[str, Any]]:
        """The rows as the API shows them."""

    def filters(self) -> dict[str, store.FilterBuilder]:
        """Filters that are not a column's own values."""
        return {}

    def row(self, conn: Connection, ctx: Context, rid: str, for_update: bool = False) -> Any:
        found = store.get_row(conn, self.table, rid, lambda: self.not_found(rid),
                              for_update=for_update)
        if self.owner_scoped and not ctx.is_admin and found.project_id != ctx.project_id:
            raise self.not_found(rid)
        return found

    def load(self, conn: Connection, ctx: Context, rid: str) -> dict[str, Any]:
        return self.to_dicts(conn, [self.row(conn, ctx, rid)])[0]

    def get(self, ctx: Context, plural: str, rid: str) -> dict[str, Any]:
        with self.plugin.db.reader() as conn:
            return self.load(conn, ctx, rid)

    def list(self, ctx: Context, plural: str,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        clauses = store.column_clauses(self.table, query.filters, self.filters())
        if self.owner_scoped and not ctx.is_admin:
            clauses.append(self.table.c.project_id == ctx.project_id)
        with self.plugin.db.reader() as conn:
            rows, more = store.paged_select(conn, self.table, clauses, query)
            return self.to_dicts(conn, list(rows)), more
