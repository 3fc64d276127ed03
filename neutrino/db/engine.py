"""Engines and transactions.

One retry loop, at the outermost transaction only (``retrying``): a lost
race (deadlock, serialization failure, a unique key taken by a concurrent
writer, SQLite busy) reruns the whole operation from the start, so no code
inside a transaction ever needs to retry.

What code inside a write transaction must do only once it is durable
(tell an agent what it removed) it hands to ``after_commit``: the work
belongs to that transaction, so an attempt rolled back and retried drops
its own and the retry asks again.
"""
from __future__ import annotations

import datetime as dt
import functools
import importlib.util
import logging
import os
import random
import time
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterator, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy import exc as sa_exc
from sqlalchemy.pool import NullPool

from neutrino import errors, metrics
from neutrino.db import pipeline, writes

LOG = logging.getLogger(__name__)
T = TypeVar("T")

MAX_RETRIES = 10


class RetryRequest(Exception):
    """Raised inside a transaction to rerun the whole operation."""


def after_commit(conn: Connection, fn: Callable[[], None]) -> None:
    """Call ``fn()`` once the write transaction of ``conn`` (a
    ``Database.writer``'s) has committed; never if it rolls back. It cannot
    undo the change, so a failure is logged, not raised."""
    conn.get_execution_options()["after_commit"].append(fn)


def _run_committed(pending: list[Callable[[], None]]) -> None:
    for fn in pending:
        try:
            fn()
        except Exception:  # noqa: BLE001 - the change is committed; tell, never undo
            LOG.exception("after-commit callback %r failed", fn)


def normalise_url(url: str) -> str:
    """Accept neutron.conf's usual URLs and pick the drivers we ship.

    A URL that names no MySQL driver gets mysqlclient, which parses result
    rows in C: a list of 1,000 ports reads thousands of rows, and PyMySQL's
    pure-Python parsing of them was the largest part of the request
    (docs/performance.md). A URL that names a
    driver keeps it, because the drivers read different query-string
    options (``ssl_ca=`` against ``ssl=``) and a swap would break them.
    """
    scheme, sep, rest = url.partition("://")
    if scheme in ("postgresql", "postgres"):
        return "postgresql+psycopg://" + rest
    if scheme in ("mysql", "mariadb"):
        return f"mysql+{_default_mysql_driver()}://" + rest
    if scheme in ("mariadb+pymysql", "mariadb+mysqldb"):
        return "mysql+" + scheme.split("+", 1)[1] + sep + rest
    return url


@functools.cache
def _default_mysql_driver() -> str:
    if importlib.util.find_spec("MySQLdb") is None:  # mysqlclient; `make install` builds it
        LOG.info("mysqlclient is not installed: MySQL through PyMySQL, which is slower")
        return "pymysql"
    return "mysqldb"


def make_engine(url: str, reads_only: bool = False) -> Engine:
    """The engine for ``url``; with ``reads_only``, the one for reads.

    A read on a server database runs in autocommit mode: under READ
    COMMITTED (ours on MySQL, PostgreSQL's default) every statement sees
    what was committed when it started, inside a transaction or not, so
    a read transaction's COMMIT (and on PostgreSQL its BEGIN) were round
    trips that bought nothing: a show is now its SELECT alone. Its
    sessions are READ ONLY, so a write that strays into a read fails
    instead of committing statement by statement. SQLite reads keep their
    transaction, whose snapshot is real there, and refuse writes too.
    """
    url = normalise_url(url)
    if url.startswith("sqlite"):
        return _sqlite_engine(url, reads_only)
    # Every use of a connection ends its transaction (``Database.reader`` and
    # ``writer`` commit or roll back, and a closed Connection rolls back what
    # is left), so the pool's own ROLLBACK on return would be one more round
    # trip per checkout for nothing. Last in, first out: under load the same
    # few connections serve, and only those left idle get pinged.
    kwargs: dict[str, Any] = {"pool_size": 10, "max_overflow": 20,
                              "pool_reset_on_return": None, "pool_use_lifo": True}
    if reads_only:  # a reader's close sends no ROLLBACK either
        kwargs.update(isolation_level="AUTOCOMMIT", skip_autocommit_rollback=True)
    elif url.startswith("mysql"):
        kwargs["isolation_level"] = "READ COMMITTED"
    if not url.startswith("mysql"):
        engine = _ping_when_idle(create_engine(url, **kwargs))
        if reads_only:
            _on_connect_run(engine, "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
        return engine
    if url.startswith("mysql+mysqldb"):
        kwargs["connect_args"] = {"conv": _mysqlclient_conversions()}
    if "charset=" not in url:
        url += ("&" if "?" in url else "?") + "charset=utf8mb4"
    engine = _ping_when_idle(create_engine(url, **kwargs))
    if not reads_only:
        pipeline.enable(engine)
    # A resource's child rows are read as one JSON_ARRAYAGG per table
    # (plugins/joined.py), which MySQL cuts at this length (1 MB by
    # default) without an error.
    _on_connect_run(engine, f"SET SESSION group_concat_max_len = {MYSQL_AGGREGATE_MAX}",
                    *(["SET SESSION TRANSACTION READ ONLY"] if reads_only else []))
    return engine


def _on_connect_run(engine: Engine, *statements: str) -> None:
    """Run ``statements`` once on each new connection, before any use."""
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        cur = dbapi_conn.cursor()
        for statement in statements:
            cur.execute(statement)
        cur.close()
        if not engine.dialect.detect_autocommit_setting(dbapi_conn):
            dbapi_conn.commit()  # PostgreSQL opened a transaction for them


def _mysqlclient_conversions() -> dict[Any, Any]:
    """mysqlclient's conversions, with DATETIME parsed in C.

    Its own DATETIME converter is Python (slicing and six int() calls),
    paid for every timestamp of every row: a visible share of a long
    list's CPU (docs/performance.md). ``datetime.fromisoformat`` reads
    MySQL's text form in C; what it refuses (MySQL's zero dates) is None,
    as before.
    """
    # deferred: mysqlclient is an optional driver, installed only for MySQL/MariaDB
    from MySQLdb.constants import FIELD_TYPE
    from MySQLdb.converters import conversions

    def datetime_or_none(text: str) -> dt.datetime | None:
        try:
            return dt.datetime.fromisoformat(text)
        except ValueError:
            return None
    conv = dict(conversions)
    conv[FIELD_TYPE.DATETIME] = conv[FIELD_TYPE.TIMESTAMP] = datetime_or_none
    return conv


MYSQL_AGGREGATE_MAX = 1 << 30  # 1 GiB: the largest packet MySQL sends at all

# A pooled connection idle this long is pinged before use.
PING_AFTER_IDLE = 1.0


def _ping_when_idle(engine: Engine) -> Engine:
    """Ping a connection on checkout only when it sat idle in the pool.

    SQLAlchemy's ``pool_pre_ping`` (and oslo.db's ping) costs a round trip
    on every checkout, one per transaction: a show is the ping, its SELECT
    and a COMMIT. A connection returned less than ``PING_AFTER_IDLE`` ago
    was working then; one the server dropped while it sat idle (a restart,
    ``wait_timeout``) fails its ping and the pool replaces it. What is left
    is a server lost within that second: the first statement on such a
    connection fails, SQLAlchemy invalidates the whole pool, and a write
    reruns (``retrying``) on a new connection.
    """
    @event.listens_for(engine.pool, "checkin")
    def _returned(dbapi_conn: Any, record: Any) -> None:
        record.info["returned"] = time.monotonic()

    @event.listens_for(engine.pool, "checkout")
    def _taken(dbapi_conn: Any, record: Any, proxy: Any) -> None:
        returned = record.info.get("returned")
        if returned is None or time.monotonic() - returned < PING_AFTER_IDLE:
            return  # new, or in use a moment ago
        try:
            engine.dialect.do_ping(dbapi_conn)
        except Exception as exc:
            # Any exception: is_disconnect tells a lost connection by its type.
            if engine.dialect.is_disconnect(exc, dbapi_conn, None):  # type: ignore[arg-type]
                raise sa_exc.DisconnectionError() from exc  # the pool takes another
            raise
    return engine


def _sqlite_file(url: str) -> str:
    """The database file a SQLite URL names; empty for an in-memory one."""
    path = url.split("///", 1)[1] if "///" in url else ""
    return "" if path == ":memory:" else path


def _sqlite_engine(url: str, reads_only: bool = False) -> Engine:
    path = url.split("///", 1)[1] if "///" in url else ""
    if _sqlite_file(url):
        os.makedirs(os.path.dirname(os.path.abspath(path)) or ".", exist_ok=True)
    engine = create_engine(url, poolclass=NullPool if not path else None,
                           connect_args={"check_same_thread": False,
                                         "timeout": 30})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" event issue BEGIN itself (see below).
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA busy_timeout=30000")
        if reads_only:
            cur.execute("PRAGMA query_only=ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # Writers take the lock up front: a deferred transaction that later
        # upgrades to a writer can fail with SQLITE_BUSY without waiting.
        if conn.get_execution_options().get("writer"):
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        else:
            conn.exec_driver_sql("BEGIN")

    return engine


# What the errors say, for those that reach us without their driver's
# number (a deadlock as the context of another error, a proxy's rewording).
# Galera reports a transaction that lost certification to another node's as
# a deadlock; a node that is not (or no longer) part of the primary
# component refuses statements until it is.
_RETRY_MARKERS = ("deadlock", "lock wait timeout", "database is locked",
                  "could not serialize", "serialization failure",
                  "restart transaction", "try restarting transaction",
                  "wsrep has not yet prepared node")
# PostgreSQL SQLSTATEs: serialization failure, deadlock, unique and foreign
# key violations (a concurrent writer took the key or removed the parent).
_PG_RETRY_STATES = {"40001", "40P01", "23505", "23503"}
# MySQL/MariaDB error numbers: lock wait timeout, deadlock, duplicate key,
# foreign key (parent gone / child added), Galera "not ready" and
# certification failures.
_MYSQL_RETRY_CODES = {1205, 1213, 1062, 1451, 1452, 1047, 1180}
# The drivers whose errors carry those numbers first: PyMySQL
# (``mysql+pymysql://``) and mysqlclient (``mysql://``, ``mysql+mysqldb://``).
_MYSQL_DRIVERS = ("pymysql", "MySQLdb")


def _retriable_one(exc: BaseException) -> bool:
    if isinstance(exc, RetryRequest):
        return True
    if isinstance(exc, sa_exc.DBAPIError):
        if exc.connection_invalidated:
            return True
        orig = exc.orig
        if orig is None:
            return any(m in str(exc).lower() for m in _RETRY_MARKERS)
        if getattr(orig, "sqlstate", None) in _PG_RETRY_STATES:
            return True
        args = getattr(orig, "args", ())
        if (type(orig).__module__.startswith(_MYSQL_DRIVERS) and args
                and args[0] in _MYSQL_RETRY_CODES):
            return True
        # SQLite has no concurrent writers (writers take the lock with BEGIN
        # IMMEDIATE), so its constraint violations are never lost races.
        return any(m in str(orig).lower() for m in _RETRY_MARKERS)
    return False


def is_retriable(exc: BaseException) -> bool:
    """Whether ``exc`` (or an error it was raised while handling) is a lost race.

    The chain matters on MariaDB: a deadlock inside a savepoint rolls the
    whole transaction back, so the savepoint's own ROLLBACK then fails with
    "SAVEPOINT ... does not exist" and the deadlock is only its context.
    """
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if _retriable_one(cur):
            return True
        cur = cur.__cause__ or cur.__context__
    return False


def is_unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` (or an error it was raised while handling) is a
    connection to the database lost in use, or none to be had in time."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, sa_exc.TimeoutError):  # the pool had none free in time
            return True
        if isinstance(cur, sa_exc.DBAPIError) and cur.connection_invalidated:
            return True
        cur = cur.__cause__ or cur.__context__
    return False


def _unavailable(exc: BaseException) -> errors.ServiceUnavailable:
    """What a request that found no database answers: 503, as for any other
    service it needs and cannot reach; the cause stays on the chain for
    ``is_retriable`` and the log, never for the client."""
    LOG.warning("database unavailable: %s", str(exc).splitlines()[0] if str(exc) else exc)
    return errors.ServiceUnavailable("The database is unavailable; try again later.")


def _connect(engine: Engine) -> Connection:
    """A connection of ``engine``'s pool; any failure to get one means the
    database cannot be reached (refused, shutting down, the pool exhausted)."""
    try:
        return engine.connect()
    except (sa_exc.DBAPIError, sa_exc.TimeoutError) as exc:
        raise _unavailable(exc) from exc


def _raise_if_unreachable(exc: BaseException) -> None:
    """``_unavailable`` for a connection lost in the middle of a block; the
    block's own handler re-raises anything else (no frames on the way in)."""
    if isinstance(exc, (sa_exc.DBAPIError, sa_exc.TimeoutError)) and is_unreachable(exc):
        raise _unavailable(exc) from exc


def retrying(fn: Callable[..., T]) -> Callable[..., T]:
    """Rerun ``fn`` when it lost a race; use only around whole operations."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        for attempt in range(MAX_RETRIES):
            try:
                return fn(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - filtered just below
                if not is_retriable(exc) or attempt == MAX_RETRIES - 1:
                    raise
                LOG.debug("retrying %s (attempt %d) after %s: %s", fn.__qualname__,
                          attempt + 1, type(exc).__name__, exc)
                time.sleep(random.uniform(0, 0.01 * (2 ** attempt)))
        raise AssertionError("unreachable")
    return wrapper


class _SharedRead:
    """The read connection (on SQLite, its transaction) a
    ``Database.reads_together`` block shares, opened by its first read; a
    write in the block retires it, so reads after the write start a new
    one that sees it (SQLite's snapshot would not)."""

    def __init__(self, db: "Database") -> None:
        self.db = db
        self._conn: Connection | None = None
        self.in_use = 0  # reader blocks running on the connection now
        self.stale = False

    def connection(self) -> Connection:
        if self._conn is None:
            self._conn, self.stale = self.db.open_read(), False
        return self._conn

    def close(self, exc: BaseException | None = None) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            self.db.close_read(conn, exc)


def _count_into(counted: metrics.Metrics, engine: Engine, pool: str) -> None:
    """Statements by kind and connections checked out, for ``/metrics``."""
    statements = {kind: counted.statements.labels(pool, kind)
                  for kind in ("select", "insert", "update", "delete", "other")}
    in_use = counted.connections_in_use.labels(pool)

    @event.listens_for(engine, "before_cursor_execute")
    def _statement(conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        kind = statement[:6].lower()
        statements.get(kind, statements["other"]).inc()

    @event.listens_for(engine, "checkout")
    def _taken(*_: Any) -> None:
        in_use.inc()

    @event.listens_for(engine, "checkin")
    def _returned(*_: Any) -> None:
        in_use.dec()


class Database:
    """The engines (the writers', and the read-only one reads check out
    of) and the two kinds of transaction the plugins use."""

    def __init__(self, url: str) -> None:
        self.url = normalise_url(url)
        self.engine = make_engine(url)
        writes.watch(self.engine)  # what a create wrote, for reading it back
        if os.environ.get(writes.CHECK_ENV):
            writes.check_parents(self.engine)
            writes.checking = True
        self.dialect = self.engine.dialect.name
        # Reads check out of a pool of their own (``make_engine``); an
        # in-memory SQLite database exists once per connection, so there
        # reads share the writers' engine.
        self.read_engine = (make_engine(url, reads_only=True)
                            if self.dialect != "sqlite" or _sqlite_file(self.url) else self.engine)
        self.engines = tuple(dict.fromkeys((self.engine, self.read_engine)))
        counted = metrics.active()
        if counted is not None:
            for engine, pool in ((self.engine, "writer"), (self.read_engine, "reader")):
                if engine is self.engine and pool == "reader":
                    continue  # an in-memory SQLite database's one engine: counted once
                _count_into(counted, engine, pool)
        self._reads_commit = self.dialect == "sqlite"
        self._shared: ContextVar[_SharedRead | None] = ContextVar(
            f"shared-read-{id(self)}", default=None)

    @contextmanager
    def writer(self) -> Iterator[Connection]:
        shared = self._shared.get()
        if shared is not None:
            shared.stale = True
            if not shared.in_use:
                shared.close()
        committed: list[Callable[[], None]] = []
        try:
            with _connect(self.engine) as conn:
                conn = conn.execution_options(writer=True, after_commit=committed)
                with conn.begin():
                    yield conn
        except Exception as exc:
            _raise_if_unreachable(exc)
            raise
        _run_committed(committed)

    @contextmanager
    def read_connection(self) -> Iterator[Connection]:
        """A connection for reads alone: autocommit on a server database
        (one round trip per statement, nothing to end), a transaction on
        SQLite."""
        conn = self.open_read()
        try:
            yield conn
        except BaseException as exc:
            self.close_read(conn, exc)
            _raise_if_unreachable(exc)
            raise
        self.close_read(conn)

    def open_read(self) -> Connection:
        """``read_connection``'s connection, for a holder that closes it
        with ``close_read`` (``_SharedRead``, opened once per read request,
        where a context manager's frames cost more than the opening)."""
        conn = _connect(self.read_engine)
        if self._reads_commit:
            conn.begin()
        return conn

    def close_read(self, conn: Connection, exc: BaseException | None = None) -> None:
        try:
            if exc is None and self._reads_commit:
                conn.commit()  # SQLite's read transaction
            # Closing rolls back what is left (nothing on a server database's
            # autocommit connection; a failed statement's transaction).
        finally:
            conn.close()

    @contextmanager
    def reader(self) -> Iterator[Connection]:
        shared = self._shared.get()
        if shared is None:
            with self.read_connection() as conn:
                yield conn
            return
        if shared.stale and not shared.in_use:
            shared.close()
        conn = shared.connection()
        shared.in_use += 1
        try:
            yield conn
        except BaseException as exc:
            shared.in_use -= 1
            if not shared.in_use:
                shared.close(exc)
            _raise_if_unreachable(exc)
            raise
        shared.in_use -= 1

    @contextmanager
    def reads_together(self) -> Iterator[None]:
        """Let the reads inside share one connection (on SQLite, one
        transaction).

        A request's reads (the resource, its network for policy, what the
        API extensions add) would each check a connection out and, on
        SQLite, begin and end a transaction. Reads of the same request need
        no isolation from each other; a write inside the block ends the
        sharing until it is done.
        """
        if self._shared.get() is not None:
            yield
            return
        shared = _SharedRead(self)
        token = self._shared.set(shared)
        try:
            yield
        except BaseException as exc:
            shared.close(exc)
            raise
        finally:
            self._shared.reset(token)
        shared.close()

    def dispose(self) -> None:
        for engine in self.engines:
            engine.dispose()
