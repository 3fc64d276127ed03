"""Fixtures for the storage tests: empty databases, the core plugin on a
database, and servers on a server database.

The helpers of the top-level ``tests/conftest.py`` (``Server``, ``Client``,
database creation) are reached through pytest's plugin manager, because
both conftest modules are imported under the same name.
"""
from __future__ import annotations

import time
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterator

import pytest
import requests

ROOT_CONFTEST = Path(__file__).resolve().parent.parent / "conftest.py"
# The storage layer runs on both MySQL drivers: mysqlclient, which
# ``mysql://`` picks, and PyMySQL, which neutron.conf files often name.
BACKENDS = ["sqlite", "postgresql", "mariadb", "mariadb-pymysql"]


def root(request: pytest.FixtureRequest) -> ModuleType:
    mod = request.config.pluginmanager.get_plugin(str(ROOT_CONFTEST))
    assert mod is not None, "tests/conftest.py is not loaded"
    return mod


def start_patient(srv: Any) -> Any:
    """``srv.start()``, tolerating a slow first answer on a loaded machine.

    ``Server.start`` polls with a 1 s read timeout and lets ``ReadTimeout``
    escape even though the server is up and merely busy; keep polling then.
    """
    try:
        return srv.start()
    except requests.Timeout:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if srv.proc is None or srv.proc.poll() is not None:
                raise
            try:
                requests.get(srv.url + "/", timeout=10)
                return srv
            except requests.RequestException:
                time.sleep(0.2)
        raise


@pytest.fixture(params=BACKENDS)
def empty_db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh database on each backend, *not* migrated."""
    url, drop = root(request).create_database(request.param, tmp_path)
    try:
        yield url
    finally:
        drop()


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, migrated database on each backend and MySQL driver."""
    with root(request).migrated_database(request.param, tmp_path) as url:
        yield url


@pytest.fixture
def db(db_url: str) -> Iterator[Any]:
    """A ``Database`` on a fresh migrated database (every backend, unless a
    module narrows ``db_url``)."""
    from neutrino.db.engine import Database
    database = Database(db_url)
    yield database
    database.dispose()


@pytest.fixture
def plugin(db_url: str) -> Iterator[Any]:
    """The core plugin on a fresh migrated database (every backend)."""
    from neutrino.db.engine import Database
    from neutrino.plugins.core import CorePlugin
    from neutrino.service import make_conf
    db = Database(db_url)
    yield CorePlugin(make_conf([]), db)
    db.dispose()


@pytest.fixture
def start_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """``start_server(url, workers=1, extra="")`` -> a running Server, stopped at teardown."""
    helpers = root(request)
    started: list[Any] = []

    def start(url: str, workers: int = 1, extra: str = "") -> Any:
        home = tmp_path / f"srv{len(started)}"
        home.mkdir()
        srv = helpers.Server(home, db_url=url, workers=workers, extra=extra)
        started.append(srv)
        return start_patient(srv)

    yield start
    for srv in started:
        srv.stop()


@pytest.fixture
def client_for(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """``client_for(server)`` -> an admin (noauth) Client of that server."""
    helpers = root(request)
    return lambda srv, *a, **kw: helpers.Client(srv.url, *a, **kw)


@pytest.fixture(scope="session")
def helpers(request: pytest.FixtureRequest) -> ModuleType:
    """The top-level conftest module (Server, Client, database creation)."""
    return root(request)


@pytest.fixture(scope="session")
def start_patiently() -> Callable[[Any], Any]:
    """The ``start`` helper above, for module-scoped server fixtures."""
    return start_patient
