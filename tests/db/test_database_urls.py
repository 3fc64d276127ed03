"""Which driver a neutron.conf ``[database] connection`` URL gets."""
from __future__ import annotations

import pytest

from neutrino.db.engine import make_engine, normalise_url


@pytest.mark.parametrize("url", ["mysql://root@db/neutron", "mariadb://root@db/neutron"])
def test_a_mysql_url_without_a_driver_reads_through_mysqlclient(url: str) -> None:
    # mysqlclient parses rows in C; PyMySQL's Python parsing was half of a
    # 1,000-port list (docs/performance.md, session 6).
    assert normalise_url(url) == "mysql+mysqldb://root@db/neutron"
    engine = make_engine(url)
    assert engine.dialect.driver == "mysqldb"
    assert engine.url.query["charset"] == "utf8mb4"


@pytest.mark.parametrize("url, expected", [
    ("mysql+pymysql://root@db/neutron", "mysql+pymysql://root@db/neutron"),
    ("mariadb+pymysql://root@db/neutron", "mysql+pymysql://root@db/neutron"),
    ("mysql+mysqldb://root@db/neutron", "mysql+mysqldb://root@db/neutron"),
    ("mariadb+mysqldb://root@db/neutron", "mysql+mysqldb://root@db/neutron"),
])
def test_a_url_that_names_its_driver_keeps_it(url: str, expected: str) -> None:
    # The drivers take different query-string options (ssl_ca= against
    # ssl=), so an operator's choice is never swapped.
    assert normalise_url(url) == expected


@pytest.mark.parametrize("url", ["postgresql://u@db/neutron", "postgres://u@db/neutron"])
def test_a_postgresql_url_without_a_driver_reads_through_psycopg(url: str) -> None:
    assert normalise_url(url) == "postgresql+psycopg://u@db/neutron"


def test_sqlite_urls_are_left_as_they_are() -> None:
    assert normalise_url("sqlite:///var/neutrino.sqlite") == "sqlite:///var/neutrino.sqlite"


def test_without_mysqlclient_a_mysql_url_falls_back_to_pymysql(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from neutrino.db import engine
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "MySQLdb" else real(name, *a))
    engine._default_mysql_driver.cache_clear()
    try:
        assert normalise_url("mysql://root@db/neutron") == "mysql+pymysql://root@db/neutron"
    finally:
        monkeypatch.undo()
        engine._default_mysql_driver.cache_clear()
    assert normalise_url("mysql://root@db/neutron") == "mysql+mysqldb://root@db/neutron"
