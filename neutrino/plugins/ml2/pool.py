"""A pool of segmentation ids in one allocation table, shared by all servers.

Every id of the configured ranges has a row (free or allocated); an id taken
outside the ranges gets an allocated row that disappears when released.
Taking an id is a conditional ``UPDATE ... WHERE allocated = false``: when
it changes no row, another server took the id first and the whole API
operation is rerun (``RetryRequest``), so no id is ever handed out twice and
no lock is held while choosing.

What a process believes is free (a random guess, the candidates it read
last) only decides which id it tries first; the conditional UPDATE decides
whether it gets it.
"""
from __future__ import annotations

import random
import weakref
from typing import Any, Iterable, Iterator

import sqlalchemy as sa
from sqlalchemy import Connection, Table

from neutrino.db import pipeline
from neutrino.db.engine import RetryRequest
from neutrino.plugins.ml2 import ranges as r

# Free candidates read per allocation; one is picked at random among them
# so that concurrent servers rarely go for the same row.
SELECT_SIZE = 50
INSERT_BATCH = 5000

Key = tuple[Any, int]  # (scope or None, id)


class IdPool:
    """Ids in ``table.<id_col>``, optionally scoped (VLANs by physical network)."""

    def __init__(self, table: Table, id_col: str, scope_col: str | None = None) -> None:
        self.table = table
        self.id = table.c[id_col]
        self.scope = table.c[scope_col] if scope_col else None
        self.allocated = table.c.allocated
        # Each create of a network takes an id: its statements are built here,
        # once, since building them costs more than running them.
        key = self._key(sa.bindparam("scope"), sa.bindparam("ident"))
        cols = [self.scope, self.id] if self.scope is not None else [self.id]
        free = sa.select(*cols).where(self.allocated.is_(False)).limit(SELECT_SIZE)
        self._free = free
        self._free_in = (free.where(self.scope == sa.bindparam("scope"))
                         if self.scope is not None else free)
        self._take = (sa.update(self.table).where(key, self.allocated.is_(False))
                      .values(allocated=True))
        self._free_one = sa.update(self.table).where(key).values(allocated=False)
        self._forget = sa.delete(self.table).where(key)
        # The free candidates left over from this process's last read, by
        # the scope it was made for: tried before guessing again, so a pool
        # whose ids are mostly taken reads its free ids once per
        # SELECT_SIZE allocations instead of once per allocation.
        self._hints: dict[Any, list[Key]] = {}
        # A first try sent ahead (``ahead``), by the transaction's connection:
        # (scope, key, its row count to come).
        self._early: weakref.WeakKeyDictionary[Connection, tuple[Any, Key, pipeline.Ahead]] = (
            weakref.WeakKeyDictionary())

    def _key(self, scope: Any, ident: Any) -> Any:
        clause = self.id == ident
        if self.scope is not None:
            clause = sa.and_(self.scope == scope, clause)
        return clause

    def _params(self, scope: Any, ident: int) -> dict[str, Any]:
        return {"scope": scope, "ident": ident} if self.scope is not None else {"ident": ident}

    def _row(self, scope: Any, ident: int, allocated: bool) -> dict[str, Any]:
        row = {self.id.key: ident, "allocated": allocated}
        if self.scope is not None:
            row[self.scope.key] = scope
        return row

    # -- start-up -------------------------------------------------------------

    def sync(self, conn: Connection, wanted: dict[Any, list[r.Range]]) -> None:
        """Rows for every wanted id; free rows outside the ranges dropped.

        Allocated rows always stay: their networks still use them. Wanted
        ranges that are already complete cost one COUNT each, so a restart
        with unchanged ranges does not read the pool.
        """
        merged = {scope: r.merge(rs) for scope, rs in wanted.items()}
        self._drop_free_outside(conn, merged)
        for scope, rs in merged.items():
            for lo, hi in rs:
                self._fill(conn, scope, lo, hi)

    def _in_range(self, scope: Any, lo: int, hi: int) -> Any:
        clause = self.id.between(lo, hi)
        if self.scope is not None:
            clause = sa.and_(self.scope == scope, clause)
        return clause

    def _drop_free_outside(self, conn: Connection, merged: dict[Any, list[r.Range]]) -> None:
        keep = [self._in_range(s, lo, hi) for s, rs in merged.items() for lo, hi in rs]
        stmt = sa.delete(self.table).where(self.allocated.is_(False))
        if keep:
            stmt = stmt.where(sa.not_(sa.or_(*keep)))
        conn.execute(stmt)

    def _fill(self, conn: Connection, scope: Any, lo: int, hi: int) -> None:
        where = self._in_range(scope, lo, hi)
        present = conn.execute(sa.select(sa.func.count()).select_from(self.table)
                               .where(where)).scalar_one()
        if present == hi - lo + 1:
            return
        if self._fill_in_sql(conn, scope, lo, hi):
            return
        existing = set(conn.execute(sa.select(self.id).where(where)).scalars()) if present else set()
        missing = (i for i in range(lo, hi + 1) if i not in existing)
        for batch in _batches(missing, INSERT_BATCH):
            conn.execute(sa.insert(self.table), [self._row(scope, i, False) for i in batch])

    def _fill_in_sql(self, conn: Connection, scope: Any, lo: int, hi: int) -> bool:
        """Insert the missing ids with one INSERT ... SELECT from a number
        series generated by the server (PostgreSQL ``generate_series``,
        MariaDB's sequence engine): no row travels over the wire, and rows a
        concurrent sync inserted are skipped instead of failing."""
        dialect = conn.dialect
        series: Any = None
        if dialect.name == "postgresql":
            number = sa.func.generate_series(sa.literal(lo, sa.BigInteger),
                                             sa.literal(hi, sa.BigInteger)).column_valued("n")
            # (the column brings its FROM clause)
        elif dialect.name == "mysql" and getattr(dialect, "is_mariadb", False):
            series = sa.table(f"seq_{lo}_to_{hi}", sa.column("seq"))
            number = series.c.seq
        else:
            return False
        cols = [self.id.key, "allocated"]
        values: list[Any] = [number, sa.false()]
        if self.scope is not None:
            cols.insert(0, self.scope.key)
            values.insert(0, sa.literal(scope, self.scope.type))
        select = sa.select(*values)
        if series is not None:
            select = select.select_from(series)
        if dialect.name == "postgresql":
            # deferred: PostgreSQL's dialect (22 modules) is loaded only where the engine uses it
            from sqlalchemy.dialects.postgresql import insert as pg_insert
            conn.execute(pg_insert(self.table).from_select(cols, select)
                         .on_conflict_do_nothing())
        else:
            conn.execute(sa.insert(self.table).prefix_with("IGNORE").from_select(cols, select))
        return True

    # -- requests -------------------------------------------------------------

    def ahead(self, conn: Connection, scope: Any = None,
              guess_in: dict[Any, list[r.Range]] | None = None) -> None:
        """Send the next ``allocate``'s first try on ``conn`` with the
        transaction's next round trip (``db/pipeline.py``), for a caller
        that reads something else first: a network's quota check carries
        its segment id's UPDATE. That ``allocate`` (same scope) must follow
        in the transaction; it takes the id if the try got it."""
        key = self._hint(scope)
        if key is None:
            key = _random_in(guess_in or {})
        if key is not None:
            self._early[conn] = (scope, key, pipeline.ahead(conn, self._take, self._params(*key)))

    def allocate(self, conn: Connection, scope: Any = None,
                 guess_in: dict[Any, list[r.Range]] | None = None) -> Key | None:
        """Take a free id (in ``scope`` when given); None when none is free.

        The first try is the one sent ahead, if any (when it missed, the
        free ids are read next); else a candidate left
        over from this process's last read of free ids, else, with
        ``guess_in`` (configured ranges by scope, as ``sync`` takes them, so
        all their ids have rows), one key at random from them: while most
        of the pool is free it is free, and taking it is the one
        conditional UPDATE of the allocation. A missed try costs one
        statement more than reading first; a missed leftover drops the
        others, which another server is likely taking too.
        """
        early = self._early.pop(conn, None)
        if early is not None and early[0] != scope:  # not asked for after all
            if early[2].rowcount == 1:
                self.release(conn, *early[1], in_ranges=True)
            early = None
        if early is not None:  # the first try: taken, or read the free ids
            if early[2].rowcount == 1:
                return early[1]
            self._hints.pop(scope, None)
        else:
            hint = self._hint(scope)
            if hint is not None:
                if self._try(conn, hint):
                    return hint
                self._hints.pop(scope, None)
            guess = _random_in(guess_in or {})
            if guess is not None and self._try(conn, guess):
                return guess
        if scope is not None and self.scope is not None:
            candidates = conn.execute(self._free_in, {"scope": scope}).all()
        else:
            candidates = conn.execute(self._free).all()
        if not candidates:
            return None
        keys: list[Key] = [(c[0], c[1]) if self.scope is not None else (None, c[0])
                           for c in candidates]
        random.shuffle(keys)
        key = keys.pop()
        if not self._try(conn, key):
            raise RetryRequest(f"{self.table.name}: {key} taken concurrently")
        self._hints[scope] = keys
        return key

    def allocate_in(self, conn: Connection, wanted: dict[Any, list[r.Range]]) -> Key | None:
        """Take a free id of ``wanted`` (ranges by scope, all of whose ids
        have rows); None when none is free. One key drawn at random from
        them is tried first (while most are free, that conditional UPDATE is
        the whole allocation); else one of the free ones read is taken, and
        missing it reruns the operation, as ``allocate`` does."""
        guess = _random_in(wanted)
        if guess is None:
            return None
        if self._try(conn, guess):
            return guess
        inside = [self._in_range(scope, lo, hi) for scope, rs in wanted.items()
                  for lo, hi in rs]
        cols = [self.scope, self.id] if self.scope is not None else [self.id]
        rows = conn.execute(sa.select(*cols).where(self.allocated.is_(False), sa.or_(*inside))
                            .limit(SELECT_SIZE)).all()
        if not rows:
            return None
        row = random.choice(rows)
        key: Key = (row[0], row[1]) if self.scope is not None else (None, row[0])
        if not self._try(conn, key):
            raise RetryRequest(f"{self.table.name}: {key} taken concurrently")
        return key

    def _hint(self, scope: Any) -> Key | None:
        try:
            return self._hints[scope].pop()  # (atomic: threads share the pool)
        except (KeyError, IndexError):
            return None

    def _try(self, conn: Connection, key: Key) -> bool:
        return conn.execute(self._take, self._params(*key)).rowcount == 1

    def reserve(self, conn: Connection, scope: Any, ident: int) -> bool:
        """Take exactly this id, also outside the ranges; False when in use.

        Two servers inserting the same off-range id collide on the primary
        key; that violation reruns the operation, which then sees the row.
        """
        if self._try(conn, (scope, ident)):
            return True
        if conn.execute(sa.select(self.allocated).where(self._key(scope, ident))).first():
            return False
        conn.execute(sa.insert(self.table).values(**self._row(scope, ident, True)))
        return True

    def release(self, conn: Connection, scope: Any, ident: int, in_ranges: bool) -> None:
        """Back to free inside the ranges; forgotten outside them."""
        conn.execute(self._free_one if in_ranges else self._forget, self._params(scope, ident))


def _random_in(ranges: dict[Any, list[r.Range]]) -> Key | None:
    """A key drawn uniformly from the ranges' ids, None when there are none."""
    total = sum(hi - lo + 1 for rs in ranges.values() for lo, hi in rs)
    if not total:
        return None
    n = random.randrange(total)
    for scope, rs in ranges.items():
        for lo, hi in rs:
            if n <= hi - lo:
                return scope, lo + n
            n -= hi - lo + 1
    raise AssertionError("unreachable: n < total")


def _batches(items: Iterable[int], size: int) -> Iterator[list[int]]:
    batch: list[int] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
