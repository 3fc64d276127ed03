"""One-to-one attribute tables read with their resource's own row.

A port's binding, its port_security flag and its QoS policies each live in
a table of their own, owned by the driver that defines the attribute. Read
one by one they cost a round trip each on every show, update and list;
declared as ``Joined`` they ride along on the resource's SELECT as LEFT
OUTER JOINs, and the owning driver fills its attribute from the row.

A driver still owns the whole attribute: ``fill`` is its code, and its
``extend`` reads the table itself for any item that did not come with the
joined columns (dicts built from rows read elsewhere).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import sqlalchemy as sa
from sqlalchemy import Table

# fill(item, values): values are the declared columns' values in order, or
# None when the resource has no row in the table.
Fill = Callable[[dict[str, Any], "tuple[Any, ...] | None"], None]


class Joined:
    """``table`` joined on ``table.key == resource.parent_column``."""

    def __init__(self, table: Table, key: str, columns: Sequence[str], fill: Fill,
                 parent_column: str = "id") -> None:
        self.table, self.key, self.parent_column = table, key, parent_column
        self.fill = fill
        # The key first: NULL there means no row, whatever the columns hold.
        self.labels = [f"{table.name}__{c}" for c in (key, *columns)]
        self.columns = [table.c[c].label(label)
                        for c, label in zip((key, *columns), self.labels)]

    def join(self, parent: Table, source: Any) -> Any:
        return source.outerjoin(self.table,
                                self.table.c[self.key] == parent.c[self.parent_column])


def select(table: Table, joined: Sequence[Joined]) -> Any:
    """``SELECT table.*, <joined columns> FROM table LEFT OUTER JOIN ...``."""
    if not joined:
        return sa.select(table)
    source: Any = table
    for j in joined:
        source = j.join(table, source)
    return sa.select(table, *[c for j in joined for c in j.columns]).select_from(source)


def filler(fields: Sequence[str], joined: Sequence[Joined]) -> Callable[[dict[str, Any], Any], None]:
    """A function that fills an item from its row, for rows with ``fields``;
    a no-op for rows read without the joins."""
    plan = [(j.fill, [fields.index(label) for label in j.labels])
            for j in joined if j.labels[0] in fields]
    if not plan:
        return lambda item, row: None

    def fill(item: dict[str, Any], row: Any) -> None:
        for fn, index in plan:
            fn(item, None if row[index[0]] is None else tuple(row[i] for i in index[1:]))
    return fill


def missing(items: list[dict[str, Any]], attribute: str) -> list[dict[str, Any]]:
    """The items a driver's ``extend`` must still read for ``attribute``
    (the list itself when it is all of them: a page keeps its id query)."""
    todo = [i for i in items if attribute not in i]
    return items if len(todo) == len(items) else todo
