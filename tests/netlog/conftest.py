"""A server with the logging plugin (by class path until the alias is installed)."""
from __future__ import annotations

import uuid
from typing import Iterator

import pytest

from tests.conftest import SESSION_EXTRA, Client, Server

PLUGIN = "neutrino.plugins.logging.plugin:LoggingPlugin"


@pytest.fixture(scope="module")
def log_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    extra = SESSION_EXTRA.replace("service_plugins = ", f"service_plugins = {PLUGIN},", 1)
    srv = Server(tmp_path_factory.mktemp("log-server"), extra=extra).start()
    yield srv
    srv.stop()


@pytest.fixture
def admin(log_server: Server) -> Client:
    return Client(log_server.url, project=uuid.uuid4().hex, roles="admin")


@pytest.fixture
def member(log_server: Server) -> Client:
    return Client(log_server.url, project=uuid.uuid4().hex, roles="member,reader")
