"""A server with the logging plugin (by class path until the alias is installed)."""
from __future__ import annotations

import uuid
from typing import Iterator

import pytest

from tests.conftest import Client, Server, serving, with_plugin

PLUGIN = "neutrino.plugins.logging.plugin:LoggingPlugin"


@pytest.fixture(scope="module")
def log_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from serving(tmp_path_factory.mktemp("log-server"), with_plugin(PLUGIN))


@pytest.fixture
def admin(log_server: Server) -> Client:
    return Client(log_server.url, project=uuid.uuid4().hex, roles="admin")


@pytest.fixture
def member(log_server: Server) -> Client:
    return Client(log_server.url, project=uuid.uuid4().hex, roles="member,reader")
