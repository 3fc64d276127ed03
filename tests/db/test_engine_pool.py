"""The connection pool on server databases: one round trip per checkout for
the liveness ping, none to reset a connection whose transaction has ended."""
from __future__ import annotations

import datetime as dt
from typing import Iterator

import pytest
import sqlalchemy as sa

from neutrino.db import tables as t
from neutrino.db.engine import Database

# SQLite's engine has no server round trips to save: the server databases only.
pytestmark = pytest.mark.parametrize("db_url", ["postgresql", "mariadb"], indirect=True)


@pytest.fixture
def db(db_url: str) -> Iterator[Database]:
    database = Database(db_url)
    yield database
    database.dispose()


def test_a_returned_connection_is_not_rolled_back_again(db: Database) -> None:
    resets: list[object] = []
    dialect = db.engine.dialect
    rollback = dialect.do_rollback

    def counted(dbapi_connection: object) -> None:
        resets.append(dbapi_connection)
        rollback(dbapi_connection)
    dialect.do_rollback = counted  # type: ignore[method-assign]
    with db.reader() as conn:  # the first connect's own set-up rolls back once
        conn.execute(sa.select(t.networks.c.id)).all()
    resets.clear()
    with db.reader() as conn:
        conn.execute(sa.select(t.networks.c.id)).all()
    with db.writer() as conn:
        conn.execute(sa.select(t.networks.c.id)).all()
    assert resets == []


def test_an_unfinished_transaction_is_still_rolled_back_on_close(db: Database) -> None:
    with db.engine.connect() as conn:  # autobegins, never committed
        conn.execute(sa.insert(t.networks).values(
            id="5a3e7c1e-0000-4000-8000-000000000001", project_id="p", name="left",
            status="ACTIVE", admin_state_up=True, mtu=1500,
            created_at=dt.datetime(2026, 1, 1), updated_at=dt.datetime(2026, 1, 1)))
    with db.reader() as conn:
        assert conn.execute(sa.select(t.networks.c.id)).all() == []
