"""The connection pool on server databases: one round trip per checkout for
the liveness ping, none to reset a connection whose transaction has ended."""
from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa

from neutrino.db import tables as t
from neutrino.db.engine import Database


def test_a_returned_connection_is_not_rolled_back_again(db_url: str) -> None:
    if db_url.startswith("sqlite"):
        pytest.skip("SQLite's engine has no server round trips to save")
    db = Database(db_url)
    resets: list[object] = []
    dialect = db.engine.dialect
    rollback = dialect.do_rollback

    def counted(dbapi_connection: object) -> None:
        resets.append(dbapi_connection)
        rollback(dbapi_connection)
    dialect.do_rollback = counted  # type: ignore[method-assign]
    try:
        with db.reader() as conn:  # the first connect's own set-up rolls back once
            conn.execute(sa.select(t.networks.c.id)).all()
        resets.clear()
        with db.reader() as conn:
            conn.execute(sa.select(t.networks.c.id)).all()
        with db.writer() as conn:
            conn.execute(sa.select(t.networks.c.id)).all()
        assert resets == []
    finally:
        db.dispose()


def test_an_unfinished_transaction_is_still_rolled_back_on_close(db_url: str) -> None:
    if db_url.startswith("sqlite"):
        pytest.skip("SQLite's engine has no server round trips to save")
    db = Database(db_url)
    try:
        with db.engine.connect() as conn:  # autobegins, never committed
            conn.execute(sa.insert(t.networks).values(
                id="5a3e7c1e-0000-4000-8000-000000000001", project_id="p", name="left",
                status="ACTIVE", admin_state_up=True, mtu=1500,
                created_at=dt.datetime(2026, 1, 1), updated_at=dt.datetime(2026, 1, 1)))
        with db.reader() as conn:
            assert conn.execute(sa.select(t.networks.c.id)).all() == []
    finally:
        db.dispose()
