"""Segment ranges kept in the database (``network-segment-range``).

With the ``network_segment_range`` service plugin loaded, the ranges a type
driver's pool covers are the rows of ``network_segment_ranges`` of its type,
not the configuration: the configured ranges become ``default`` rows at
start-up, and admins add shared and per-project ranges at runtime. The rows
are read in the transaction that needs them, never kept by a process, so
every server sharing the database allocates from the same ranges.

A project network's segment comes first from its project's own ranges,
then from the shared ones (the defaults among them) minus what other
projects' ranges cover: a project's range is its own even where it lies
inside a shared one.
"""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino.db import tables as t
from neutrino.plugins import store
from neutrino.plugins.ml2 import ranges as r
from neutrino.plugins.ml2.pool import IdPool, Key
from neutrino.resources.network_segment_range import RANGE_TYPES

R = t.network_segment_ranges

__all__ = ["RANGE_TYPES", "SegmentRanges"]


def _physnet(scope: Any) -> str:
    """Ranges keep '' where a tunnel's scope (and segment) has None."""
    return scope or ""


class SegmentRanges:
    """The database's ranges, as the type drivers of ``RANGE_TYPES`` use them."""

    # -- what the pools cover -------------------------------------------------

    def lock(self, conn: Connection, network_type: str) -> None:
        """Serialise the changes of one type's ranges (an API write, a
        start-up's defaults), first thing in their transaction: each then
        reads the ranges another one committed, so no pool is synced to a
        set of ranges missing a concurrent one (its ids would be dropped),
        and no two overlapping ranges both pass the overlap check."""
        conn.execute(sa.select(R.c.id).where(R.c.network_type == network_type)
                     .with_for_update()).all()

    def by_scope(self, conn: Connection, network_type: str,
                 scoped: bool) -> dict[Any, list[r.Range]]:
        """Every range of the type, by pool scope (the physical network for
        VLANs, None for tunnels): the ids its pool must hold. Read only
        under ``lock``, itself a locking read: the latest committed ranges,
        whatever the transaction's snapshot."""
        out: dict[Any, list[r.Range]] = {}
        for row in conn.execute(sa.select(R.c.physical_network, R.c.minimum, R.c.maximum)
                                .where(R.c.network_type == network_type)
                                .with_for_update()):
            scope = row.physical_network if scoped else None
            out.setdefault(scope, []).append((int(row.minimum), int(row.maximum)))
        return out

    def has_ranges(self, conn: Connection, network_type: str, scope: Any) -> bool:
        """Whether the type has a range in the scope (a VLAN physical network)."""
        stmt = sa.select(R.c.id).where(R.c.network_type == network_type,
                                       R.c.physical_network == _physnet(scope)).limit(1)
        return conn.execute(stmt).first() is not None

    def contains(self, conn: Connection, network_type: str, scope: Any, ident: int) -> bool:
        """Whether some range of the type holds the id (it goes back to the
        pool when released, rather than being forgotten)."""
        stmt = sa.select(R.c.id).where(R.c.network_type == network_type,
                                       R.c.physical_network == _physnet(scope),
                                       R.c.minimum <= ident, R.c.maximum >= ident).limit(1)
        return conn.execute(stmt).first() is not None

    def sync_defaults(self, conn: Connection, network_type: str,
                      configured: dict[Any, list[r.Range]]) -> None:
        """The ``default`` rows become exactly the configured ranges: those
        no longer configured go, new ones come; unchanged ones keep their
        id. Two servers starting at once collide on the unique key, and the
        loser's rerun finds the rows there."""
        wanted = {(_physnet(scope), lo, hi) for scope, rs in configured.items()
                  for lo, hi in rs}
        present = {(row.physical_network, int(row.minimum), int(row.maximum)): row.id
                   for row in conn.execute(
                       sa.select(R.c.id, R.c.physical_network, R.c.minimum, R.c.maximum)
                       .where(R.c.network_type == network_type, R.c.default.is_(True)))}
        gone = [rid for key, rid in present.items() if key not in wanted]
        if gone:
            store.delete_tags(conn, *gone)
            conn.execute(sa.delete(R).where(R.c.id.in_(gone)))
        ts = store.now()
        new = [{"id": store.new_id(), "project_id": None, "name": None, "description": "",
                "created_at": ts, "updated_at": ts, "revision_number": 0, "default": True,
                "shared": True, "network_type": network_type, "physical_network": physnet,
                "minimum": lo, "maximum": hi}
               for physnet, lo, hi in sorted(wanted - set(present))]
        if new:
            conn.execute(sa.insert(R), new)

    # -- allocation -----------------------------------------------------------

    def allocate(self, conn: Connection, pool: IdPool, network_type: str,
                 project_id: str | None, scope: Any = None) -> Key | None:
        """A free id for a network of ``project_id`` (in ``scope`` when
        given): from the project's own ranges first, else from the shared
        ones outside other projects' ranges; None when neither has one.

        The type's ranges (a few rows) are read and cut here, so that the
        pool is asked for ids by primary key ranges only."""
        scoped = pool.scope is not None
        own: dict[Any, list[r.Range]] = {}
        shared: dict[Any, list[r.Range]] = {}
        private: dict[Any, list[r.Range]] = {}
        for row in conn.execute(sa.select(R.c.physical_network, R.c.minimum, R.c.maximum,
                                          R.c.shared, R.c.project_id)
                                .where(R.c.network_type == network_type)):
            key = row.physical_network if scoped else None
            if scope is not None and key != scope:
                continue
            span = (int(row.minimum), int(row.maximum))
            if project_id and row.project_id == project_id:
                own.setdefault(key, []).append(span)
            elif row.project_id is not None:
                private.setdefault(key, []).append(span)
            if row.shared:
                shared.setdefault(key, []).append(span)
        if own:
            found = pool.allocate_in(conn, {k: r.merge(v) for k, v in own.items()})
            if found is not None:
                return found
        outside = {k: r.subtract(v, private.get(k, [])) for k, v in shared.items()}
        return pool.allocate_in(conn, {k: v for k, v in outside.items() if v})
