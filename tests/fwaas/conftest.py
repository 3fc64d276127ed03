"""A server with the firewall_v2 plugin beside the session's (router among them)."""
from __future__ import annotations

import uuid
from typing import Iterator

import pytest

from tests.conftest import SESSION_EXTRA, Client, Server


@pytest.fixture(scope="module")
def fw_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    extra = SESSION_EXTRA.replace("service_plugins = ", "service_plugins = firewall_v2,", 1)
    srv = Server(tmp_path_factory.mktemp("fwaas-server"), extra=extra).start()
    yield srv
    srv.stop()


@pytest.fixture
def admin(fw_server: Server) -> Client:
    return Client(fw_server.url, project=uuid.uuid4().hex, roles="admin")


@pytest.fixture
def owner(fw_server: Server) -> Client:
    return Client(fw_server.url, project=uuid.uuid4().hex, roles="member,reader")


@pytest.fixture
def other(fw_server: Server) -> Client:
    return Client(fw_server.url, project=uuid.uuid4().hex, roles="member,reader")


@pytest.fixture
def reader(fw_server: Server, owner: Client) -> Client:
    """A reader of the owner's project."""
    return Client(fw_server.url, project=str(owner.session.headers["X-Project-Id"]),
                  roles="reader")
