"""A server with the vpnaas plugin (and flavors, for ``vpn-flavors``)."""
from __future__ import annotations

import uuid
from typing import Iterator

import pytest

from tests.conftest import Client, Server, serving, with_plugin


@pytest.fixture(scope="module")
def vpn_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from serving(tmp_path_factory.mktemp("vpn-server"), with_plugin("vpnaas"))


@pytest.fixture
def admin(vpn_server: Server) -> Client:
    return Client(vpn_server.url, project=uuid.uuid4().hex, roles="admin")


@pytest.fixture
def owner(vpn_server: Server) -> Client:
    return Client(vpn_server.url, project=uuid.uuid4().hex, roles="member,reader")


@pytest.fixture
def other(vpn_server: Server) -> Client:
    return Client(vpn_server.url, project=uuid.uuid4().hex, roles="member,reader")
