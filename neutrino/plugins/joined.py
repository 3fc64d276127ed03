"""Attribute tables read with their resource's own row.

A port's binding, its port_security flag and its QoS policies each live in
a table of their own, owned by the driver that defines the attribute; its
addresses, tags and security groups are rows of tables of their own too.
Read one by one they cost a round trip each on every show, update and
delete. Declared here they ride along on a single resource's SELECT instead:

- ``Joined``: a one-to-one table, as LEFT OUTER JOIN columns;
- ``Aggregated``: a one-to-many table (optionally joined to others and
  narrowed), as one column holding its rows as JSON arrays (a correlated
  subquery): a port's addresses, a network's segments or RBAC entries; or,
  ``probed``, a table with at most one row per parent that most parents
  lack (a port's trunk), as that row's id joined, its rows read only when
  there is one;
- ``Computed``: one value from a correlated subquery (a subnet's network
  being external, a network's ``l2_adjacency``).

A page reads each of those tables in one batch instead (``store.child_rows``
through the page's id query): a subquery per row costs more, and
PostgreSQL merge-joins a page with its outer-joined tables by scanning
their whole primary key index from the start, so a page deep into a large
table costs many times its own read.

A driver (or an API extension, ``AttributeHandler.joined``) still owns its
whole attribute: ``fill`` is its code, and its ``extend`` reads the table
itself for any item that came without the columns (a page, dicts built from
rows read elsewhere, a locked read); an ``Aggregated`` read with a fill is
filled for a page by the resource's own ``to_dicts``
(``store.aggregate_filler``).

A resource made in the running transaction is read back from the rows the
transaction put (``fresh_values``, ``db/writes.py``) where every read can
tell its columns from them; a read that cannot (one that joins rows made
before, or a table changed otherwise) sends the read to the database.
"""
from __future__ import annotations

import copy
import functools
from typing import Any, Callable, Collection, Sequence

import orjson
import sqlalchemy as sa
from sqlalchemy import Table
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql import operators
from sqlalchemy.sql.elements import BinaryExpression, BindParameter, False_, Null, True_
from sqlalchemy.sql.functions import FunctionElement

from neutrino.db import writes

# The value of a column a fresh row did not name, when it cannot be told.
UNKNOWN: Any = object()


def column_value(table: Table, row: dict[str, Any], name: str) -> Any:
    """``row``'s value of ``table.c[name]`` as inserted: a column it did not
    name is NULL unless the database or SQLAlchemy fills it (UNKNOWN)."""
    if name in row:
        return row[name]
    column = table.c[name]
    if column.default is None and column.server_default is None and not (
            column.primary_key and column.autoincrement is True):
        return None
    return UNKNOWN


def told_values(table: Table, row: dict[str, Any], names: Sequence[str]) -> list[Any] | None:
    """``row``'s values of the columns ``names`` as the database holds them
    after the insert; None when one of them cannot be told."""
    values = [column_value(table, row, name) for name in names]
    return None if any(v is UNKNOWN for v in values) else values


def _matches(table: Table, clause: Any, row: dict[str, Any]) -> bool | None:
    """Whether ``row`` satisfies ``clause`` (one of ``table``'s columns IS
    true, false or NULL, or IN constants: the conditions aggregates
    declare); None when it cannot be told."""
    if not isinstance(clause, BinaryExpression) or not isinstance(clause.left, sa.Column) \
            or clause.left.table is not table:
        return None
    value = column_value(table, row, clause.left.key)
    right, op = clause.right, clause.operator
    if value is UNKNOWN:
        return None
    if op is operators.is_ and isinstance(right, (True_, False_)):
        return value is not None and bool(value) is isinstance(right, True_)
    if op is operators.is_ and isinstance(right, Null):
        return value is None
    if op is operators.in_op and isinstance(right, BindParameter) and right.expanding \
            and right.callable is None:
        return value is not None and value in right.value
    return None


_JSON_SCALARS = (str, int, float, bool, type(None))


# fill(item, values): for ``Joined`` the declared columns' values in order,
# or None when the resource has no row in the table; for ``Aggregated`` the
# list of rows, each ``[key, *columns]``.
Fill = Callable[[dict[str, Any], Any], None]


class json_rows(FunctionElement):  # noqa: N801 - SQL function style
    """``[[c1, ...], [c2, ...], ...]``: one JSON array per column over the
    rows of an aggregate (column-major), as text.

    Column-major because MariaDB's JSON_ARRAYAGG over a JSON_ARRAY per row
    is costly per aggregate even over no rows at all, while an aggregate
    per column is as cheap as GROUP_CONCAT. Every aggregate of one group
    sees its rows in the same order, so the arrays line up.
    """
    type = sa.Text()
    name = "json_rows"
    inherit_cache = True


def _per_column(element: Any, compiler: Any, array: str, aggregate: str, **kw: Any) -> str:
    return f"{array}({', '.join(f'{aggregate}({compiler.process(c, **kw)})' for c in element.clauses)})"


@compiles(json_rows, "sqlite")
def _json_rows_sqlite(element: Any, compiler: Any, **kw: Any) -> str:
    return _per_column(element, compiler, "json_array", "json_group_array", **kw)


@compiles(json_rows, "postgresql")
def _json_rows_postgresql(element: Any, compiler: Any, **kw: Any) -> str:
    return f"CAST({_per_column(element, compiler, 'json_build_array', 'json_agg', **kw)} AS TEXT)"


@compiles(json_rows, "mysql")
@compiles(json_rows, "mariadb")
def _json_rows_mysql(element: Any, compiler: Any, **kw: Any) -> str:
    # Bounded by group_concat_max_len, which make_engine raises per session.
    return _per_column(element, compiler, "JSON_ARRAY", "JSON_ARRAYAGG", **kw)


class Joined:
    """``table`` joined on ``table.key == resource.parent_column``.

    ``follows_revision``: as ``Aggregated``'s, the row changes (is made,
    updated or deleted) only in a transaction that also advances the
    parent's ``revision_number``: a port's binding, its port_security flag,
    its own QoS policy (``plugins/row_memo.py`` remembers them with the
    port's own child rows). Joined on its parent's id alone.
    """

    def __init__(self, table: Table, key: str, columns: Sequence[str], fill: Fill,
                 parent_column: str = "id", follows_revision: bool = False) -> None:
        self.table, self.key, self.parent_column = table, key, parent_column
        self.fill = fill
        self.follows_revision = follows_revision
        if follows_revision:
            parents = {fk.column.table for fk in table.c[key].foreign_keys}
            if parent_column != "id" or len(parents) != 1:
                raise ValueError(f"{table.name}.{key}: a read that follows a revision "
                                 "is keyed by its one parent's id")
            writes.FOLLOWING[table] = parents.pop()
        # The key first: NULL there means no row, whatever the columns hold.
        self.names = (key, *columns)
        self.labels = [f"{table.name}__{c}" for c in self.names]
        self._columns = [table.c[c].label(label)
                         for c, label in zip((key, *columns), self.labels)]

    def columns(self, parent: Table) -> list[Any]:
        return self._columns

    def join(self, parent: Table, source: Any) -> Any:
        return source.outerjoin(self.table,
                                self.table.c[self.key] == parent.c[self.parent_column])

    @staticmethod
    def read(row: Any, index: list[int]) -> tuple[Any, ...] | None:
        return None if row[index[0]] is None else tuple(row[i] for i in index[1:])

    def fresh_values(self, parent: dict[str, Any], written: writes.Written) -> list[Any] | None:
        """The columns for a parent made in this transaction, from its rows
        (None: ask the database). Joined on another column than the
        parent's id, the row may be older than the parent: it is known
        only if this transaction read it and wrote nothing to its table."""
        nothing = [None] * len(self.labels)
        if self.parent_column != "id":
            joined_to = parent.get(self.parent_column)
            key = (self.table, self.key, joined_to)
            if self.table in written or written.rolled_back or key not in written.seen:
                return None
            seen = written.seen[key]
            return nothing if seen is None else [joined_to, *seen]
        if self.table not in written:
            return nothing
        if not written.reliable(self.table):
            return None
        mine = written.rows_with(self.table, self.key, parent["id"])
        if len(mine) != 1:
            return nothing if not mine else None
        return told_values(self.table, mine[0], [c.element.key for c in self._columns])


class Aggregated:
    """``table``'s rows whose ``key`` is the resource's id, as one column.

    Rows come back as ``[key, *columns]``, sorted by ``order_by`` (names of
    ``table``'s columns; sorted here, since not every database orders
    inside an aggregate, so a page's batch and a single row's aggregate
    agree). A column is a name of ``table``'s or a column of a table in
    ``joins`` (each LEFT OUTER JOINed on its condition); ``where`` narrows
    the rows. ``fill`` is None for the core's own child tables, which
    ``store.child_rows`` hands to the resource module instead.

    ``follows_revision``: the rows change only in a transaction that also
    advances the parent's ``revision_number`` (they are the parent's own;
    ``plugins/row_memo.py`` relies on it). Not so rows that belong to
    another resource, such as a port's trunk.

    ``probed``: ``table`` holds at most one row per parent (its key is
    unique) and most parents have none, as a port's trunk. A single row's
    read then LEFT JOINs ``table`` and selects its primary key instead of
    the aggregate, and only a parent it finds reads its rows, in a second
    statement (``store.child_rows``): on MariaDB, planning the correlated
    subquery on every show cost more than the join.
    """

    def __init__(self, table: Table, key: str, columns: Sequence[Any],
                 order_by: Sequence[str] = (), fill: Fill | None = None,
                 joins: Sequence[tuple[Table, Any]] = (), where: Sequence[Any] = (),
                 follows_revision: bool = False, probed: bool = False) -> None:
        if probed and not (table.c[key].unique and not where):
            raise ValueError(f"{table.name}.{key}: a probed read needs a unique key, unnarrowed")
        self.table, self.key, self.fill = table, key, fill
        self.follows_revision = follows_revision
        self.probed = probed
        # (a probed read's alias of ``table`` and its id column)
        self._probe = table.alias(f"{table.name}_probe")
        self._probe_id = self._probe.c[list(table.primary_key.columns)[0].name]
        parents = {fk.column.table for fk in table.c[key].foreign_keys}
        if follows_revision and len(parents) == 1:
            writes.FOLLOWING[table] = parents.pop()
        picked = [table.c[key], *(table.c[c] if isinstance(c, str) else c for c in columns)]
        self.names = tuple(c.name for c in picked)
        self.order_by = tuple(order_by)
        self.labels = [f"{table.name}__rows"]
        self._width = len(picked)
        extra = [table.c[c] for c in self.order_by if table.c[c] not in picked]
        self._sort_at = [(picked + extra).index(table.c[c]) for c in self.order_by]
        self.truncates = bool(extra)
        # Sort columns numbered by the database as rows come (an
        # autoincrement key), dropped once sorted: a new parent's rows,
        # inserted in this transaction, are numbered in the order they were
        # put, so their places in that order stand in for them
        # (``fresh_values``).
        self._numbered = {c.key for c in extra
                          if c.primary_key and c.autoincrement is True}
        # Whether ``arrange`` changes anything: an order, or columns to drop.
        self.rearranges = bool(self._sort_at or extra)
        self._selected = picked + extra
        source: Any = table
        for other, on in joins:
            source = source.outerjoin(other, on)
        self._source, self._where = source, tuple(where)
        self._joins = bool(joins)
        self._none = False

    def _select(self, *columns: Any) -> Any:
        return sa.select(*columns).select_from(self._source).where(*self._where)

    def columns(self, parent: Table) -> list[Any]:
        if self._none:
            return [sa.null().label(self.labels[0])]
        if self.probed:
            return [self._probe_id.label(self.labels[0])]
        rows = self._select(json_rows(*self._selected)).where(self.table.c[self.key] == parent.c.id)
        return [rows.scalar_subquery().label(self.labels[0])]

    @functools.cached_property
    def none(self) -> Aggregated:
        """This read for a parent known to have no rows in ``table``: a
        NULL column in place of the subquery, read as no rows."""
        variant = copy.copy(self)
        variant._none = True
        return variant

    def batch(self) -> Any:
        """The rows of any parents, key first: ``store.child_rows`` adds the
        parents and hands the groups to ``arrange``."""
        return self._select(*self._selected)

    def join(self, parent: Table, source: Any) -> Any:
        if self.probed and not self._none:
            return source.outerjoin(self._probe, self._probe.c[self.key] == parent.c.id)
        return source

    def arrange(self, rows: list[Any]) -> list[Any]:
        """One parent's rows in ``order_by``'s order, ``[key, *columns]`` each."""
        if self._sort_at and len(rows) > 1:
            at = self._sort_at
            rows.sort(key=lambda r: [r[i] for i in at])
        if self.truncates:
            width = self._width
            return [r[:width] for r in rows]
        return rows

    def decode(self, text: str | bytes | list[list[Any]] | None) -> list[list[Any]]:
        if isinstance(text, list):  # decoded already (``RowMemo``'s)
            return text
        columns = orjson.loads(text) if text else None
        # No rows: SQLite aggregates to empty arrays, the others to NULLs.
        if not columns or not columns[0]:
            return []
        return self.arrange([list(r) for r in zip(*columns)])

    def read(self, row: Any, index: list[int]) -> list[list[Any]]:
        return self.decode(row[index[0]])

    def fresh_values(self, parent: dict[str, Any], written: writes.Written) -> list[Any] | None:
        """The column for a parent made in this transaction: its rows among
        those the transaction put, as the aggregate would give them (None:
        ask the database, as for rows joined to older tables')."""
        if self._none or self.table not in written:
            return [None]
        if self._joins or not written.reliable(self.table):
            return None
        rows = []
        for place, row in enumerate(written.rows_with(self.table, self.key, parent["id"])):
            kept = [_matches(self.table, clause, row) for clause in self._where]
            if None in kept:
                return None
            if all(kept):
                if self._numbered:
                    row = {**{name: place for name in self._numbered}, **row}
                values = told_values(self.table, row, [c.key for c in self._selected])
                if values is None or not all(isinstance(v, _JSON_SCALARS) for v in values):
                    return None
                rows.append(values)
        if not rows:
            return [None]
        if len(rows) > 1 and not self.order_by:
            return None  # in the order the database's aggregate gives
        return [orjson.dumps([list(c) for c in zip(*rows)]).decode()]


class Computed:
    """A value computed from the resource's row (a correlated subquery or an
    expression), as one column labelled ``label``; ``fill(item, value)``
    when it is an attribute's."""

    # Computed afresh by every read: never a part of the row memo.
    follows_revision = False

    def __init__(self, label: str, build: Callable[[Table], Any],
                 fill: Fill | None = None,
                 fresh: tuple[Sequence[Table], Any] | None = None,
                 from_row: str | None = None,
                 noted: tuple[str, Sequence[Table]] | None = None) -> None:
        self.labels = [label]
        self._build = build
        self.fill = fill
        # (tables, value): for a resource made in the running transaction,
        # while it wrote none of ``tables``, the value is ``value``.
        self._fresh = fresh
        # A column of the resource's own row: a new one's value is the one
        # its INSERT wrote.
        self._from_row = from_row
        # (column, tables): for a new resource, the value the transaction
        # read for what its row's ``column`` names (``note``), while it
        # wrote none of ``tables`` since.
        self._noted = noted

    def note(self, written: writes.Written, key: Any, value: Any) -> None:
        """What this transaction read of the value for ``key`` (the
        ``noted`` column's value of a resource it makes)."""
        written.seen[(self.labels[0], key)] = value

    def columns(self, parent: Table) -> list[Any]:
        return [self._build(parent).label(self.labels[0])]

    def join(self, parent: Table, source: Any) -> Any:
        return source

    @staticmethod
    def read(row: Any, index: list[int]) -> Any:
        return row[index[0]]

    def fresh_values(self, parent: dict[str, Any], written: writes.Written) -> list[Any] | None:
        if self._from_row is not None:
            return [parent.get(self._from_row)]
        if self._noted is not None:
            column, tables = self._noted
            key = (self.labels[0], parent.get(column))
            if key not in written.seen or any(table in written for table in tables):
                return None
            return [written.seen[key]]
        if self._fresh is None or any(table in written for table in self._fresh[0]):
            return None
        return [self._fresh[1]]


Reads = Sequence["Joined | Aggregated | Computed"]


def note_seen(row: Any, joined: Reads, written: writes.Written) -> None:
    """Keep the one-to-one rows a read inside a create's block found with
    ``row``, for a later read of the same rows through another resource
    (``Joined.fresh_values``)."""
    fields = row._fields
    for read in joined:
        if isinstance(read, Joined) and read.labels[0] in fields:
            index = [fields.index(label) for label in read.labels]
            written.seen[(read.table, read.key, getattr(row, read.parent_column))] = \
                read.read(row, index)


def known_empty(joined: Reads, written: Collection[Table]) -> tuple[Any, ...]:
    """``joined`` for a resource made in this transaction, which can have
    rows only in the tables it wrote to (``db/writes.py``): the other
    ``Aggregated`` tables are NULL columns instead of subqueries."""
    return tuple(j.none if isinstance(j, Aggregated) and j.table not in written else j
                 for j in joined)


def select(table: Table, joined: Reads) -> Any:
    """``SELECT table.*, <their columns> FROM table LEFT OUTER JOIN ...``."""
    if not joined:
        return sa.select(table)
    source: Any = table
    for j in joined:
        source = j.join(table, source)
    return sa.select(table, *[c for j in joined for c in j.columns(table)]).select_from(source)


def filler(fields: Sequence[str], joined: Reads,
           known: dict[Any, dict[str, Any]] | None = None) -> Callable[[dict[str, Any], Any], None]:
    """A function that fills an item from its row, for rows with ``fields``;
    a no-op for rows read without the columns, unless ``known`` (a page's
    ``groups``) holds a ``Joined`` read's values by id. ``Aggregated`` reads
    are left to ``store.aggregate_filler``, which fills a page too."""
    plan = [(j.fill, j.read, [fields.index(label) for label in j.labels])
            for j in joined if j.fill is not None and j.labels[0] in fields
            and not isinstance(j, Aggregated)]
    given = [(j.fill, known[j]) for j in joined
             if known and isinstance(j, Joined) and j.fill is not None and j in known]
    if not plan and not given:
        return lambda item, row: None

    def fill(item: dict[str, Any], row: Any) -> None:
        for fn, read, index in plan:
            fn(item, read(row, index))
        for fn, values in given:
            fn(item, values[item["id"]])
    return fill


def missing(items: list[dict[str, Any]], attribute: str) -> list[dict[str, Any]]:
    """The items a driver's ``extend`` must still read for ``attribute``
    (the list itself when it is all of them: a page keeps its id query)."""
    todo = [i for i in items if attribute not in i]
    return items if len(todo) == len(items) else todo
