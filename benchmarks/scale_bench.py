#!/usr/bin/env python3
"""Lists against a large database: 100,000 ports, paged and filtered.

The performance issue's targets for a big deployment: with 100,000 ports in
the database, a page of ``limit=100`` after a ``marker`` and a filter on
``device_id`` or ``network_id`` answer in under 20 ms (p50). This script
builds such a database quickly (bulk inserts of the rows the API would
have written, no API calls), starts ``neutrino serve`` on it, times the
requests over one keep-alive connection and prints percentiles.

    .venv/bin/python benchmarks/scale_bench.py --ports 100000            # SQLite file
    .venv/bin/python benchmarks/scale_bench.py --db postgresql           # a new PG database
    .venv/bin/python benchmarks/scale_bench.py --db mariadb              # a new MariaDB database

Everything it makes (temporary directory, database, server process) is
removed at the end, also when a step fails.
"""
from __future__ import annotations

import argparse
import datetime as dt
import http.client
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, Callable

import sqlalchemy as sa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from neutrino.db import migrate  # noqa: E402
from neutrino.db import tables as t  # noqa: E402

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
PROJECT = "b3c4b3c4000040008000be4c4be4c4b3"
HEADERS = {"X-User-Id": "bench", "X-Project-Id": PROJECT, "X-Roles": "admin"}


def pg_database() -> tuple[str, Callable[[], None]]:
    import psycopg
    name = f"neutrino_scale_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')

    def drop() -> None:
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}", drop


def mariadb_database(prefix: str = "neutrino_scale_") -> tuple[str, Callable[[], None]]:
    """A new database on the machine's MariaDB (mysqlclient's ``mysql://``,
    as ``make bench``), and how to drop it."""
    import pymysql
    name = prefix + uuid.uuid4().hex[:8]
    conn = pymysql.connect(host="127.0.0.1", user="root", password="", autocommit=True)
    conn.cursor().execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")

    def drop() -> None:
        conn.cursor().execute(f"DROP DATABASE IF EXISTS `{name}`")
        conn.close()
    return f"mysql://root@127.0.0.1:3306/{name}", drop


def populate(url: str, ports: int, per_network: int) -> list[dict[str, str]]:
    """Networks of ``per_network`` ports, each with a /16 subnet; the ports
    with an address, a binding and port security, as the API writes them.
    Returns a sample of (id, network_id, device_id) to query by."""
    migrate.upgrade(url)
    engine = sa.create_engine(url)
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None, microsecond=0)
    std = {"project_id": PROJECT, "description": "", "created_at": now, "updated_at": now,
           "revision_number": 1}
    nets, subnets, rows, ips, bindings, security = [], [], [], [], [], []
    sample = []
    for n in range((ports + per_network - 1) // per_network):
        net_id, subnet_id = str(uuid.uuid4()), str(uuid.uuid4())
        nets.append({"id": net_id, "name": f"net{n}", "admin_state_up": True,
                     "status": "ACTIVE", "mtu": 1450, **std})
        subnets.append({"id": subnet_id, "name": "", "network_id": net_id, "ip_version": 4,
                        "cidr": "10.0.0.0/16", "gateway_ip": "10.0.0.1", "enable_dhcp": True,
                        **std})
        for i in range(min(per_network, ports - n * per_network)):
            port_id, device = str(uuid.uuid4()), str(uuid.uuid4())
            rows.append({"id": port_id, "name": "", "network_id": net_id,
                         "mac_address": "fa:16:3e:%02x:%02x:%02x" % (n >> 8 & 255, n & 255, i),
                         "admin_state_up": True, "status": "DOWN", "device_id": device,
                         "device_owner": "compute:nova", "ip_allocation": "immediate", **std})
            ips.append({"port_id": port_id, "subnet_id": subnet_id, "network_id": net_id,
                        "ip_address": f"10.0.{i >> 8}.{(i & 255) + 2}"})
            bindings.append({"port_id": port_id, "host": "", "vnic_type": "normal",
                             "profile": "", "vif_type": "unbound", "vif_details": ""})
            security.append({"port_id": port_id, "port_security_enabled": True})
            if random.random() < 0.01:
                sample.append({"id": port_id, "network_id": net_id, "device_id": device})
    with engine.begin() as conn:
        for table, values in ((t.networks, nets), (t.subnets, subnets), (t.ports, rows),
                              (t.ipallocations, ips), (t.ml2_port_bindings, bindings),
                              (t.port_port_security, security)):
            for start in range(0, len(values), 20_000):
                conn.execute(sa.insert(table), values[start:start + 20_000])
    # Statistics, as autovacuum (PostgreSQL) would gather them soon after such
    # an insert; without them PostgreSQL scans whole child tables.
    with engine.begin() as conn:
        if engine.dialect.name == "mysql":  # InnoDB's statistics, refreshed now
            names = ", ".join(tb.name for tb in (t.networks, t.subnets, t.ports, t.ipallocations,
                                                 t.ml2_port_bindings, t.port_port_security))
            conn.exec_driver_sql(f"ANALYZE TABLE {names}")
        else:
            conn.exec_driver_sql("ANALYZE")
    engine.dispose()
    return sample


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(url: str, workdir: Path, workers: int) -> tuple[subprocess.Popen[bytes], int]:
    port = _free_port()
    conf = workdir / "n.conf"
    conf.write_text(f"[DEFAULT]\nbind_host = 127.0.0.1\nbind_port = {port}\n"
                    f"auth_strategy = noauth\napi_workers = {workers}\n"
                    f"state_path = {workdir}\n[database]\nconnection = {url}\n"
                    f"[ml2]\nextension_drivers = port_security\n")
    proc = subprocess.Popen([str(Path(sys.executable).parent / "neutrino"), "serve",
                             "--config-file", str(conf)],
                            stdout=subprocess.DEVNULL, stderr=open(workdir / "server.log", "wb"))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.request("GET", "/v2.0/networks?limit=1", headers=HEADERS)
            if c.getresponse().status == 200:
                return proc, port
        except OSError:
            time.sleep(0.2)
    proc.terminate()
    raise RuntimeError(f"server did not start; see {workdir / 'server.log'}")


def timed(conn: http.client.HTTPConnection, path: str) -> tuple[float, Any]:
    start = time.perf_counter()
    conn.request("GET", path, headers=HEADERS)
    resp = conn.getresponse()
    body = resp.read()
    elapsed = (time.perf_counter() - start) * 1000
    if resp.status != 200:
        raise RuntimeError(f"GET {path}: {resp.status} {body[:200]!r}")
    return elapsed, json.loads(body)


def scenarios(sample: list[dict[str, str]]) -> dict[str, Callable[[int], str]]:
    pick = lambda i: sample[i % len(sample)]  # noqa: E731
    return {
        "first page (limit=100)": lambda i: "/v2.0/ports?limit=100",
        "page after a marker (limit=100)": lambda i: f"/v2.0/ports?limit=100&marker={pick(i)['id']}",
        "filter device_id": lambda i: f"/v2.0/ports?device_id={pick(i)['device_id']}",
        "filter network_id (100 ports)": lambda i: f"/v2.0/ports?network_id={pick(i)['network_id']}",
        "filter network_id, limit=10": lambda i: f"/v2.0/ports?network_id={pick(i)['network_id']}&limit=10",
        "list 1,000 ports (limit=1000)": lambda i: "/v2.0/ports?limit=1000",
    }


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ports", type=int, default=100_000)
    ap.add_argument("--per-network", type=int, default=100)
    ap.add_argument("--db", choices=("sqlite", "postgresql", "mariadb"), default="sqlite")
    ap.add_argument("--requests", type=int, default=100, help="timed requests per scenario")
    ap.add_argument("--workers", type=int, default=1)
    args = ap.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="neutrino-scale-"))
    drop: Callable[[], None] = lambda: None  # noqa: E731
    proc = None
    try:
        if args.db == "postgresql":
            url, drop = pg_database()
        elif args.db == "mariadb":
            url, drop = mariadb_database()
        else:
            url = f"sqlite:///{workdir / 'scale.sqlite'}"
        started = time.perf_counter()
        sample = populate(url, args.ports, args.per_network)
        print(f"populated {args.ports} ports in {time.perf_counter() - started:.1f} s ({args.db})")
        proc, port = serve(url, workdir, args.workers)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        print(f"load average before: {os.getloadavg()[0]:.2f}")
        print("| scenario | rows | p50 ms | p90 ms |\n|---|---:|---:|---:|")
        for name, path_of in scenarios(sample).items():
            for i in range(5):  # warm-up
                timed(conn, path_of(i))
            times, rows = [], 0
            for i in range(args.requests):
                elapsed, body = timed(conn, path_of(i))
                times.append(elapsed)
                rows = len(body["ports"])
            print(f"| {name} | {rows} | {pct(times, 50):.1f} | {pct(times, 90):.1f} |")
        print(f"load average after: {os.getloadavg()[0]:.2f}")
        return 0
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(30)
        drop()
        import shutil
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
