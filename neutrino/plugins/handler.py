"""The contract between the core plugin and the modules behind its collections.

The core plugin (``plugins/core.py``) owns transactions, quotas, extension
drivers, events and the ML2 calls; a resource handler owns the SQL of one
collection. ``ResourceHandler`` says what the core calls; ``Handler`` gives
every optional hook a no-op default, so the core calls each hook
unconditionally instead of asking a handler what it happens to define.
"""
from __future__ import annotations

import abc
from typing import Any, Callable, Protocol, Sequence

import sqlalchemy as sa
from sqlalchemy import Connection, Row, Table

from neutrino import errors
from neutrino.context import Context
from neutrino.plugins import store

# What an action runs in one writer transaction; its result is the response body.
# An action answers a JSON object, or a list (``onboard_network_subnets``).
ActionWork = Callable[[Connection], Any]


class ResourceHandler(Protocol):
    """One collection of the core plugin, read and written inside the
    transactions the core opens (``conn``)."""

    table: Table  # tags and extension filters go to this table

    def create(self, conn: Connection, ctx: Context, data: dict[str, Any]) -> str:
        """Write one resource; its id."""

    def get(self, conn: Connection, rid: str) -> dict[str, Any]:
        """The resource as an internal load sees it."""

    def get_for(self, conn: Connection, rid: str, ctx: Context | None) -> dict[str, Any]:
        """The resource as ``ctx`` sees it (None: an internal load)."""

    def update(self, conn: Connection, ctx: Context, rid: str, data: dict[str, Any],
               revision: int | None) -> None: ...

    def delete(self, conn: Connection, rid: str, revision: int | None) -> None: ...

    def ahead(self, conn: Connection, data: dict[str, Any]) -> None:
        """Before a create of a single item: send reads ahead (``db/pipeline.py``)."""

    def before_create(self, conn: Connection, ctx: Context,
                      items: list[dict[str, Any]]) -> None:
        """Checks across the items of a (bulk) create."""

    def before_list(self, ctx: Context, query: store.ListQuery) -> None:
        """Work before a list's read transaction (making a default group)."""

    def before_delete(self, conn: Connection, ctx: Context, rid: str) -> None:
        """Delete rules that need the caller."""

    def action(self, ctx: Context, rid: str, name: str, body: Any) -> ActionWork:
        """Action ``name`` on ``rid``: its body checked, the work to run in
        one writer transaction."""

    # Last: below it, ``list`` would name this method in annotations.
    def list(self, conn: Connection, ctx: Context,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        """A page of what ``ctx`` may see, and whether more follow."""


class Handler:
    """Base of resource handlers: the optional hooks do nothing, and a
    handler overrides ``get`` or ``get_for`` (whichever depends on the
    caller), the other following from it."""

    table: Table

    def follows_revision(self, item: dict[str, Any]) -> bool:
        """Whether ``item`` (the API's dict of a resource) changes only with
        its row's ``revision_number`` (the writes to its child tables advance
        it too): then the item read earlier at the revision its row still
        holds is the resource now (``CorePlugin._as_seen``), and an update
        or delete need not read it again. A handler saying so locks the row
        in its update and delete before reading anything else."""
        return False

    def create(self, conn: Connection, ctx: Context, data: dict[str, Any]) -> str:
        raise errors.MethodNotAllowed()

    def get(self, conn: Connection, rid: str) -> dict[str, Any]:
        return self.get_for(conn, rid, None)

    def get_for(self, conn: Connection, rid: str, ctx: Context | None) -> dict[str, Any]:
        return self.get(conn, rid)

    def update(self, conn: Connection, ctx: Context, rid: str, data: dict[str, Any],
               revision: int | None) -> None:
        raise errors.MethodNotAllowed()

    def delete(self, conn: Connection, rid: str, revision: int | None) -> None:
        raise errors.MethodNotAllowed()

    def ahead(self, conn: Connection, data: dict[str, Any]) -> None:
        return None

    def lookups(self, data: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The single-value reads (``db/lookups.py``) a create of ``data``
        alone makes, and their parameters besides ``project``."""
        return (), {}

    def before_create(self, conn: Connection, ctx: Context,
                      items: list[dict[str, Any]]) -> None:
        return None

    def before_list(self, ctx: Context, query: store.ListQuery) -> None:
        return None

    def before_delete(self, conn: Connection, ctx: Context, rid: str) -> None:
        return None

    def action(self, ctx: Context, rid: str, name: str, body: Any) -> ActionWork:
        raise errors.ResourceNotFound()


class TableHandler(Handler, metaclass=abc.ABCMeta):
    """A collection that is one table and nothing more: a resource is its
    row, shown by ``to_dicts``; an update writes the ``updatable`` columns
    given; a delete removes the row. Subclasses add what is their own
    (checks on create, computed filters), not the reads and writes again.
    ``not_found`` and ``to_dicts`` are abstract, so a subclass that forgets
    one fails when it is made, not at its first missing row."""

    # Columns an update writes as given; none: the collection is not updated.
    updatable: tuple[str, ...] = ()

    @abc.abstractmethod
    def not_found(self, rid: str) -> Exception:
        """The error for a missing ``rid``: the collection's own NotFound."""

    @abc.abstractmethod
    def to_dicts(self, rows: Sequence[Row[Any]]) -> list[dict[str, Any]]:
        """The rows as the API shows them."""

    def filters(self) -> dict[str, store.FilterBuilder]:
        """Filters that are not a column's own values (``alive``)."""
        return {}

    def row(self, conn: Connection, rid: str, for_update: bool = False) -> Row[Any]:
        return store.get_row(conn, self.table, rid, lambda: self.not_found(rid),
                             for_update=for_update)

    def get(self, conn: Connection, rid: str) -> dict[str, Any]:
        return self.to_dicts([self.row(conn, rid)])[0]

    def list(self, conn: Connection, ctx: Context,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        clauses = store.column_clauses(self.table, query.filters, self.filters())
        rows, more = store.paged_select(conn, self.table, clauses, query)
        return self.to_dicts(rows), more

    def update(self, conn: Connection, ctx: Context, rid: str, data: dict[str, Any],
               revision: int | None) -> None:
        if not self.updatable:
            raise errors.MethodNotAllowed()
        self.row(conn, rid, for_update=True)
        values = {k: data[k] for k in self.updatable if k in data}
        if values:
            conn.execute(sa.update(self.table).where(self.table.c.id == rid).values(**values))

    def delete(self, conn: Connection, rid: str, revision: int | None) -> None:
        self.row(conn, rid, for_update=True)
        conn.execute(sa.delete(self.table).where(self.table.c.id == rid))
