"""Pooled connections are pinged only after sitting idle: one the server
dropped meanwhile is replaced unseen, a hot one costs no round trip, and a
write that meets a connection lost within the idle window reruns."""
from __future__ import annotations

import time
from typing import Any, Iterator

import pytest
import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from neutrino.db import engine as engine_mod
from neutrino.db.engine import Database, retrying

# SQLite has no server to drop a connection.
pytestmark = pytest.mark.parametrize(
    "empty_db_url", ["postgresql", "mariadb", "mariadb-pymysql"], indirect=True)


@pytest.fixture
def db(empty_db_url: str) -> Iterator[Database]:
    database = Database(empty_db_url)
    try:
        yield database
    finally:
        database.dispose()


def _server_id(conn: Any) -> int:
    if conn.dialect.name == "postgresql":
        return int(conn.execute(sa.text("SELECT pg_backend_pid()")).scalar())
    return int(conn.execute(sa.text("SELECT CONNECTION_ID()")).scalar())


def _kill(db: Database, server_id: int) -> None:
    """Drop a pooled connection from the server's side, as a restart or
    ``wait_timeout`` would."""
    other = sa.create_engine(db.url, poolclass=NullPool, isolation_level="AUTOCOMMIT")
    try:
        with other.connect() as admin:
            if admin.dialect.name == "postgresql":
                admin.execute(sa.text("SELECT pg_terminate_backend(:p)"), {"p": server_id})
            else:
                admin.execute(sa.text(f"KILL {int(server_id)}"))
    finally:
        other.dispose()
    time.sleep(0.1)  # the server closes it


def _pooled_id(db: Database, write: bool = False) -> int:
    """A pooled connection's server id: a reader's, or with ``write`` a writer's
    (the two check out of pools of their own)."""
    with (db.writer() if write else db.reader()) as conn:
        return _server_id(conn)


def _counting_pings(db: Database) -> list[int]:
    pings: list[int] = []
    for engine in db.engines:
        def counted(dbapi_conn: Any, ping: Any = engine.dialect.do_ping) -> Any:
            pings.append(1)
            return ping(dbapi_conn)
        engine.dialect.do_ping = counted  # type: ignore[method-assign]
    return pings


BOTH_POOLS = pytest.mark.parametrize("write", [False, True], ids=["reads", "writes"])


@BOTH_POOLS
def test_a_connection_used_a_moment_ago_is_not_pinged(db: Database, write: bool) -> None:
    _pooled_id(db, write)
    pings = _counting_pings(db)
    for _ in range(5):
        _pooled_id(db, write)
    assert pings == []


@BOTH_POOLS
def test_an_idle_connection_the_server_dropped_is_replaced(
        db: Database, monkeypatch: pytest.MonkeyPatch, write: bool) -> None:
    monkeypatch.setattr(engine_mod, "PING_AFTER_IDLE", 0.2)
    first = _pooled_id(db, write)
    _kill(db, first)
    pings = _counting_pings(db)
    time.sleep(0.3)
    assert _pooled_id(db, write) != first  # no error: the ping found it dead
    assert pings == [1]


def test_a_write_on_a_connection_lost_within_the_idle_window_reruns(db: Database) -> None:
    first = _pooled_id(db, write=True)
    _kill(db, first)
    attempts: list[int] = []

    @retrying
    def write() -> int:
        with db.writer() as conn:
            attempts.append(1)
            return _server_id(conn)
    assert write() != first
    assert len(attempts) == 2
