"""Fixtures of the security group tests: builders over the session server,
and a server with the ``port_security`` extension driver for the tests of
groups on ports."""
from __future__ import annotations

import uuid
from typing import Any, Iterator

import pytest

from tests.api._helpers import created, unique
from tests.conftest import Client, Server


@pytest.fixture
def reader(server: Server, project_id: str) -> Client:
    """A reader of ``member``'s project."""
    return Client(server.url, project_id, "reader")


@pytest.fixture
def project_admin(server: Server) -> Client:
    """An admin whose token is scoped to a project of its own."""
    return Client(server.url, uuid.uuid4().hex, "admin")


@pytest.fixture(scope="module")
def ps_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("sg-ps"),
                 extra="[ml2]\nextension_drivers = port_security\n").start()
    yield srv
    srv.stop()


@pytest.fixture
def ps_member(ps_server: Server) -> Client:
    return Client(ps_server.url, uuid.uuid4().hex, "member")


def group(client: Any, **attrs: Any) -> dict[str, Any]:
    attrs.setdefault("name", unique("sg"))
    return created(client.post("/v2.0/security-groups", {"security_group": attrs}),
                   "security_group")


def rule(client: Any, group_id: str, **attrs: Any) -> dict[str, Any]:
    attrs.setdefault("direction", "ingress")
    return created(client.post("/v2.0/security-group-rules", {"security_group_rule": {
        "security_group_id": group_id, **attrs}}), "security_group_rule")


def default_group(client: Any) -> dict[str, Any]:
    status, body = client.get("/v2.0/security-groups?name=default")
    assert status == 200, body
    (found,) = body["security_groups"]
    return found


def network_with_subnet(client: Any, cidr: str = "10.20.0.0/24", **attrs: Any) -> dict[str, Any]:
    net = created(client.post("/v2.0/networks", {"network": {"name": unique("net"), **attrs}}),
                  "network")
    created(client.post("/v2.0/subnets", {"subnet": {"network_id": net["id"], "ip_version": 4,
                                                     "cidr": cidr}}), "subnet")
    return net
