"""DATETIME values through mysqlclient: parsed in C, to what its own
Python converter gave (which cost 9 ms of a 1,000-port list's CPU)."""
from __future__ import annotations

from typing import Iterator

import MySQLdb.times
import pytest
import sqlalchemy as sa
from MySQLdb.constants import FIELD_TYPE

from neutrino.db.engine import make_engine

CASES = ("2026-11-30 19:00:01", "2026-11-30 19:00:01.250000", "1970-01-01 00:00:00",
         "0000-00-00 00:00:00")


@pytest.fixture
def engine() -> Iterator[sa.Engine]:
    engine = make_engine("mysql://root@127.0.0.1:3306/test")  # reads no table
    yield engine
    engine.dispose()


def test_datetimes_read_as_mysqlclients_own_converter_read_them(engine: sa.Engine) -> None:
    columns = ", ".join(f"CAST('{c}' AS DATETIME(6))" for c in CASES)
    with engine.connect() as conn:
        row = conn.exec_driver_sql(f"SELECT {columns}").one()
    assert list(row) == [MySQLdb.times.DateTime_or_None(c) for c in CASES]
    assert row[3] is None  # MySQL's zero date, as before


def test_the_datetime_converter_is_not_mysqlclients_python_one(engine: sa.Engine) -> None:
    with engine.connect() as conn:
        converter = conn.connection.dbapi_connection.converter  # type: ignore[union-attr]
    assert converter[FIELD_TYPE.DATETIME] is not MySQLdb.times.DateTime_or_None
    assert converter[FIELD_TYPE.TIMESTAMP] is not MySQLdb.times.DateTime_or_None
