"""The whole-operation retry: what counts as a lost race, and that real lost
races on each backend (deadlocks, even inside savepoints) are rerun."""
from __future__ import annotations

import threading
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from neutrino.db import engine as db_engine
from neutrino.db import tables as t
from neutrino.db.engine import Database, RetryRequest, is_retriable, retrying
from neutrino.plugins import store


def _dbapi_error(orig: Exception, cls: type = sa_exc.OperationalError) -> sa_exc.DBAPIError:
    return cls("SQL", {}, orig)


class _PgError(Exception):
    def __init__(self, sqlstate: str) -> None:
        super().__init__(f"sqlstate {sqlstate}")
        self.sqlstate = sqlstate


def test_retry_request_is_retriable() -> None:
    assert is_retriable(RetryRequest())


def test_ordinary_errors_are_not_retriable() -> None:
    assert not is_retriable(ValueError("boom"))
    assert not is_retriable(_dbapi_error(Exception("syntax error at or near")))


@pytest.mark.parametrize("state", ["40001", "40P01", "23505", "23503"])
def test_postgresql_lost_race_states_are_retriable(state: str) -> None:
    assert is_retriable(_dbapi_error(_PgError(state)))


def test_postgresql_other_states_are_not_retriable() -> None:
    assert not is_retriable(_dbapi_error(_PgError("22001")))  # value too long


class _MySQLdbError(Exception):
    """What mysqlclient raises: the error number first, as PyMySQL."""


_MySQLdbError.__module__ = "MySQLdb._exceptions"


@pytest.mark.parametrize("code", [1062, 1213, 1205])
def test_mysqlclient_lost_races_are_retriable_as_pymysqls(code: int) -> None:
    """An operator may name mysqlclient in ``[database] connection``
    (``mysql://``): a duplicate key it reports is a lost race too."""
    assert is_retriable(_dbapi_error(_MySQLdbError(code, "Duplicate entry"),
                                     sa_exc.IntegrityError))
    assert not is_retriable(_dbapi_error(_MySQLdbError(1064, "You have an error")))


@pytest.mark.parametrize("code", [1047, 1180])
def test_galera_refusals_are_retriable(code: int) -> None:
    """1047: a node outside the primary component ("WSREP has not yet
    prepared node for application use"); 1180: a commit that failed."""
    assert is_retriable(_dbapi_error(_MySQLdbError(code, "WSREP"), sa_exc.InternalError))


def test_galera_certification_failure_is_retriable() -> None:
    """Galera's loser of a certification conflict: a deadlock, by its text too."""
    assert is_retriable(_dbapi_error(Exception(
        "(1213, 'Deadlock found when trying to get lock; try restarting transaction')")))
    assert is_retriable(_dbapi_error(Exception(
        "WSREP detected deadlock/conflict and aborted the transaction. "
        "Try restarting the transaction")))


def test_galera_node_not_ready_is_retriable_by_its_text() -> None:
    """Without the driver's number (the error is another one's context, or
    a SQL proxy reworded it) the text still says the node will be back."""
    assert is_retriable(_dbapi_error(Exception(
        "WSREP has not yet prepared node for application use")))


def test_sqlite_busy_is_retriable() -> None:
    assert is_retriable(_dbapi_error(Exception("database is locked")))


def test_lost_race_found_in_the_exception_chain() -> None:
    """MariaDB: the deadlock is only the context of a failed savepoint rollback."""
    deadlock = _dbapi_error(Exception("Deadlock found when trying to get lock"))
    try:
        try:
            raise deadlock
        except sa_exc.OperationalError:
            raise _dbapi_error(Exception("SAVEPOINT sa_savepoint_1 does not exist"))
    except sa_exc.OperationalError as exc:
        assert is_retriable(exc)


def test_retrying_reruns_until_success() -> None:
    calls = []

    @retrying
    def op() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise RetryRequest()
        return "done"
    assert op() == "done"
    assert len(calls) == 3


def test_retrying_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(db_engine.time, "sleep", lambda _s: None)
    calls = []

    @retrying
    def op() -> None:
        calls.append(1)
        raise RetryRequest()
    with pytest.raises(RetryRequest):
        op()
    assert len(calls) == db_engine.MAX_RETRIES


def test_retrying_does_not_rerun_other_errors() -> None:
    calls = []

    @retrying
    def op() -> None:
        calls.append(1)
        raise KeyError("x")
    with pytest.raises(KeyError):
        op()
    assert calls == [1]


# -- on real databases -----------------------------------------------------------

def _network(conn: Any, name: str) -> str:
    row = store.standard_row("p", {"name": name})
    row.update(admin_state_up=True, status="ACTIVE", mtu=1500)
    conn.execute(sa.insert(t.networks).values(**row))
    return row["id"]


@pytest.mark.backend
def test_duplicate_key_error_is_retriable_only_where_writers_race(db_url: str) -> None:
    db = Database(db_url)
    try:
        with db.writer() as conn:
            conn.execute(sa.insert(t.tags).values(resource_id="r", tag="a"))
        with pytest.raises(sa_exc.IntegrityError) as info:
            with db.writer() as conn:
                conn.execute(sa.insert(t.tags).values(resource_id="r", tag="a"))
        # SQLite writers are serialised, so a duplicate there is never a race.
        assert is_retriable(info.value) is (db.dialect != "sqlite")
    finally:
        db.dispose()


@pytest.mark.backend
def test_deadlock_inside_savepoint_reruns_the_whole_operation(db_url: str) -> None:
    if db_url.startswith("sqlite"):
        pytest.skip("SQLite writers are serialised; no deadlock possible")
    db = Database(db_url)
    try:
        with db.writer() as conn:
            a, b = _network(conn, "a"), _network(conn, "b")
        barrier = threading.Barrier(2)
        attempts = {a: 0, b: 0}
        errors: list[BaseException] = []

        def lock_both(first: str, second: str) -> None:
            @retrying
            def op() -> None:
                attempts[first] += 1
                with db.writer() as conn:
                    store.bump(conn, t.networks, first)
                    if attempts[first] == 1:
                        barrier.wait(timeout=30)
                    with conn.begin_nested():
                        store.bump(conn, t.networks, second)
            try:
                op()
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=lock_both, args=(a, b)),
                   threading.Thread(target=lock_both, args=(b, a))]
        for th in threads:
            th.start()
        for th in threads:
            th.join(timeout=120)
        assert not any(th.is_alive() for th in threads)
        assert errors == []
        assert sorted(attempts.values()) == [1, 2]  # exactly one victim, rerun once
        with db.reader() as conn:
            revs = {r.id: r.revision_number for r in conn.execute(
                sa.select(t.networks.c.id, t.networks.c.revision_number))}
        assert revs == {a: 3, b: 3}  # both operations applied in full, once
    finally:
        db.dispose()
