"""A server with the firewall_v2 plugin beside the session's (router among them)."""
from __future__ import annotations

import uuid
from typing import Iterator

import pytest

from tests.conftest import Client, Server, serving, with_plugin


@pytest.fixture(scope="module")
def fw_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from serving(tmp_path_factory.mktemp("fwaas-server"), with_plugin("firewall_v2"))


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
