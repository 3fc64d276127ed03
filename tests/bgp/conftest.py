"""A server with the bgp plugin beside the session's plugins."""
from __future__ import annotations

import uuid
from typing import Iterator

import pytest

from tests.conftest import SESSION_EXTRA, Client, Server


@pytest.fixture(scope="module")
def bgp_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    extra = SESSION_EXTRA.replace("service_plugins = ", "service_plugins = bgp,", 1)
    srv = Server(tmp_path_factory.mktemp("bgp-server"), extra=extra).start()
    yield srv
    srv.stop()


@pytest.fixture
def admin(bgp_server: Server) -> Client:
    return Client(bgp_server.url, project=uuid.uuid4().hex, roles="admin,member,reader")


@pytest.fixture
def owner(bgp_server: Server) -> Client:
    return Client(bgp_server.url, project=uuid.uuid4().hex, roles="member,reader")


@pytest.fixture
def other(bgp_server: Server) -> Client:
    return Client(bgp_server.url, project=uuid.uuid4().hex, roles="member,reader")
