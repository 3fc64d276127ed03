"""Quotas: limits per project and resource, enforced inside the create.

Upstream reserves in one transaction and commits in another, which needs a
reservations table, expiry and cleanup. Here the check runs inside the very
transaction that inserts the rows, after taking a per-(project, resource)
row lock, so concurrent creates of one project serialise on that lock and
can never overrun the limit; other projects are not blocked. On SQLite the
database-wide writer lock already gives the same guarantee.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

import sqlalchemy as sa
from sqlalchemy import Connection, Table
from sqlalchemy import exc as sa_exc

from neutrino import errors
from neutrino.db import lookups
from neutrino.db import tables as t

# Built once: every create reads its project's limit (with its other
# lookups, ``db/lookups.py``).
LIMIT = sa.select(t.quotas.c.hard_limit).where(
    t.quotas.c.project_id == sa.bindparam("project"),
    t.quotas.c.resource == sa.bindparam("resource"))


@dataclass(frozen=True)
class Countable:
    """A resource with a quota: its name, tables and ``[quotas]`` option.

    Most resources live in one table; RBAC policies, for instance, are
    counted across the tables of every object type they apply to. A
    ``per_object`` limit (``router_route``: routes per router) is not a
    count of the project's rows: its usage is always 0, as upstream shows
    it, and the plugin checks it with ``check_limit``.
    """

    name: str
    table: Table | None
    option: str
    more_tables: tuple[Table, ...] = ()
    per_object: bool = False


class QuotaEngine:
    def __init__(self, conf: Any, countables: Iterable[Countable]) -> None:
        self.conf = conf
        self.countables = {c.name: c for c in countables}

    # -- limits ----------------------------------------------------------------

    def default(self, name: str) -> int:
        quotas = self.conf.quotas
        value = getattr(quotas, self.countables[name].option, None)
        limit: int = quotas.default_quota if value is None else value
        return limit

    def names(self) -> list[str]:
        """The resources with a quota, in the order they were registered
        (the core's first), which is the order upstream judges a body in."""
        return list(self.countables)

    def defaults(self) -> dict[str, int]:
        return {name: self.default(name) for name in sorted(self.countables)}

    def limits(self, conn: Connection, project_id: str) -> dict[str, int]:
        out = self.defaults()
        for row in conn.execute(sa.select(t.quotas).where(t.quotas.c.project_id == project_id)):
            if row.resource in out:
                out[row.resource] = row.hard_limit
        return out

    def projects_with_quotas(self, conn: Connection) -> list[str]:
        return sorted({r.project_id for r in conn.execute(sa.select(t.quotas.c.project_id))})

    def usage(self, conn: Connection, project_id: str, name: str) -> int:
        countable = self.countables[name]
        if countable.per_object or countable.table is None:
            return 0
        return sum(conn.execute(sa.select(sa.func.count()).select_from(table)
                                .where(table.c.project_id == project_id)).scalar() or 0
                   for table in (countable.table, *countable.more_tables))

    def set_limits(self, conn: Connection, project_id: str, limits: dict[str, int],
                   check_limit: bool) -> None:
        unknown = sorted(set(limits) - set(self.countables))
        if unknown:
            raise errors.BadRequest(resource="quota",
                                    msg=f"Unrecognized attribute(s) '{', '.join(unknown)}'")
        for name, limit in limits.items():
            if check_limit and limit >= 0:
                used = self.usage(conn, project_id, name)
                if used > limit:
                    raise errors.HTTPBadRequest(
                        msg=f"Quota limit {limit} for {name} must be greater than or equal "
                            f"to already used {used}")
            conn.execute(sa.delete(t.quotas).where(t.quotas.c.project_id == project_id,
                                                   t.quotas.c.resource == name))
            conn.execute(sa.insert(t.quotas).values(project_id=project_id, resource=name,
                                                    hard_limit=limit))

    def reset(self, conn: Connection, project_id: str) -> None:
        conn.execute(sa.delete(t.quotas).where(t.quotas.c.project_id == project_id))

    # -- enforcement -------------------------------------------------------------

    def enforce(self, conn: Connection, project_id: str | None, deltas: dict[str, int]) -> None:
        """Refuse the operation when it would take a resource over its limit."""
        if not project_id:
            return
        over = []
        for name, delta in sorted(deltas.items()):
            if name not in self.countables or delta <= 0:
                continue
            limit = self._limit(conn, project_id, name)
            if limit < 0:
                continue
            self._lock(conn, project_id, name)
            if self.usage(conn, project_id, name) + delta > limit:
                over.append(name)
        if over:
            raise errors.OverQuota(overs=sorted(over))

    def lookups(self, deltas: dict[str, int]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The limit ``enforce`` will read for one project's ``deltas``, for
        a create to read with its other lookups (``db/lookups.py``), and its
        parameters besides the project: only when one resource is counted."""
        if len(deltas) != 1:
            return (), {}
        return (LIMIT,), {"resource": next(iter(deltas))}

    def add(self, countables: Iterable[Countable]) -> None:
        """Resources of a service plugin (``router``, ``floatingip``)."""
        for countable in countables:
            self.countables[countable.name] = countable

    def check_limit(self, conn: Connection, project_id: str, name: str, value: int) -> None:
        """A ``per_object`` limit: refuse ``value`` above the project's limit."""
        limit = self._limit(conn, project_id, name)
        if 0 <= limit < value:
            raise errors.OverQuota(overs=[name])

    def _limit(self, conn: Connection, project_id: str, name: str) -> int:
        limit = lookups.scalar(conn, LIMIT, {"project": project_id, "resource": name})
        return self.default(name) if limit is None else limit

    def _lock(self, conn: Connection, project_id: str, name: str) -> None:
        """Serialise one project's creates of one resource (no-op on SQLite).

        The lock row is updated, not only locked (``SELECT ... FOR
        UPDATE``): on a Galera cluster row locks are local to a node, and
        only rows written are certified against the other nodes' commits,
        so two creates on two nodes each counted the same usage and both
        committed. Written, the loser fails certification and is rerun.
        """
        if conn.dialect.name == "sqlite":
            return
        locks = t.quota_locks
        bump = (sa.update(locks).where(locks.c.project_id == project_id, locks.c.resource == name)
                .values(generation=locks.c.generation + 1))
        if conn.execute(bump).rowcount:
            return
        try:
            with conn.begin_nested():
                conn.execute(sa.insert(locks).values(project_id=project_id, resource=name))
        except sa_exc.IntegrityError:
            pass  # a concurrent request created it; the update below waits for it
        conn.execute(bump)
