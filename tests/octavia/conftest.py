"""A server with the octavia plugin (noop provider) and clients for an
owning project, another project, a reader and an admin."""
from __future__ import annotations

import time
import uuid
from typing import Any, Iterator

import pytest

from tests.conftest import Client, Server, serving, with_plugin

LB = "/load-balancer/v2/lbaas"


@pytest.fixture(scope="module")
def lb_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from serving(tmp_path_factory.mktemp("octavia-server"), with_plugin("octavia"))


def _client(srv: Server, project: str, roles: str) -> Client:
    return Client(srv.url, project=project, roles=roles)


@pytest.fixture
def project() -> str:
    return uuid.uuid4().hex


@pytest.fixture
def owner(lb_server: Server, project: str) -> Client:
    return _client(lb_server, project, "member,reader")


@pytest.fixture
def reader(lb_server: Server, project: str) -> Client:
    return _client(lb_server, project, "reader")


@pytest.fixture
def other(lb_server: Server) -> Client:
    return _client(lb_server, uuid.uuid4().hex, "member,reader")


@pytest.fixture
def admin(lb_server: Server) -> Client:
    return _client(lb_server, uuid.uuid4().hex, "admin,member,reader")


def subnet(client: Client, cidr: str = "10.20.0.0/24") -> dict[str, Any]:
    status, net = client.post("/v2.0/networks", {"network": {"name": "lbnet"}})
    assert status == 201, net
    status, sub = client.post("/v2.0/subnets", {"subnet": {
        "network_id": net["network"]["id"], "cidr": cidr, "ip_version": 4}})
    assert status == 201, sub
    return sub["subnet"]  # type: ignore[no-any-return]


def wait_active(client: Client, path: str, key: str) -> dict[str, Any]:
    for _ in range(100):
        status, body = client.get(path)
        assert status == 200, body
        if body[key]["provisioning_status"] == "ACTIVE":
            return body[key]  # type: ignore[no-any-return]
        time.sleep(0.05)
    raise AssertionError(f"{path} never became ACTIVE: {body}")


def make_lb(client: Client, **extra: Any) -> dict[str, Any]:
    sub = subnet(client)
    status, body = client.post(f"{LB}/loadbalancers", {"loadbalancer": {
        "name": "lb1", "vip_subnet_id": sub["id"], **extra}})
    assert status == 201, body
    return wait_active(client, f"{LB}/loadbalancers/{body['loadbalancer']['id']}",
                       "loadbalancer")
