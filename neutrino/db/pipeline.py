"""Writes that travel with the next statement's round trip (MySQL, MariaDB).

A network create ends with two INSERTs (the network, its segment) and a
COMMIT; a port create with four INSERTs and a COMMIT. Nobody reads what
those INSERTs return: an error among them ends the whole attempt, which
``engine.retrying`` reruns or reports. Each was still a round trip of its
own, about 0.1 ms on this machine, 0.25 ms when it is busy: in a network
create, two of its five.

An INSERT executed with the ``pipelined`` execution option
(``store.insert(..., pipelined=True)``) is therefore not sent at once on a
MySQL writer connection: its text, with its values bound by the driver
itself, waits on the connection and goes out with whatever the connection
sends next, in one multi-statement round trip:

- before any other statement (a read inside the transaction sees the rows),
  as a round trip of its own;
- with the COMMIT, as ``INSERT ...; INSERT ...; COMMIT``: MySQL runs a
  multi-statement batch in order and stops at the first error, so the
  COMMIT runs only when every INSERT succeeded.

Its error is raised by the statement or the COMMIT it travelled with (SQLAlchemy
wraps it as usual, with the driver's error number), so only INSERTs whose
failure nobody catches on the spot may be pipelined; a ROLLBACK drops what
was waiting. Everything else (the statement events, ``writes``' record of
the rows, statement counts) sees the INSERT as executed where it was.

PostgreSQL and SQLite send each INSERT at once, as before.
"""
from __future__ import annotations

from typing import Any, Callable

from sqlalchemy import Engine, event

OPTION = "pipelined"


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

    def send_pending(self, tail: Any = None) -> None:
        """Send what waits (and ``tail``) in one round trip; raise the first
        statement's error, after which the server ran none of the rest."""
        batch, self.pending = self.pending, []
        if tail is not None:
            batch.append(tail)
        cursor = self.cursor()  # type: ignore[attr-defined]
        try:
            cursor.execute(self._separator.join(batch))
            while cursor.nextset():
                pass
        finally:
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
    from MySQLdb.connections import Connection
    from MySQLdb.constants.CLIENT import MULTI_STATEMENTS

    class PipelinedMySQLdb(_Pipelined, Connection):  # type: ignore[misc]
        _separator, _commit = b";", b"COMMIT"

        def bound(self, cursor: Any, statement: str, parameters: Any) -> bytes:
            # Bytes, as mysqlclient sends them: a binary value need not decode.
            return cursor._mogrify(statement, parameters)
    return PipelinedMySQLdb, MULTI_STATEMENTS


def _pymysql() -> tuple[type, int]:
    from pymysql.connections import Connection
    from pymysql.constants.CLIENT import MULTI_STATEMENTS

    class PipelinedPyMySQL(_Pipelined, Connection):  # type: ignore[misc]
        _separator, _commit = ";", "COMMIT"

        def bound(self, cursor: Any, statement: str, parameters: Any) -> str:
            return cursor.mogrify(statement, parameters)
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
        if context.execution_options.get(OPTION) and not context.executemany:
            conn = cursor.connection
            conn.pending.append(conn.bound(cursor, statement, parameters))
            return True  # executed, as far as SQLAlchemy is concerned
        return _send_first(cursor)

    def _send_first(cursor: Any, *args: Any) -> bool:
        """Before any other statement: what waits goes first."""
        if cursor.connection.pending:
            cursor.connection.send_pending()
        return False  # now the statement itself, as usual

    event.listen(engine, "do_executemany", _send_first)
    event.listen(engine, "do_execute_no_params", _send_first)
