"""A resource's own child tables, remembered for as long as its revision stands.

A port shown alone is one SELECT (``plugins/joined.py``), but on MariaDB
most of its time is the server planning the SELECT's correlated subqueries,
one per child table, whether or not they find rows: as much again as the
port's row with its one-to-one tables.

A port's own child rows (addresses, tags, address pairs, DHCP options,
security groups: the ``Aggregated`` reads declared ``follows_revision``)
and its own one-to-one rows (binding, port_security flag, QoS policy: the
``Joined`` ones so declared) change only in a transaction that also
advances the port's ``revision_number``, as upstream's revision plugin does
for its related objects. So the rows read with revision N are the port's
for as long as its revision is N. A memo keeps them per id; a read whose id
it holds asks the database for the row and the reads that are not the
port's own (its trunk, its network's QoS policy), the remembered
subqueries and joins left out, and takes the rest from the memo when the
revision read is the remembered one (else it reads them too).

A page of ports (``page``) asks the database for their rows alone, as it
did, and reads a remembered table only for the ports whose revision the
memo does not hold: a list of ports that did not change since it was last
read reads none of those tables, only the rows, trunks and the network's
QoS policy: the child and one-to-one tables were the largest parts of a
long list after building its dicts (``docs/performance.md``).

Entries hold what each read's ``fill`` takes: the child rows decoded
(``Aggregated.decode`` passes them through, so a hit costs no JSON
parsing), a one-to-one row's columns or None. They are shared by every
request that reads them: readers must not change them.

Only committed states go in: what a read outside a write transaction saw,
and what a create or update answered (``answering``) once its transaction
committed (``write_attempt``). A page's children are read after its rows,
so they are at least as new as the revision they are remembered under;
were they newer, that revision has already been replaced in the database
and no later read finds it. Every process keeps its own and checks the
database's revision on every read, so servers sharing a database never
serve each other's stale rows; entries leave oldest first.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterator, Sequence

from sqlalchemy import Connection, Table

from neutrino.plugins import store
from neutrino.plugins.joined import Aggregated, Joined, Reads

# Entries per memo (and dicts per ``Built``). An entry is the row's
# revision and its decoded child rows; a full memo with its built dicts is
# part of a worker's memory, which issue 37 caps (docs/performance.md).
SIZE = 2048

# The write attempt running in this context: its answers' entries, published
# when its transaction has committed.
_ATTEMPT: ContextVar[dict[tuple[Any, str], tuple[int, tuple[Any, ...]]] | None] = ContextVar(
    "row-memo-attempt", default=None)
_ANSWERING: ContextVar[bool] = ContextVar("row-memo-answering", default=False)


@contextmanager
def write_attempt() -> Iterator[None]:
    """One attempt of a write transaction: the answers read inside
    (``answering``) enter their memos if, and once, the block ends without
    an error, which is after the transaction committed."""
    collected: dict[tuple[Any, str], tuple[int, tuple[Any, ...]]] = {}
    token = _ATTEMPT.set(collected)
    try:
        yield
    finally:
        _ATTEMPT.reset(token)
    for (memo, rid), entry in collected.items():
        memo.put(rid, entry)


@contextmanager
def answering() -> Iterator[None]:
    """Reads inside are what the write answers with: the state it commits."""
    token = _ANSWERING.set(True)
    try:
        yield
    finally:
        _ANSWERING.reset(token)


class Built:
    """The API dicts a page built from rows and their own reads, by id, with
    the row each came from: the same row (its revision among its columns)
    with the same own reads gives the same dict, so a page that reads it
    again copies it instead of building it (building was one of a long
    list's largest costs).

    Only for dicts that go straight into an API answer
    (``ListQuery.answer``): a copy of the top level, for the attributes the
    rest of the request adds, while the lists and dicts inside are shared
    by every answer; nothing on that path changes them. Other callers (RPC
    handlers annotate addresses in place) get dicts of their own."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._dicts: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def get(self, row: Any) -> dict[str, Any] | None:
        found = self._dicts.get(row.id)
        if found is None or found[0] != tuple(row):
            return None
        return found[1].copy()

    def put(self, row: Any, item: dict[str, Any]) -> None:
        entry = (tuple(row), item.copy())
        with self._lock:
            self._dicts.pop(row.id, None)
            while len(self._dicts) >= self.size:
                del self._dicts[next(iter(self._dicts))]
            self._dicts[row.id] = entry

    def clear(self) -> None:
        with self._lock:
            self._dicts.clear()

    def __len__(self) -> int:
        return len(self._dicts)


class RowMemo:
    """The ``follows_revision`` reads of ``table``'s rows, by id."""

    def __init__(self, table: Table, size: int = SIZE) -> None:
        self.table, self.size = table, size
        self._entries: dict[str, tuple[int, tuple[Any, ...]]] = {}
        self._lock = threading.Lock()
        self._light: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        self._layout: dict[tuple[str, ...], tuple[list[int], Any]] = {}
        self._plans: dict[tuple[tuple[str, ...], tuple[Any, ...]], Any] = {}
        self.hits = 0
        # The dicts pages built (``ports.to_dicts``).
        self.built = Built(size)

    def read(self, conn: Connection, rid: str, joined: Reads,
             not_found: Callable[[], Exception]) -> Any:
        """The row as ``store.get_row(..., joined=joined)`` reads it."""
        if conn.get_execution_options().get("writer"):
            row = store.get_row(conn, self.table, rid, not_found, joined=joined)
            attempt = _ATTEMPT.get()
            if attempt is not None and _ANSWERING.get():
                attempt[(self, rid)] = self._entry(row, joined)
            return row
        entry = self._entries.get(rid)
        if entry is not None:
            try:
                row = store.get_row(conn, self.table, rid, not_found, joined=self._lighter(joined))
            except Exception:
                self.forget(rid)
                raise
            if row.revision_number == entry[0]:
                self.hits += 1
                return self._merged(row, joined, entry[1])
        row = store.get_row(conn, self.table, rid, not_found, joined=joined)
        self.put(rid, self._entry(row, joined))
        return row

    def page(self, conn: Connection, rows: store.Page, joined: Reads) -> store.Page:
        """``rows`` (a page of the table's rows alone, as ``paged_select``
        reads them) knowing the ``follows_revision`` reads' values for every
        row (``Page.groups``): from the memo where it holds the row's
        revision, else read in one batch per table for the rest, and
        remembered. A page larger than the memo, or read in a write
        transaction, is left to read its children as any page does."""
        if not rows or len(rows) > self.size or conn.get_execution_options().get("writer"):
            return rows
        followed = [j for j in joined if _followed(j)]
        if not followed:
            return rows
        fields = rows[0]._fields
        at_id, at_revision = fields.index("id"), fields.index("revision_number")
        get = self._entries.get
        known: dict[str, tuple[Any, ...]] = {}
        missed: list[Any] = []
        for row in rows:
            rid = row[at_id]
            entry = get(rid)
            if entry is not None and entry[0] == row[at_revision]:
                known[rid] = entry[1]
            else:
                missed.append(row)
        if missed:
            # (all of them: the page's ids, which keep its span)
            unknown = store.row_ids(rows if len(missed) == len(rows) else missed)
            read = [_batched(conn, j, unknown) for j in followed]
            with self._lock:
                for row in missed:
                    rid = row[at_id]
                    values = known[rid] = tuple(groups[rid] for groups in read)
                    self._put(rid, (row[at_revision], values))
        known_ids = list(known)
        rows.groups = {agg: dict(zip(known_ids, column))
                       for agg, column in zip(followed, zip(*known.values()))}
        return rows

    def put(self, rid: str, entry: tuple[int, tuple[Any, ...]]) -> None:
        with self._lock:  # (lookups need none: a dict's get is atomic)
            self._put(rid, entry)

    def _put(self, rid: str, entry: tuple[int, tuple[Any, ...]]) -> None:
        self._entries.pop(rid, None)
        while len(self._entries) >= self.size:
            del self._entries[next(iter(self._entries))]
        self._entries[rid] = entry

    def forget(self, rid: str) -> None:
        with self._lock:
            self._entries.pop(rid, None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
        self.built.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def _lighter(self, joined: Reads) -> tuple[Any, ...]:
        """``joined`` without the remembered reads: a hit asks the database
        for the row and the others' columns alone: MariaDB and SQLAlchemy
        pay for every column of a show's SELECT, NULL ones too."""
        key = tuple(joined)
        light = self._light.get(key)
        if light is None:
            light = self._light[key] = tuple(j for j in joined if not _followed(j))
        return light

    def _indexes(self, fields: tuple[str, ...],
                 joined: Reads) -> tuple[list[tuple[list[int], Any]], Any]:
        """Where each remembered read's columns sit in a row (with the
        read), and a row type to rebuild one with them (to_dicts reads rows
        by index and ``id``)."""
        layout = self._layout.get(fields)
        if layout is None:
            index = [([fields.index(label) for label in j.labels], j) for j in joined
                     if _followed(j) and j.labels[0] in fields]
            layout = self._layout[fields] = (index, store.row_type(fields))
        return layout

    def _entry(self, row: Any, joined: Reads) -> tuple[int, tuple[Any, ...]]:
        """The row's revision and each remembered read's value: an
        ``Aggregated`` read's rows decoded, a ``Joined`` one's columns (None:
        no row), each what the read's ``fill`` takes."""
        index, _ = self._indexes(row._fields, joined)
        return row.revision_number, tuple(j.read(row, at) for at, j in index)

    def _merged(self, row: Any, joined: Reads, values: Sequence[Any]) -> Any:
        """The row the whole read would have returned: the light row's
        columns in their places, the remembered values in the others'."""
        places, size, located, row_type = self._rebuild(row._fields, tuple(joined))
        columns: list[Any] = [None] * size
        for at, column in zip(places, row):
            columns[at] = column
        for (at, read), value in zip(located, values):
            if isinstance(read, Aggregated):
                columns[at[0]] = value
            elif value is not None:  # (a Joined read's NULL key: no row)
                columns[at[0]] = row.id
                for i, column in zip(at[1:], value):
                    columns[i] = column
        return row_type(*columns)

    def _rebuild(self, light: tuple[str, ...], joined: tuple[Any, ...]) -> Any:
        """For a light row's fields: where each goes in the whole read's
        row, that row's width, the remembered reads' places and its type."""
        plan = self._plans.get((light, joined))
        if plan is None:
            fields = store.selected_fields(self.table, joined)
            located, row_type = self._indexes(fields, joined)
            plan = self._plans[(light, joined)] = (
                [fields.index(name) for name in light], len(fields), located, row_type)
        return plan


def _followed(read: Any) -> bool:
    return isinstance(read, (Aggregated, Joined)) and read.follows_revision


def _batched(conn: Connection, read: Aggregated | Joined,
             ids: Sequence[str]) -> dict[str, Any]:
    """``read``'s values for these parents, as ``_entry`` keeps them."""
    if isinstance(read, Aggregated):
        return store.batched(conn, read, ids)
    found = store.children(conn, read.table, read.key, ids, (), read.names)
    return {rid: (tuple(rows[0][1:]) if rows else None) for rid, rows in found.items()}
