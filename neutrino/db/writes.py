"""The tables a part of a transaction writes rows to (``tracked``).

A create answers with its new resource read back, each of the resource's
child tables a subquery of that read (``plugins/joined.py``): a port's
addresses, tags, address pairs, DHCP options, groups and trunk, about
50 us each on MariaDB. A resource made in this transaction can have child
rows only where this transaction put them: its id is new, and no other
transaction can refer to a row that is not committed yet. So the read may
skip the child tables the create wrote nothing to (``store.fresh``).

Every INSERT and UPDATE statement object executed on a watched engine
counts, whichever component sends it (DELETEs add no rows). SQL sent as
text is not seen; no create sends any.
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Iterator

from sqlalchemy import Engine, Table, event

_WRITTEN: ContextVar[set[Table] | None] = ContextVar("written", default=None)


def watch(engine: Engine) -> None:
    event.listen(engine, "before_execute", _record)


def _record(conn: Any, clauseelement: Any, *args: Any) -> None:
    written = _WRITTEN.get()
    if written is not None and (getattr(clauseelement, "is_insert", False)
                                or getattr(clauseelement, "is_update", False)):
        written.add(clauseelement.table)


@contextmanager
def tracked() -> Iterator[set[Table]]:
    """The tables written within the block (filled as it runs)."""
    written: set[Table] = set()
    token = _WRITTEN.set(written)
    try:
        yield written
    finally:
        _WRITTEN.reset(token)
