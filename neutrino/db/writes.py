"""The tables a part of a transaction writes rows to (``tracked``).

A create answers with its new resource read back, each of the resource's
child tables a subquery of that read (``plugins/joined.py``): a port's
addresses, tags, address pairs, DHCP options, groups and trunk, each
planned and run by the database even when it finds nothing. A resource
made in this transaction can have child rows only where this transaction
put them: its id is new, and no other transaction can refer to a row that
is not committed yet. So the read may skip the child tables the create
wrote nothing to (``store.fresh``).

Every INSERT and UPDATE statement object executed on a watched engine
counts, whichever component sends it (DELETEs add no rows). SQL sent as
text is not seen; no create sends any.

The same listener can hold every transaction to a rule the row memo
(``plugins/row_memo.py``) relies on: a write to a child table that
follows its parent's revision (``FOLLOWING``) comes with a new, deleted or
revised row of the parent table (``check_parents``; the test suite turns it
on for every server it starts).

A plain INSERT (``sa.insert(table)`` with its rows as parameters) also
leaves the rows it put, as the database received them (Python-side
defaults included), so the read-back of a new resource can be answered
from them without asking the database (``plugins/store.py``'s
``get_row``). Any other change to a table (an UPDATE, a DELETE, an INSERT
of computed values or one that may skip rows, a statement that failed) and
any savepoint rolled back make what was recorded for it unreliable
(``Written.reliable``).
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Iterator

from sqlalchemy import Engine, Table, event

_WRITTEN: ContextVar["Written | None"] = ContextVar("written", default=None)

# child table -> parent table, for the child tables whose rows change only
# together with their parent's revision (``Aggregated`` or ``Joined`` with
# ``follows_revision=True``, keyed by a foreign key).
FOLLOWING: dict[Table, Table] = {}

CHECK_ENV = "NEUTRINO_CHECK_REVISIONS"
# Set with CHECK_ENV: a row told from a transaction's writes is compared
# with the database's (``store.get_row``), so the suite proves them equal.
checking = False


class Written(set):  # type: ignore[type-arg]
    """The tables written within a ``tracked`` block (the set), and the rows
    its plain INSERTs put into each (``rows``)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[Table, list[dict[str, Any]]] = {}
        self._unsure: set[Table] = set()
        self._running: dict[Table, int] = {}  # statements sent, not yet finished
        self.rolled_back = False  # a savepoint was: recorded rows may be gone
        # (table, key column, key value) -> the columns of a one-to-one row a
        # read inside the block found (None: it found none), such as the
        # QoS binding of the network a new port is on (``joined.note_seen``);
        # and (label, key) -> a computed value read for a new resource
        # (``Computed.note``), such as its network's external flag.
        self.seen: dict[tuple[Any, ...], Any] = {}
        # (table, column) -> (rows indexed, rows by value): a bulk create
        # reads back each of its N items among N rows per table.
        self._index: dict[tuple[Table, str], tuple[int, dict[Any, list[dict[str, Any]]]]] = {}

    def rows_with(self, table: Table, column: str, value: Any) -> list[dict[str, Any]]:
        """The rows put into ``table`` whose ``column`` is ``value``."""
        rows = self.rows.get(table, ())
        indexed, by_value = self._index.get((table, column), (0, {}))
        if indexed != len(rows):
            by_value = {}
            for row in rows:
                by_value.setdefault(row.get(column), []).append(row)
            self._index[(table, column)] = (len(rows), by_value)
        return by_value.get(value, [])

    def reliable(self, table: Table) -> bool:
        """Whether ``rows`` holds every row the block put in ``table`` and
        nothing the block changed since (or a rolled-back savepoint undid)."""
        return (not self.rolled_back and table not in self._unsure
                and not self._running.get(table))


def watch(engine: Engine) -> None:
    event.listen(engine, "before_execute", _record)
    event.listen(engine, "after_execute", _record_rows)
    event.listen(engine, "rollback_savepoint", _savepoint_undone)


def _plain_insert(clauseelement: Any) -> bool:
    """``sa.insert(table)`` whose rows all come as parameters: each row it
    is given is a row it puts."""
    return (getattr(clauseelement, "is_insert", False) and not clauseelement._values
            and not clauseelement._multi_values and clauseelement.select is None
            and not clauseelement._prefixes and clauseelement._post_values_clause is None)


def _record(conn: Any, clauseelement: Any, *args: Any) -> None:
    written = _WRITTEN.get()
    if written is None or not getattr(clauseelement, "is_dml", False):
        return
    table = clauseelement.table
    if not getattr(clauseelement, "is_delete", False):
        written.add(table)
    if _plain_insert(clauseelement):
        written._running[table] = written._running.get(table, 0) + 1
    else:
        written._unsure.add(table)


def _record_rows(conn: Any, clauseelement: Any, multiparams: Any, params: Any,
                 execution_options: Any, result: Any) -> None:
    written = _WRITTEN.get()
    if written is None or not _plain_insert(clauseelement):
        return
    table = clauseelement.table
    written._running[table] -= 1
    written.rows.setdefault(table, []).extend(
        dict(row) for row in result.context.compiled_parameters)


def _savepoint_undone(conn: Any, *args: Any) -> None:
    written = _WRITTEN.get()
    if written is not None:
        written.rolled_back = True


def current() -> Written | None:
    """The innermost ``tracked`` block's record, if one is running."""
    return _WRITTEN.get()


@contextmanager
def tracked() -> Iterator[Written]:
    """The tables written within the block (filled as it runs)."""
    written = Written()
    token = _WRITTEN.set(written)
    try:
        yield written
    finally:
        _WRITTEN.reset(token)


class ParentNotWritten(AssertionError):
    """A transaction changed a child table's rows and not its parent's."""


def check_parents(engine: Engine) -> None:
    """Refuse to commit a transaction that wrote to a ``FOLLOWING`` child
    table without creating, deleting or advancing the revision of a row of
    its parent table (a revision left behind)."""
    event.listen(engine, "before_execute", _note_write)
    event.listen(engine, "commit", _check_commit)
    event.listen(engine, "rollback", lambda conn: conn.info.pop("written_tables", None))


def _note_write(conn: Any, clauseelement: Any, multiparams: Any, params: Any,
                execution_options: Any) -> None:
    """A table counts as written by an INSERT or DELETE, and by an UPDATE
    that advances its ``revision_number`` (a status alone does not); a
    ``FOLLOWING`` child table by any UPDATE too (a port's binding has no
    revision of its own)."""
    if not getattr(clauseelement, "is_dml", False):
        return
    if getattr(clauseelement, "is_update", False) and clauseelement.table not in FOLLOWING:
        columns = {getattr(c, "key", c) for c in (clauseelement._values or ())}
        for given in (params or {}, *(multiparams or ())):
            columns.update(given if isinstance(given, dict) else ())
        if "revision_number" not in columns:
            return
    conn.info.setdefault("written_tables", set()).add(clauseelement.table)


def _check_commit(conn: Any) -> None:
    written = conn.info.pop("written_tables", set())
    for child, parent in FOLLOWING.items():
        if child in written and parent not in written:
            # Nothing of it may stay: the pool does not roll back on return.
            conn.connection.dbapi_connection.rollback()
            raise ParentNotWritten(f"a transaction wrote {child.name} but not {parent.name}: "
                                   f"the {parent.name} row's revision_number must advance")
