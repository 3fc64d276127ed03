"""Concurrent interface changes on one router, on every SQL backend.

A server with two API worker processes gets several ``add_router_interface``
requests for one router at once. Different subnets must all land (no lost
update of the router's ports or revision); overlapping ones must not both.
"""
from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Client, Server

pytestmark = pytest.mark.backend

CLIENTS = 6


@pytest.fixture
def srv(tmp_path: Path, db_url: str):
    server = Server(tmp_path, db_url=db_url, workers=2,
                    extra="service_plugins = router\n").start()
    yield server
    server.stop()


def _all_at_once(calls: list[Any]) -> list[tuple[int, Any]]:
    barrier = threading.Barrier(len(calls))

    def run(call: Any) -> tuple[int, Any]:
        barrier.wait(timeout=60)
        return call()
    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(run, calls))


def _setup(client: Client, cidrs: list[str]) -> tuple[str, list[str]]:
    router = client.post("/v2.0/routers", {"router": {"name": "r"}})[1]["router"]["id"]
    subnets = []
    for cidr in cidrs:
        net = client.post("/v2.0/networks", {"network": {"name": "n"}})[1]["network"]["id"]
        status, body = client.post("/v2.0/subnets", {"subnet": {
            "network_id": net, "ip_version": 4, "cidr": cidr}})
        assert status == 201, body
        subnets.append(body["subnet"]["id"])
    return router, subnets


def test_interfaces_for_different_subnets_all_land(srv: Server) -> None:
    client = Client(srv.url, uuid.uuid4().hex, "member")
    router, subnets = _setup(client, [f"10.{i}.0.0/24" for i in range(CLIENTS)])
    url = f"/v2.0/routers/{router}/add_router_interface"
    results = _all_at_once([
        (lambda s=s: Client(srv.url, client.session.headers["X-Project-Id"], "member")
         .put(url, {"subnet_id": s})) for s in subnets])
    assert [code for code, _ in results] == [200] * CLIENTS, results
    ports = client.get(f"/v2.0/ports?device_id={router}")[1]["ports"]
    assert sorted(p["fixed_ips"][0]["subnet_id"] for p in ports) == sorted(subnets)
    body = client.get(f"/v2.0/routers/{router}")[1]["router"]
    assert body["revision_number"] == 1 + CLIENTS
    assert client.delete(f"/v2.0/routers/{router}")[0] == 409


def test_overlapping_subnets_added_at_once_are_not_both_accepted(srv: Server) -> None:
    client = Client(srv.url, uuid.uuid4().hex, "member")
    router, subnets = _setup(client, ["10.50.0.0/24", "10.50.0.0/25", "10.50.0.128/25"])
    url = f"/v2.0/routers/{router}/add_router_interface"
    project = client.session.headers["X-Project-Id"]
    results = _all_at_once([(lambda s=s: Client(srv.url, project, "member")
                             .put(url, {"subnet_id": s})) for s in subnets])
    codes = sorted(code for code, _ in results)
    assert codes.count(200) in (1, 2), results
    assert all(code in (200, 400) for code in codes), results
    ports = client.get(f"/v2.0/ports?device_id={router}")[1]["ports"]
    on = {p["fixed_ips"][0]["subnet_id"] for p in ports}
    # never the /24 together with one of its halves
    assert not (subnets[0] in on and len(on) > 1), on
    assert len(ports) == codes.count(200)
