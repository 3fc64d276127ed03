"""``Database.reads_together``: a request's reads share one transaction, and
sharing never hides a write or outlives a failed statement, on every backend."""
from __future__ import annotations

import pytest
import sqlalchemy as sa

from neutrino.db import tables as t
from neutrino.db.engine import Database
from tests.db.rows import network_row
from tests.sql_events import listen_all


def _names(conn: sa.Connection) -> list[str]:
    return sorted(conn.execute(sa.select(t.networks.c.name)).scalars())


def _checkouts(db: Database) -> list[object]:
    seen: list[object] = []
    listen_all(db, "checkout", lambda *a: seen.append(a[0]))
    return seen


def test_reads_in_a_block_share_one_connection_and_transaction(db: Database) -> None:
    checkouts = _checkouts(db)
    with db.reads_together():
        with db.reader() as first:
            _names(first)
        with db.reader() as second, db.reader() as nested:
            assert second is first and nested is first
            _names(second)
    assert len(checkouts) == 1
    with db.reader() as after:  # outside the block: a transaction of its own
        assert after is not first


def test_reads_after_a_write_in_the_block_see_the_write(db: Database) -> None:
    with db.reads_together():
        with db.reader() as conn:
            assert _names(conn) == []  # SQLite takes its snapshot here
        with db.writer() as conn:
            conn.execute(sa.insert(t.networks).values(**network_row("written")))
        with db.reader() as conn:
            assert _names(conn) == ["written"]


def test_a_write_inside_an_open_read_waits_for_it_to_end(db: Database) -> None:
    with db.reads_together():
        with db.reader() as outer:
            _names(outer)
            with db.writer() as conn:
                conn.execute(sa.insert(t.networks).values(**network_row("inside")))
            _names(outer)  # still usable: the write did not close it under us
        with db.reader() as conn:
            assert conn is not outer
            assert _names(conn) == ["inside"]


def test_a_failed_read_ends_the_shared_transaction_so_later_reads_work(db: Database) -> None:
    with db.reads_together():
        with pytest.raises(sa.exc.DBAPIError):
            with db.reader() as conn:
                conn.execute(sa.text("SELECT no_such_column FROM networks"))
        with db.reader() as conn:  # PostgreSQL would refuse an aborted transaction
            assert _names(conn) == []
