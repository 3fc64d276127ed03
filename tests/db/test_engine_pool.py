"""The connection pool on server databases: one round trip per checkout for
the liveness ping, none to reset a connection whose transaction has ended."""
from __future__ import annotations

import pytest
import sqlalchemy as sa

from neutrino.db import tables as t
from neutrino.db.engine import Database
from tests.db.rows import network_row

# SQLite's engine has no server round trips to save: the server databases only.
pytestmark = pytest.mark.parametrize("db_url", ["postgresql", "mariadb"], indirect=True)


def test_a_returned_connection_is_not_rolled_back_again(db: Database) -> None:
    resets: list[object] = []
    for engine in db.engines:
        dialect = engine.dialect

        def counted(dbapi_connection: object, rollback=dialect.do_rollback,
                    dialect=dialect) -> None:
            if not dialect.detect_autocommit_setting(dbapi_connection):
                resets.append(dbapi_connection)  # a ROLLBACK the server receives
            rollback(dbapi_connection)
        dialect.do_rollback = counted  # type: ignore[method-assign]
    # The first connect's own set-up rolls back once per engine.
    with db.reader() as conn:
        conn.execute(sa.select(t.networks.c.id)).all()
    with db.writer() as conn:
        conn.execute(sa.select(t.networks.c.id)).all()
    resets.clear()
    with db.reader() as conn:
        conn.execute(sa.select(t.networks.c.id)).all()
    with db.writer() as conn:
        conn.execute(sa.select(t.networks.c.id)).all()
    assert resets == []


def test_a_read_is_its_statement_alone(db: Database) -> None:
    """No BEGIN, COMMIT or ROLLBACK around a read: under READ COMMITTED
    they bought nothing, and each was a round trip."""
    with db.reader() as conn:
        conn.execute(sa.select(t.networks.c.id)).all()
    sent: list[str] = []
    ends: list[str] = []
    sa.event.listen(db.read_engine, "before_cursor_execute",
                    lambda _c, _cur, statement, *_a: sent.append(statement))
    dialect = db.read_engine.dialect
    dbapi_ends = {"commit": dialect.do_commit, "rollback": dialect.do_rollback}
    for name, end in dbapi_ends.items():
        def recorded(dbapi_connection: object, name: str = name, end=end) -> None:
            if not dialect.detect_autocommit_setting(dbapi_connection):
                ends.append(name)  # a real COMMIT or ROLLBACK went to the server
            end(dbapi_connection)
        setattr(dialect, f"do_{name}", recorded)
    with db.reader() as conn:
        conn.execute(sa.select(t.networks.c.id)).all()
    assert len(sent) == 1 and sent[0].lstrip().upper().startswith("SELECT")
    assert ends == []


def test_an_unfinished_transaction_is_still_rolled_back_on_close(db: Database) -> None:
    with db.engine.connect() as conn:  # autobegins, never committed
        conn.execute(sa.insert(t.networks).values(**network_row("left")))
    with db.reader() as conn:
        assert conn.execute(sa.select(t.networks.c.id)).all() == []
