"""Races between server processes on one database.

One server with two API worker processes, hammered by several client OS
processes at once. The database is the only thing they share, so anything
handed out twice, or any lost race surfacing as a 5xx, is a storage bug.

Ordering without clocks: every request takes a number from a shared counter
when it is sent and another when its answer arrives. A 409 "subnet full"
answered at tick T is premature exactly when some port creation *sent after*
T still succeeded (nothing is deleted during the run).
"""
from __future__ import annotations

import ipaddress
import multiprocessing
import queue
import time
import uuid
from typing import Any

import pytest
import requests
import sqlalchemy as sa

from neutrino.db import tables as t
from neutrino.db.engine import make_engine

pytestmark = pytest.mark.backend

CLIENTS = int(__import__("os").environ.get("NEUTRINO_RACE_CLIENTS", "5"))
SUBNET = "10.20.0.0/26"          # gateway .1, pool .2-.62
POOL_SIZE = 61
PER_CLIENT_LIMIT = POOL_SIZE + 10  # requests per client, whatever happens
FULL_ANSWERS_TO_STOP = 2          # a client stops after this many "full" answers
RUN_BUDGET = 240.0                # seconds, bounds every loop below
MP = multiprocessing.get_context("fork")


def _tick(counter: Any) -> int:
    with counter.get_lock():
        counter.value += 1
        return counter.value


def _port_client(url: str, network_id: str, counter: Any, barrier: Any,
                 out: Any, deadline: float) -> None:
    """Create ports until the subnet is reported full; report every answer.

    Each client is its own project, so per-project quota locks do not
    serialise the clients and the address allocation itself is raced."""
    session = requests.Session()
    project = uuid.uuid4().hex
    session.headers.update({"X-Project-Id": project, "X-User-Id": f"u-{project}",
                            "X-Roles": "admin"})
    results = []
    full = 0
    try:
        barrier.wait(timeout=60)
        for _ in range(PER_CLIENT_LIMIT):
            if full >= FULL_ANSWERS_TO_STOP or time.monotonic() > deadline:
                break
            sent = _tick(counter)
            try:
                resp = session.post(f"{url}/v2.0/ports", timeout=120,
                                    json={"port": {"network_id": network_id}})
                status, body = resp.status_code, _json(resp)
            except requests.RequestException as exc:
                status, body = -1, {"exception": repr(exc)}
            done = _tick(counter)
            results.append({"sent": sent, "done": done, "status": status, "body": body})
            if status == 409:
                full += 1
    finally:
        out.put(results)


def _subnet_client(url: str, pool_id: str, counter: Any, barrier: Any, out: Any,
                   deadline: float, attempts: int) -> None:
    """Create one network, then subnets on it from the pool until refused."""
    session = requests.Session()
    results = []
    try:
        net = session.post(f"{url}/v2.0/networks", json={"network": {"name": "pool-user"}},
                           timeout=60).json()["network"]["id"]
        barrier.wait(timeout=60)
        for _ in range(attempts):
            if time.monotonic() > deadline:
                break
            sent = _tick(counter)
            try:
                resp = session.post(f"{url}/v2.0/subnets", timeout=120, json={"subnet": {
                    "network_id": net, "ip_version": 4, "subnetpool_id": pool_id}})
                status, body = resp.status_code, _json(resp)
            except requests.RequestException as exc:
                status, body = -1, {"exception": repr(exc)}
            done = _tick(counter)
            results.append({"sent": sent, "done": done, "status": status, "body": body})
            if status != 201:
                break
    finally:
        out.put(results)


def _json(resp: requests.Response) -> Any:
    try:
        return resp.json()
    except ValueError:
        return {"text": resp.text[:500]}


def _run(target: Any, args: tuple[Any, ...], clients: int) -> list[dict[str, Any]]:
    counter = MP.Value("q", 0)
    barrier = MP.Barrier(clients)
    out = MP.Queue()
    deadline = time.monotonic() + RUN_BUDGET
    procs = [MP.Process(target=target, args=(*args[:2], counter, barrier, out, deadline,
                                             *args[2:]), daemon=True)
             for _ in range(clients)]
    for p in procs:
        p.start()
    results: list[dict[str, Any]] = []
    try:
        for _ in procs:
            results.extend(out.get(timeout=RUN_BUDGET + 60))
    except queue.Empty:
        pytest.fail("a client process did not report back")
    finally:
        for p in procs:
            p.join(timeout=10)
            if p.is_alive():
                p.kill()
    return results


def _server_log_counts(srv: Any) -> tuple[int, int]:
    text = srv.log.read_text(errors="replace")
    return text.count("retrying "), text.count("unexpected error")


def _summary(label: str, results: list[dict[str, Any]], retries: int) -> str:
    by_status: dict[int, int] = {}
    for r in results:
        by_status[r["status"]] = by_status.get(r["status"], 0) + 1
    return f"{label}: {len(results)} requests, by status {by_status}, {retries} retries logged"


def test_concurrent_port_creation_exhausts_subnet_without_duplicates(
        db_url: str, start_server: Any, client_for: Any) -> None:
    srv = start_server(db_url, workers=2, extra="debug = true")
    admin = client_for(srv)
    status, net = admin.post("/v2.0/networks", {"network": {"name": "race"}})
    assert status == 201, net
    net_id = net["network"]["id"]
    status, sub = admin.post("/v2.0/subnets", {"subnet": {
        "network_id": net_id, "ip_version": 4, "cidr": SUBNET}})
    assert status == 201, sub
    subnet_id = sub["subnet"]["id"]
    pool = sub["subnet"]["allocation_pools"]
    assert pool == [{"start": "10.20.0.2", "end": "10.20.0.62"}]

    results = _run(_port_client, (srv.url, net_id), CLIENTS)
    retries, crashes = _server_log_counts(srv)
    print(_summary(f"ports[{db_url.split(':')[0]}]", results, retries))

    unexpected = [r for r in results if r["status"] not in (201, 409)]
    assert not unexpected, unexpected[:3]
    assert crashes == 0
    conflicts = [r for r in results if r["status"] == 409]
    for r in conflicts:
        assert r["body"]["NeutronError"]["type"] == "IpAddressGenerationFailure", r
    created = [r["body"]["port"] for r in results if r["status"] == 201]
    ips = [ip["ip_address"] for p in created for ip in p["fixed_ips"]]
    macs = [p["mac_address"] for p in created]
    assert len(created) == POOL_SIZE
    assert all(len(p["fixed_ips"]) == 1 and p["fixed_ips"][0]["subnet_id"] == subnet_id
               for p in created)
    assert len(set(ips)) == len(ips) == POOL_SIZE
    assert len(set(macs)) == len(macs)
    net = ipaddress.ip_network(SUBNET)
    assert all(ipaddress.ip_address(ip) in net
               and ip not in (str(net[0]), str(net[1]), str(net[-1])) for ip in ips)
    # 409 only once full: no creation started after a "full" answer succeeded.
    first_full = min((r["done"] for r in conflicts), default=None)
    assert first_full is not None, "the subnet was never reported full"
    assert not [r for r in results if r["status"] == 201 and r["sent"] > first_full]

    # The API and the tables agree; nothing half-written was left behind.
    status, listed = admin.get(f"/v2.0/ports?network_id={net_id}")
    assert status == 200 and len(listed["ports"]) == POOL_SIZE
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(sa.select(t.ipallocations.c.ip_address)
                                .where(t.ipallocations.c.subnet_id == subnet_id)).all()
            assert sorted(r.ip_address for r in rows) == sorted(ips)
            assert conn.execute(sa.select(sa.func.count()).select_from(t.ports)
                                .where(t.ports.c.network_id == net_id)).scalar() == POOL_SIZE
    finally:
        engine.dispose()


def test_concurrent_subnet_allocation_from_one_pool_never_overlaps(
        db_url: str, start_server: Any, client_for: Any) -> None:
    srv = start_server(db_url, workers=2, extra="debug = true")
    admin = client_for(srv)
    prefix = ipaddress.ip_network("10.30.0.0/24")
    status, pool = admin.post("/v2.0/subnetpools", {"subnetpool": {
        "name": "race", "prefixes": [str(prefix)], "default_prefixlen": 28}})
    assert status == 201, pool
    pool_id = pool["subnetpool"]["id"]
    capacity = 2 ** (28 - 24)

    results = _run(_subnet_client, (srv.url, pool_id, capacity + 2), CLIENTS)
    retries, crashes = _server_log_counts(srv)
    print(_summary(f"subnets[{db_url.split(':')[0]}]", results, retries))

    assert not [r for r in results if r["status"] not in (201, 400)], results
    assert crashes == 0
    refused = [r for r in results if r["status"] == 400]
    for r in refused:
        assert r["body"]["NeutronError"]["type"] == "SubnetAllocationError", r
    cidrs = [ipaddress.ip_network(r["body"]["subnet"]["cidr"])
             for r in results if r["status"] == 201]
    assert len(cidrs) == capacity
    assert all(c.subnet_of(prefix) and c.prefixlen == 28 for c in cidrs)
    for i, a in enumerate(cidrs):
        for b in cidrs[i + 1:]:
            assert not a.overlaps(b), (a, b)
    first_refusal = min((r["done"] for r in refused), default=None)
    assert first_refusal is not None
    assert not [r for r in results if r["status"] == 201 and r["sent"] > first_refusal]


def _at_once(url: str, requests_: list[tuple[str, str, Any, dict[str, str]]]) -> list[tuple[int, Any]]:
    """Send the requests from as many threads, released together."""
    import threading
    barrier = threading.Barrier(len(requests_))
    out: list[tuple[int, Any]] = [(-1, None)] * len(requests_)

    def send(i: int, method: str, path: str, body: Any, headers: dict[str, str]) -> None:
        session = requests.Session()
        try:
            barrier.wait(timeout=30)
            resp = session.request(method, url + path, json=body, headers=headers, timeout=120)
            out[i] = (resp.status_code, _json(resp))
        except Exception as exc:  # noqa: BLE001 - reported as status -1
            out[i] = (-1, repr(exc))

    threads = [threading.Thread(target=send, args=(i, *r)) for i, r in enumerate(requests_)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=RUN_BUDGET)
    return out


def test_concurrent_conditional_updates_let_exactly_one_win(
        db_url: str, start_server: Any, client_for: Any) -> None:
    srv = start_server(db_url, workers=2)
    admin = client_for(srv)
    _, net = admin.post("/v2.0/networks", {"network": {"name": "cond"}})
    net = net["network"]
    admin.post("/v2.0/subnets", {"subnet": {"network_id": net["id"], "ip_version": 4,
                                            "cidr": "10.50.0.0/24"}})
    _, port = admin.post("/v2.0/ports", {"port": {"network_id": net["id"]}})
    port = port["port"]
    for plural, res in (("networks", admin.get(f"/v2.0/networks/{net['id']}")[1]["network"]),
                        ("ports", port)):
        header = {"If-Match": f"revision_number={res['revision_number']}"}
        results = _at_once(srv.url, [
            ("PUT", f"/v2.0/{plural}/{res['id']}", {plural[:-1]: {"name": f"w{i}"}}, header)
            for i in range(CLIENTS)])
        statuses = sorted(s for s, _ in results)
        assert statuses == [200] + [412] * (CLIENTS - 1), results
        winner = next(b for s, b in results if s == 200)[plural[:-1]]
        _, shown = admin.get(f"/v2.0/{plural}/{res['id']}")
        assert shown[plural[:-1]]["name"] == winner["name"]
        assert shown[plural[:-1]]["revision_number"] == winner["revision_number"]


def test_concurrent_same_cidr_on_one_network_is_created_once(
        db_url: str, start_server: Any, client_for: Any) -> None:
    srv = start_server(db_url, workers=2)
    admin = client_for(srv)
    _, net = admin.post("/v2.0/networks", {"network": {"name": "overlap"}})
    net_id = net["network"]["id"]
    results = _at_once(srv.url, [
        ("POST", "/v2.0/subnets", {"subnet": {"network_id": net_id, "ip_version": 4,
                                              "cidr": f"10.60.0.0/{24 + (i % 2)}"}}, {})
        for i in range(CLIENTS)])
    statuses = sorted(s for s, _ in results)
    assert statuses == [201] + [400] * (CLIENTS - 1), results
    _, listed = admin.get(f"/v2.0/subnets?network_id={net_id}")
    assert len(listed["subnets"]) == 1


def test_concurrent_tag_changes_on_one_resource_all_apply(
        db_url: str, start_server: Any, client_for: Any) -> None:
    srv = start_server(db_url, workers=2)
    admin = client_for(srv)
    _, net = admin.post("/v2.0/networks", {"network": {"name": "tags"}})
    net_id = net["network"]["id"]
    tags = [f"t{i}" for i in range(CLIENTS)] + ["same"] * CLIENTS
    results = _at_once(srv.url, [("PUT", f"/v2.0/networks/{net_id}/tags/{tag}", None, {})
                                 for tag in tags])
    assert all(s == 201 for s, _ in results), results
    _, shown = admin.get(f"/v2.0/networks/{net_id}")
    assert sorted(shown["network"]["tags"]) == sorted(set(tags))
