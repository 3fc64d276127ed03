"""An upstream Neutron database, read only.

Upstream keeps the standard attributes (description, timestamps, revision
number) and the tags of every resource in shared tables keyed by a
``standard_attr_id``; neutrino keeps them on the resource's own row and
tags by the resource's id. ``Source`` resolves those keys once.
"""
from __future__ import annotations

import datetime as dt
from typing import Any

import sqlalchemy as sa

from neutrino.db.engine import normalise_url

STANDARD = ("description", "created_at", "updated_at", "revision_number")


class Source:
    """Reflects the upstream schema and reads whole tables as dicts, inside
    one read-only transaction so the copy is a consistent snapshot."""

    def __init__(self, url: str) -> None:
        self.engine = sa.create_engine(normalise_url(url))
        dialect = self.engine.dialect.name
        if dialect == "postgresql":
            self.conn = self.engine.connect().execution_options(
                isolation_level="REPEATABLE READ", postgresql_readonly=True)
        else:
            self.conn = self.engine.connect()
        if dialect == "mysql":
            self.conn.exec_driver_sql("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            self.conn.exec_driver_sql("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY")
        self.meta = sa.MetaData()
        self.meta.reflect(bind=self.conn)
        self._rows: dict[str, list[dict[str, Any]]] = {}
        self._standard: dict[int, dict[str, Any]] | None = None
        self._owner: dict[int, str] | None = None

    def close(self) -> None:
        self.conn.rollback()
        self.conn.close()
        self.engine.dispose()

    def has(self, table: str) -> bool:
        return table in self.meta.tables

    def columns(self, table: str) -> set[str]:
        return set(self.meta.tables[table].c.keys()) if self.has(table) else set()

    def rows(self, table: str) -> list[dict[str, Any]]:
        if table not in self._rows:
            if not self.has(table):
                self._rows[table] = []
            else:
                t = self.meta.tables[table]
                order = list(t.primary_key.columns) or list(t.c)
                result = self.conn.execute(sa.select(t).order_by(*order))
                self._rows[table] = [dict(r._mapping) for r in result]
        return self._rows[table]

    def count(self, table: str) -> int:
        t = self.meta.tables[table]
        return int(self.conn.execute(sa.select(sa.func.count()).select_from(t)).scalar() or 0)

    def standard(self, standard_attr_id: int) -> dict[str, Any]:
        """A resource's description, timestamps and revision, as neutrino
        stores them (a never-updated resource's ``updated_at`` is its
        ``created_at``)."""
        if self._standard is None:
            self._standard = {r["id"]: r for r in self.rows("standardattributes")}
        attrs = self._standard.get(standard_attr_id, {})
        created = attrs.get("created_at") or dt.datetime(1970, 1, 1)
        return {"description": attrs.get("description"),
                "created_at": created,
                "updated_at": attrs.get("updated_at") or created,
                "revision_number": attrs.get("revision_number") or 0}

    def owner(self, standard_attr_id: int) -> str | None:
        """The id of the resource a ``standard_attr_id`` belongs to."""
        if self._owner is None:
            self._owner = {}
            for name, table in self.meta.tables.items():
                if "standard_attr_id" in table.c and "id" in table.c and name != "ovn_revision_numbers":
                    for row in self.rows(name):
                        self._owner[row["standard_attr_id"]] = row["id"]
        return self._owner.get(standard_attr_id)
