"""The scale-out load and its checks, shared by every test that runs several
servers on one database (tests/scaleout, tests/galera).

Four client processes, two per project, create networks until refused and
create ports, deleting every other one, on a shared network whose subnet,
VLANs, VNIs and quotas are small enough to run dry. Clients retry a request
only when the balancer says the server was lost (connection reset, 502,
HAProxy's own 503/504), as keystoneauth's ``connect_retries``/
``status_code_retries`` do; a create whose answer was lost may thus have
happened -- what it made must then be complete.
"""
from __future__ import annotations

import multiprocessing
import queue
import time
import uuid
from typing import Any

import requests
import sqlalchemy as sa

from neutrino.db import tables as t

MP = multiprocessing.get_context("fork")
CLIENTS = 4                    # two per project
SMALL_NETWORK_QUOTA = 3        # project "a" (by the quota API); "b" keeps quota_network = 8
PORT_QUOTA = 8                 # [quotas] quota_port of the template
PORT_CIDR = "10.9.0.0/28"      # 13 addresses for 2 x 8 ports: addresses run out too
SEGMENTS = {"vlan": set(range(100, 105)), "vxlan": set(range(1000, 1005))}
MAX_ITERATIONS = 150           # per client, a bound in case the run stalls
RUN_BUDGET = 240.0
RETRIES = 8
EXPECTED = {
    "network": {201, 409, 503},   # created, OverQuota, NoNetworkAvailable
    "port": {201, 409},           # created, OverQuota or IpAddressGenerationFailure
    "delete": {204, 404},         # 404: an earlier attempt's answer was lost
}


def lost_by_balancer(resp: requests.Response) -> bool:
    """502/504, or a 503 that is HAProxy's page rather than a Neutron error."""
    if resp.status_code in (502, 504):
        return True
    return resp.status_code == 503 and "NeutronError" not in resp.text


def send(session: requests.Session, method: str, url: str, body: Any = None) -> dict[str, Any]:
    attempts = 0
    while True:
        attempts += 1
        try:
            resp = session.request(method, url, json=body, timeout=60)
        except requests.ConnectionError as exc:
            if attempts < RETRIES:
                time.sleep(0.2)
                continue
            return {"status": -1, "body": repr(exc), "attempts": attempts}
        if lost_by_balancer(resp) and attempts < RETRIES:
            time.sleep(0.2)
            continue
        try:
            data = resp.json() if resp.content else None
        except ValueError:
            data = resp.text
        return {"status": resp.status_code, "body": data, "attempts": attempts}


def client(url: str, project: str, net_id: str, tag: int, answered: Any, stop: Any,
           out: Any) -> None:
    """Create networks until refused; create ports and delete every other one."""
    session = requests.Session()
    session.headers.update({"X-Project-Id": project, "X-User-Id": f"u{tag}",
                            "X-Roles": "member"})
    results: list[dict[str, Any]] = []
    mine: list[str] = []
    networks_open = True

    def record(kind: str, name: str, res: dict[str, Any]) -> dict[str, Any]:
        results.append({"kind": kind, "name": name, **res})
        with answered.get_lock():
            answered.value += 1
        return res

    try:
        for i in range(MAX_ITERATIONS):
            if stop.is_set():
                break
            if networks_open:
                name = f"n-{tag}-{i}"
                res = record("network", name, send(session, "POST", f"{url}/v2.0/networks",
                                                   {"network": {"name": name}}))
                networks_open = res["status"] == 201
            name = f"p-{tag}-{i}"
            res = record("port", name, send(session, "POST", f"{url}/v2.0/ports",
                                            {"port": {"name": name, "network_id": net_id}}))
            if res["status"] == 201:
                mine.append(res["body"]["port"]["id"])
            if i % 2 and mine:
                victim = mine.pop(0)
                record("delete", victim, send(session, "DELETE", f"{url}/v2.0/ports/{victim}"))
    finally:
        out.put(results)


def quota_sample(engine: sa.Engine, projects: dict[str, str]) -> dict[str, tuple[int, int]]:
    """(networks, ports) per project, as committed right now."""
    with engine.connect() as conn:
        out = {}
        for key, project in projects.items():
            nets = conn.execute(sa.select(sa.func.count()).select_from(t.networks)
                                .where(t.networks.c.project_id == project)).scalar_one()
            ports = conn.execute(sa.select(sa.func.count()).select_from(t.ports)
                                 .where(t.ports.c.project_id == project)).scalar_one()
            out[key] = (nets, ports)
    return out


def prepare(url: str) -> tuple[dict[str, str], str]:
    """Two projects (the first with a small network quota) and the shared
    network, with its small subnet, that their ports go on."""
    admin = requests.Session()
    projects = {"a": uuid.uuid4().hex, "b": uuid.uuid4().hex}
    resp = admin.put(f"{url}/v2.0/quotas/{projects['a']}",
                     json={"quota": {"network": SMALL_NETWORK_QUOTA}}, timeout=30)
    assert resp.status_code == 200, resp.text
    net = admin.post(f"{url}/v2.0/networks",
                     json={"network": {"name": "ports", "shared": True}}, timeout=30).json()
    net_id = net["network"]["id"]
    resp = admin.post(f"{url}/v2.0/subnets", timeout=30, json={"subnet": {
        "network_id": net_id, "ip_version": 4, "cidr": PORT_CIDR}})
    assert resp.status_code == 201, resp.text
    return projects, net_id


class Load:
    """The clients, running; client ``n`` talks to ``urls[n % len(urls)]``.
    Quota usage is sampled while waiting for answers."""

    def __init__(self, urls: list[str], projects: dict[str, str], net_id: str,
                 engine: sa.Engine) -> None:
        self.engine, self.projects = engine, projects
        self.answered, self.stop, self.out = MP.Value("i", 0), MP.Event(), MP.Queue()
        self.samples: list[dict[str, tuple[int, int]]] = []
        self.deadline = time.monotonic() + RUN_BUDGET
        keys = sorted(projects)
        self.procs = [MP.Process(target=client, args=(
            urls[n % len(urls)], projects[keys[n % 2]], net_id, n, self.answered,
            self.stop, self.out)) for n in range(CLIENTS)]
        for proc in self.procs:
            proc.start()

    def sample(self) -> None:
        self.samples.append(quota_sample(self.engine, self.projects))

    def wait_for(self, count: int) -> None:
        """Until ``count`` requests were answered in all, the clients are
        done, or the run's budget is spent."""
        while self.answered.value < count and time.monotonic() < self.deadline:
            if not any(p.is_alive() for p in self.procs):
                return
            self.sample()
            time.sleep(0.02)

    def finish(self) -> list[dict[str, Any]]:
        """Stop the clients; what each did."""
        self.stop.set()
        results: list[dict[str, Any]] = []
        for _ in self.procs:
            try:
                results.extend(self.out.get(timeout=RUN_BUDGET))
            except queue.Empty:
                break
        for proc in self.procs:
            proc.join(timeout=30)
        self.sample()
        return results


def check_quota(samples: list[dict[str, tuple[int, int]]]) -> None:
    """No sampled moment over either project's network or port quota."""
    quota = {"a": (SMALL_NETWORK_QUOTA, PORT_QUOTA), "b": (8, PORT_QUOTA)}
    over = [s for s in samples for k, (n, p) in s.items()
            if n > quota[k][0] or p > quota[k][1]]
    assert not over, over


def check_answers(results: list[dict[str, Any]]) -> None:
    """Every request got an answer Neutron gives; every error is Neutron's."""
    unexpected = [r for r in results if r["status"] not in EXPECTED[r["kind"]]]
    assert not unexpected, unexpected[:5]
    errors = [r for r in results if r["status"] >= 400 and r["status"] != 404]
    assert all(isinstance(r["body"], dict) and r["body"]["NeutronError"]["type"] in {
        "OverQuota", "NoNetworkAvailable", "IpAddressGenerationFailure"} for r in errors), errors[:5]
    created = {r["kind"] for r in results if r["status"] == 201}
    assert created == {"network", "port"}


def check_api(url: str, projects: dict[str, str], results: list[dict[str, Any]]) -> dict[str, Any]:
    """Everything answered 201 (and not deleted) is there, complete."""
    admin = requests.Session()
    nets = admin.get(f"{url}/v2.0/networks", timeout=30).json()["networks"]
    ports = admin.get(f"{url}/v2.0/ports", timeout=30).json()["ports"]
    # a 404 answers a retried delete whose first attempt's answer was lost
    # with its server: only the client that made a port deletes it
    deleted = {r["name"] for r in results if r["kind"] == "delete" and (
        r["status"] == 204 or (r["status"] == 404 and r["attempts"] > 1))}
    made = {r["body"][r["kind"]]["id"]: r for r in results if r["status"] == 201}
    present = {n["id"] for n in nets} | {p["id"] for p in ports}
    missing = [made[i] for i in set(made) - deleted - present]
    assert not missing, f"a create answered 201 is missing: {missing}"
    assert not deleted & present, "a delete answered 204 is still there"
    for port in ports:
        assert len(port["fixed_ips"]) == 1, port
    mine = set(projects.values())
    assert all(n["provider:segmentation_id"] is not None for n in nets if n["project_id"] in mine)
    return {"networks": {n["id"] for n in nets}, "ports": {p["id"] for p in ports}}


def check_db(engine: sa.Engine, listed: dict[str, Any]) -> None:
    """No segment, IP or MAC twice; no allocation without its owner or owner
    without its allocation; the API and the tables agree."""
    with engine.connect() as conn:
        segs = conn.execute(sa.select(t.network_segments.c.network_id,
                                      t.network_segments.c.network_type,
                                      t.network_segments.c.segmentation_id)).all()
        nets = set(conn.execute(sa.select(t.networks.c.id)).scalars())
        ports = conn.execute(sa.select(t.ports.c.id, t.ports.c.network_id,
                                       t.ports.c.mac_address)).all()
        ips = conn.execute(sa.select(t.ipallocations.c.port_id,
                                     t.ipallocations.c.ip_address)).all()
        vlans = set(conn.execute(sa.select(t.ml2_vlan_allocations.c.vlan_id)
                                 .where(t.ml2_vlan_allocations.c.allocated.is_(True))).scalars())
        vnis = set(conn.execute(sa.select(t.ml2_vxlan_allocations.c.id)
                                .where(t.ml2_vxlan_allocations.c.allocated.is_(True))).scalars())
        bound = sorted(conn.execute(sa.select(t.ml2_port_bindings.c.port_id)).scalars())
        guarded = set(conn.execute(sa.select(t.securitygroupportbindings.c.port_id)).scalars())
        defaults = conn.execute(sa.select(t.securitygroups.c.project_id)
                                .where(t.securitygroups.c.name == "default")).scalars().all()
    assert nets == listed["networks"] and {p.id for p in ports} == listed["ports"]
    assert {s.network_id for s in segs} == nets, "a network without a segment, or the reverse"
    keys = [(s.network_type, s.segmentation_id) for s in segs]
    assert len(keys) == len(set(keys)), "a segment given twice"
    assert {i for ty, i in keys if ty == "vlan"} == vlans
    assert {i for ty, i in keys if ty == "vxlan"} == vnis
    assert vlans <= SEGMENTS["vlan"] and vnis <= SEGMENTS["vxlan"]
    macs = [p.mac_address for p in ports]
    assert len(macs) == len(set(macs)), "a MAC given twice"
    addresses = [ip.ip_address for ip in ips]
    assert len(addresses) == len(set(addresses)), "an IP given twice"
    assert sorted(ip.port_id for ip in ips) == sorted(p.id for p in ports), \
        "a port without its IP, or an IP without its port"
    assert bound == sorted(p.id for p in ports), "a port without its binding row"
    assert guarded == {p.id for p in ports}, "a port without its default security group"
    assert len(defaults) == len(set(defaults)), "two default security groups for a project"
