"""The ``conntrack_helpers`` collection under a router.

A helper entry tells the router's L3 agent to hand the traffic of a
protocol and destination port to a kernel conntrack helper (``ftp``,
``tftp``, ...), which follows the related connections the protocol opens
(and rewrites their addresses through NAT). Only the helper and protocol
pairs of ``[DEFAULT] allowed_conntrack_helpers`` are accepted, as upstream;
the same (router, protocol, port, helper) twice is a duplicate. A change
bumps the router's revision and tells its agents.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Sequence

import sqlalchemy as sa
from sqlalchemy import Connection
from sqlalchemy import exc as sa_exc

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import store
from neutrino.resources.conntrack_helper import CTH_PARENT_KEY

FIELDS = ("protocol", "port", "helper")


def constraints(allowed: Sequence[dict[str, str]]) -> dict[str, list[str]]:
    """``allowed_conntrack_helpers`` as helper -> protocols (a helper may repeat)."""
    out: dict[str, list[str]] = defaultdict(list)
    for item in allowed:
        for helper, protocol in item.items():
            out[helper].append(protocol)
    return dict(out)


def to_dict(row: Any) -> dict[str, Any]:
    return {"id": row.id, "protocol": row.protocol, "port": row.port, "helper": row.helper,
            CTH_PARENT_KEY: row.router_id}


def brief(row: Any) -> dict[str, Any]:
    """A helper as the router shows it (``expose-l3-conntrack-helper``)."""
    return {k: getattr(row, k) for k in FIELDS}


def of_routers(conn: Connection, router_ids: Sequence[str]) -> dict[str, list[Any]]:
    """Helper rows per router, in one query per chunk."""
    c = t.conntrack_helpers.c
    out: dict[str, list[Any]] = {}
    for part in store.chunks(list(router_ids)):
        for row in conn.execute(sa.select(t.conntrack_helpers).where(c.router_id.in_(part))
                                .order_by(c.created_at, c.id)):
            out.setdefault(row.router_id, []).append(row)
    return out


class ConntrackHelpers:
    """Serves ``conntrack_helpers`` with the core collections' interface."""

    def __init__(self, plugin: Any) -> None:
        self.plugin = plugin

    @property
    def core(self) -> Any:
        return self.plugin.core

    def _check_allowed(self, helper: str, protocol: str) -> None:
        allowed = self.plugin.constraints
        if helper not in allowed:
            raise errors.ConntrackHelperNotAllowed(helper=helper)
        if protocol not in allowed[helper]:
            raise errors.InvalidProtocolForHelper(
                helper=helper, protocol=protocol,
                supported_protocols=", ".join(allowed[helper]))

    @staticmethod
    def _duplicate(values: dict[str, Any]) -> errors.BadRequest:
        shown = {k: values[k] for k in (CTH_PARENT_KEY, *FIELDS)}
        return errors.BadRequest(
            resource="conntrack_helper",
            msg=f"A duplicate conntrack helper entry with same attributes already exists, "
                f"conflicting values are {shown}")

    def _row(self, conn: Connection, cth_id: str, for_update: bool = False) -> Any:
        return store.get_row(conn, t.conntrack_helpers, cth_id,
                             lambda: errors.ConntrackHelperNotFound(id=cth_id),
                             for_update=for_update)

    # -- reading -----------------------------------------------------------------

    def get(self, ctx: Context, plural: str, cth_id: str) -> dict[str, Any]:
        with self.plugin.db.reader() as conn:
            return to_dict(self._row(conn, cth_id))

    def list(self, ctx: Context, plural: str,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        clauses = store.column_clauses(t.conntrack_helpers, query.filters, {})
        with self.plugin.db.reader() as conn:
            rows, more = store.paged_select(conn, t.conntrack_helpers, clauses, query)
            return [to_dict(r) for r in rows], more

    # -- writing -----------------------------------------------------------------

    def _store(self, conn: Connection, values: dict[str, Any], statement: Any) -> None:
        """Insert or update; the same quadruple twice is a duplicate (400)."""
        try:
            with conn.begin_nested():
                conn.execute(statement)
        except sa_exc.IntegrityError:
            raise self._duplicate(values) from None
        store.bump(conn, t.routers, values[CTH_PARENT_KEY])

    def create(self, ctx: Context, plural: str,
               items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for item in items:
            self._check_allowed(item["helper"], item["protocol"])

        def op(conn: Connection) -> list[dict[str, Any]]:
            out = []
            for item in items:
                router_id = item[CTH_PARENT_KEY]
                store.get_row(conn, t.routers, router_id,
                              lambda rid=router_id: errors.RouterNotFound(router_id=rid),
                              for_update=True)
                row = {"id": store.new_id(), CTH_PARENT_KEY: router_id,
                       **{k: item[k] for k in FIELDS}, "created_at": store.now()}
                self._store(conn, row, sa.insert(t.conntrack_helpers).values(**row))
                out.append(to_dict(self._row(conn, row["id"])))
            return out
        created = self.core.write(op)
        self.plugin.routers_changed([c[CTH_PARENT_KEY] for c in created])
        return created

    def update(self, ctx: Context, plural: str, cth_id: str, data: dict[str, Any],
               revision: int | None = None) -> dict[str, Any]:
        def op(conn: Connection) -> dict[str, Any]:
            current = self._row(conn, cth_id, for_update=True)
            values = {**to_dict(current), **{k: data[k] for k in FIELDS if k in data}}
            self._check_allowed(values["helper"], values["protocol"])
            self._store(conn, values, sa.update(t.conntrack_helpers)
                        .where(t.conntrack_helpers.c.id == cth_id)
                        .values(**{k: values[k] for k in FIELDS}))
            return to_dict(self._row(conn, cth_id))
        updated: dict[str, Any] = self.core.write(op)
        self.plugin.routers_changed([updated[CTH_PARENT_KEY]])
        return updated

    def delete(self, ctx: Context, plural: str, cth_id: str,
               revision: int | None = None) -> None:
        def op(conn: Connection) -> str:
            row = self._row(conn, cth_id, for_update=True)
            conn.execute(sa.delete(t.conntrack_helpers)
                         .where(t.conntrack_helpers.c.id == cth_id))
            store.bump(conn, t.routers, row.router_id)
            return str(row.router_id)
        self.plugin.routers_changed([self.core.write(op)])
