"""The ``cli`` and ``conn`` fixtures for a test module outside tests/clients
whose ``server`` is its package's own: module-scoped, so that they follow
whichever server the module is given (tests/clients' own are per session).

Import them: ``from tests.clients.module_fixtures import cli, conn``.
"""
from __future__ import annotations

from typing import Any, Iterator

import pytest

from tests.clients.conftest import CLI, open_cli, open_conn
from tests.conftest import Server


@pytest.fixture(scope="module")
def cli(server: Server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[CLI]:
    with open_cli(server, tmp_path_factory) as c:
        yield c


@pytest.fixture(scope="module")
def conn(server: Server) -> Iterator[Any]:
    with open_conn(server) as c:
        yield c
