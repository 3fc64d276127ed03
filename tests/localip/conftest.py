"""A server with the local_ip plugin (by class path until the alias is installed)."""
from __future__ import annotations

import uuid
from typing import Iterator

import pytest

from tests.conftest import Client, Server, serving, with_plugin

PLUGIN = "neutrino.plugins.local_ip.plugin:LocalIpPlugin"


@pytest.fixture(scope="module")
def lip_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from serving(tmp_path_factory.mktemp("lip-server"), with_plugin(PLUGIN))


@pytest.fixture
def admin(lip_server: Server) -> Client:
    return Client(lip_server.url, project=uuid.uuid4().hex, roles="admin")


@pytest.fixture
def owner(lip_server: Server) -> Client:
    return Client(lip_server.url, project=uuid.uuid4().hex, roles="member,reader")


@pytest.fixture
def other(lip_server: Server) -> Client:
    return Client(lip_server.url, project=uuid.uuid4().hex, roles="member,reader")
