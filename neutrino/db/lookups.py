"""Single-value reads that one write makes anyway, sent in one round trip.

A network create asks, at three points of its transaction and from three
components, for one value each: its project's quota limit (the quota
engine), default QoS policy (the QoS driver) and default security group
(the security groups driver). On a server database each is a round trip
and a statement's worth of driver work for a single value.

Each of those reads is a statement built once whose parameters are the
project (and the resource). The core names, for each create, the reads its
components will make (``together``); the first of them asked for reads all
of them as scalar subqueries of one SELECT, and the others are then served
from that row. Each is served once: a component that writes what it read
(the default group it has just made) reads it again from the database, as
does any read asked with other parameters or outside the block. The values
come from the same transaction as the reads they replace, only earlier; a
write that races them is caught as it was (the default group's key on its
project makes the loser rerun).
"""
from __future__ import annotations

import functools
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Sequence

import sqlalchemy as sa
from sqlalchemy import Connection
from sqlalchemy.sql import Select


@dataclass
class _Batch:
    conn: Connection
    reads: tuple[Select[Any], ...]
    params: Mapping[str, Any]
    pending: set[Select[Any]] = field(default_factory=set)
    values: dict[Select[Any], Any] | None = None

    def serves(self, conn: Connection, stmt: Select[Any], params: Mapping[str, Any]) -> bool:
        return (conn is self.conn and stmt in self.pending
                and all(self.params.get(k, self) == v for k, v in params.items()))

    def take(self, stmt: Select[Any]) -> Any:
        if self.values is None:
            row = self.conn.execute(_combined(self.reads), dict(self.params)).one()
            self.values = dict(zip(self.reads, row))
        self.pending.discard(stmt)
        return self.values[stmt]


_BATCH: ContextVar[_Batch | None] = ContextVar("lookups", default=None)


@functools.cache
def _combined(reads: tuple[Select[Any], ...]) -> Select[Any]:
    """One SELECT of every read as a scalar subquery, built once per set.
    The reads share their parameters' names, so each name is bound once."""
    return sa.select(*(stmt.scalar_subquery() for stmt in reads))


@contextmanager
def together(conn: Connection, reads: Sequence[Select[Any]],
             params: Mapping[str, Any]) -> Iterator[None]:
    """Within the block, ``scalar`` serves ``reads`` asked on ``conn`` with
    ``params`` (or a subset of them) from one SELECT, each once."""
    reads = tuple(dict.fromkeys(reads))
    if len(reads) < 2:  # nothing to save: the read goes as it is
        yield
        return
    token = _BATCH.set(_Batch(conn, reads, params, set(reads)))
    try:
        yield
    finally:
        _BATCH.reset(token)


def scalar(conn: Connection, stmt: Select[Any], params: Mapping[str, Any]) -> Any:
    """The single value ``stmt`` selects (None without a row)."""
    batch = _BATCH.get()
    if batch is not None and batch.serves(conn, stmt, params):
        return batch.take(stmt)
    return conn.execute(stmt, params).scalar()
