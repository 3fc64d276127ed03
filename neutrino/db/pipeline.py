"""Writes that travel with the next statement's round trip (MySQL, MariaDB).

A network create ends with two INSERTs (the network, its segment) and a
COMMIT; a port create with four INSERTs and a COMMIT. Nobody reads what
those INSERTs return: an error among them ends the whole attempt, which
``engine.retrying`` reruns or reports. Each was still a round trip of its
own: in a network create, two of its five.

An INSERT executed with the ``pipelined`` execution option
(``store.insert(..., pipelined=True)``) is therefore not sent at once on a
MySQL writer connection: its text, with its values bound by the driver
itself, waits on the connection and goes out with whatever the connection
sends next, in one multi-statement round trip:

- ahead of the next statement, in its round trip (a read inside the
  transaction sees the rows; a bulk INSERT or a statement without
  parameters still has them sent first, in a round trip of their own);
- with the COMMIT, as ``INSERT ...; INSERT ...; COMMIT``: MySQL runs a
  multi-statement batch in order and stops at the first error, so the
  COMMIT runs only when every INSERT succeeded.

Its error is raised by the statement or the COMMIT it travelled with (SQLAlchemy
wraps it as usual, with the driver's error number), so only INSERTs whose
failure nobody catches on the spot may be pipelined; a ROLLBACK drops what
was waiting. Everything else (the statement events, ``writes``' record of
the rows, statement counts) sees the INSERT as executed where it was.

A statement whose result is wanted later, not at once, travels the same way
(``ahead``): the pool's first try at a segment id is an UPDATE whose row
count matters only when the network takes its segment, after its quota
check; sent ahead, it goes with that check's SELECT instead of in a round
trip of its own. Its row count waits in an ``Ahead`` until the round trip
it went with returns (or is sent for it when asked for first).

A batch ``INSERT ...; UPDATE ...; SELECT ...`` comes back as one result per
statement; the cursor is left on the last one, the statement SQLAlchemy
executed, where it reads that statement's rows as usual.

PostgreSQL and SQLite send each statement at once, as before.
"""
from __future__ import annotations

from typing import Any, Callable

from sqlalchemy import Engine, event

OPTION = "pipelined"
AHEAD = "ahead"  # execution option: the Ahead to fill with the statement's row count


class Ahead:
    """A statement's row count, known once the round trip it went with is
    back. ``text`` is the bound statement; ``_conn`` the driver connection
    that holds it while it waits."""

    __slots__ = ("text", "_count", "_conn")

    def __init__(self) -> None:
        self.text: Any = None
        self._count: int | None = None
        self._conn: _Pipelined | None = None

    def _queue(self, conn: _Pipelined, text: Any) -> None:
        self.text, self._conn = text, conn
        conn.pending.append(self)

    def _done(self, count: int) -> None:
        self._count, self._conn = count, None

    @property
    def rowcount(self) -> int:
        if self._count is None and self._conn is not None and self in self._conn.pending:
            self._conn.send_pending()  # asked for before anything else was sent
        if self._count is None:
            raise RuntimeError("a statement sent ahead was not run: its transaction "
                               "ended or a statement before it failed")
        return self._count


def ahead(conn: Any, stmt: Any, params: Any) -> Ahead:
    """Execute ``stmt`` on ``conn`` (a SQLAlchemy connection) with the
    connection's next round trip, where it pipelines; at once elsewhere.
    Its error, if any, ends the transaction from the statement it went
    with, so only a statement whose failure nobody catches goes ahead."""
    holder = Ahead()
    result = conn.execute(stmt.execution_options(**{AHEAD: holder}), params)
    if holder.text is None:  # not a pipelining connection: executed here
        holder._done(result.rowcount)
    return holder


class _Pipelined:
    """What the driver's connection class gains: the waiting statements,
    sent with the next round trip; ``round_trips`` counts them all. A
    driver's subclass says how a batch is joined and how it binds."""

    _separator: Any  # between a batch's statements, in the driver's query type
    _commit: Any
    # bound(cursor, statement, parameters): the statement as the driver sends it
    bound: Callable[[Any, str, Any], Any]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.pending: list[Any] = []
        self.round_trips = 0
        super().__init__(*args, **kwargs)

    def send_pending(self, tail: Any = None, cursor: Any = None) -> None:
        """Send what waits (and ``tail``) in one round trip; raise the first
        failing statement's error, after which the server ran none of the
        rest. With ``cursor`` (the one SQLAlchemy executes ``tail`` on), the
        cursor is left on ``tail``'s result."""
        batch, self.pending = self.pending, []
        texts = [item.text if isinstance(item, Ahead) else item for item in batch]
        if tail is not None:
            texts.append(tail)
        own = cursor is None
        if own:
            cursor = self.cursor()  # type: ignore[attr-defined]
        try:
            cursor.execute(self._separator.join(texts))
            for i, item in enumerate(batch):
                if i:
                    cursor.nextset()
                if isinstance(item, Ahead):
                    item._done(cursor.rowcount)
            if own:
                while cursor.nextset():
                    pass
            elif batch:
                cursor.nextset()  # onto the tail's own result
        finally:
            if own:
                cursor.close()

    def commit(self) -> None:
        if self.pending:  # one query, counted as such
            try:
                self.send_pending(self._commit)
            except BaseException:
                # As a failed COMMIT: nothing of the transaction stays (the
                # caller may not roll back after a failed commit).
                self.rollback()
                raise
            return
        self.round_trips += 1
        super().commit()  # type: ignore[misc]

    def rollback(self) -> None:
        self.pending = []
        self.round_trips += 1
        super().rollback()  # type: ignore[misc]

    def query(self, sql: Any, *args: Any) -> Any:
        self.round_trips += 1
        return super().query(sql, *args)  # type: ignore[misc]


def _mysqldb() -> tuple[type, int]:
    # deferred: mysqlclient is an optional driver, installed only for MySQL/MariaDB
    from MySQLdb.connections import Connection
    from MySQLdb.constants.CLIENT import MULTI_STATEMENTS

    class PipelinedMySQLdb(_Pipelined, Connection):
        _separator, _commit = b";", b"COMMIT"

        def bound(self, cursor: Any, statement: str, parameters: Any) -> bytes:
            # Bytes, as mysqlclient sends them: a binary value need not decode.
            bound: bytes = cursor._mogrify(statement, parameters)
            return bound
    return PipelinedMySQLdb, MULTI_STATEMENTS


def _pymysql() -> tuple[type, int]:
    # deferred: PyMySQL is an optional driver, installed only for MySQL/MariaDB
    from pymysql.connections import Connection
    from pymysql.constants.CLIENT import MULTI_STATEMENTS

    class PipelinedPyMySQL(_Pipelined, Connection):  # type: ignore[misc]
        _separator, _commit = ";", "COMMIT"

        def bound(self, cursor: Any, statement: str, parameters: Any) -> str:
            bound: str = cursor.mogrify(statement, parameters)
            return bound
    return PipelinedPyMySQL, MULTI_STATEMENTS


_DRIVERS = {"mysqldb": _mysqldb, "pymysql": _pymysql}


def enable(engine: Engine) -> None:
    """Let ``engine``'s (MySQL writer) connections pipeline INSERTs."""
    driver = _DRIVERS.get(engine.dialect.driver)
    if driver is None:
        return
    cls, multi_statements = driver()

    @event.listens_for(engine, "do_connect")
    def _connect(dialect: Any, record: Any, cargs: Any, cparams: dict[str, Any]) -> Any:
        cparams["client_flag"] = cparams.get("client_flag", 0) | multi_statements
        return cls(*cargs, **cparams)

    @event.listens_for(engine, "do_execute")
    def _execute(cursor: Any, statement: str, parameters: Any, context: Any) -> bool:
        conn = cursor.connection
        if context.executemany:
            return _send_first(cursor)
        options = context.execution_options
        if options.get(OPTION):
            conn.pending.append(conn.bound(cursor, statement, parameters))
            return True  # executed, as far as SQLAlchemy is concerned
        holder = options.get(AHEAD)
        if holder is not None:
            holder._queue(conn, conn.bound(cursor, statement, parameters))
            return True
        if conn.pending:  # what waits goes first, in the same round trip
            conn.send_pending(conn.bound(cursor, statement, parameters), cursor)
            return True
        return False

    def _send_first(cursor: Any, *args: Any) -> bool:
        """Before any other statement: what waits goes first."""
        if cursor.connection.pending:
            cursor.connection.send_pending()
        return False  # now the statement itself, as usual

    event.listen(engine, "do_executemany", _send_first)
    event.listen(engine, "do_execute_no_params", _send_first)
