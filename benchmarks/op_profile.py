#!/usr/bin/env python3
"""CPU, wall time and SQL statements of single API requests, in-process.

Over HTTP a request's latency mixes the server's work with the client's
and the kernel's; in-process (Falcon's test client, no sockets but the
database's) what is left is the server code and its database round trips,
so this is where the write and read paths are profiled. The configuration
is ``make bench``'s (openvswitch, VXLAN, port_security and qos, the same
service plugins); the database is SQLite or a fresh MariaDB (``mysql://``,
mysqlclient) or PostgreSQL database.

    .venv/bin/python benchmarks/op_profile.py [--db mariadb|postgresql] [--requests 200] \
        [--ops port-create,port-show] [--profile port-show] [--statements port-show] [--scans]

``--scans`` (MariaDB) asks the server's plan of every SELECT, UPDATE and
DELETE the measured requests sent, with 1,000 ports and more in the
database, and lists those that read a table whole (``ALL``/``index`` over
more than 50 rows): the statements whose cost grows with the database.

``--profile`` prints cProfile's table: ``SORT`` (tottime), ``FILTER`` (a
regular expression on the rows) and ``TOP`` (30) shape it; ``CALLERS=regex``
adds who called the functions it matches (the test client's own costs,
such as its ``getfullargspec`` per request, show up that way).
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from side_by_side import ML2_CONF, SERVICE_PLUGINS  # noqa: E402

from neutrino.cmd.serve import tune_gc  # noqa: E402
from tests.inprocess import CountingApp  # noqa: E402
from tests.sql_events import listen_all, remove_all  # noqa: E402

CONFIG = f"[DEFAULT]\nservice_plugins = {SERVICE_PLUGINS}\n{ML2_CONF}"
OPS = ("network-create", "network-show", "network-filter", "network-update", "network-delete",
       "subnet-create", "subnet-show", "subnet-update", "subnet-delete",
       "port-create", "port-create-busy", "port-show", "port-show-cold", "port-update",
       "port-delete", "port-list", "port-filter")
HEADERS = {"X-Project-Id": "bench", "X-Roles": "admin", "X-User-Id": "u"}


def mariadb() -> tuple[str, Callable[[], None]]:
    from scale_bench import mariadb_database
    return mariadb_database("neutrino_prof_")


def postgresql() -> tuple[str, Callable[[], None]]:
    from scale_bench import pg_database
    return pg_database()


class Ops:
    """One request per op, each on a target the setup made untimed."""

    def __init__(self, app: CountingApp, requests: int) -> None:
        self.app = app
        self.net = self.post("/v2.0/networks", {"network": {"name": "n"}})["network"]["id"]
        self.subnet = self.post("/v2.0/subnets", {"subnet": {
            "network_id": self.net, "ip_version": 4, "cidr": "10.0.0.0/16"}})["subnet"]["id"]
        # Port creates go to a network of their own, as in api_bench.py;
        # "port-create-busy" adds to the 1,000-port one.
        self.fresh = self.post("/v2.0/networks", {"network": {"name": "c"}})["network"]["id"]
        self.post("/v2.0/subnets", {"subnet": {"network_id": self.fresh, "ip_version": 4,
                                               "cidr": "10.1.0.0/16"}})
        self.ports: list[str] = []
        for _start in range(0, 1000 + requests, 100):
            body = {"ports": [{"network_id": self.net} for _ in range(100)]}
            self.ports += [p["id"] for p in self.post("/v2.0/ports", body)["ports"]]
        # What the "-filter" ops look up by name, one match among many.
        self.post("/v2.0/networks", {"network": {"name": "filtered"}})
        self.post("/v2.0/ports", {"port": {"network_id": self.net, "name": "filtered"}})
        self.k = 0

    def post(self, path: str, body: Any) -> Any:
        res = self.app.client.simulate_post(path, json=body, headers=HEADERS)
        assert res.status_code == 201, res.text
        return res.json

    def request(self, op: str) -> tuple[str, str, Any]:
        self.k += 1
        if op == "network-create":
            return "POST", "/v2.0/networks", {"network": {"name": f"n{self.k}"}}
        if op == "network-filter":  # by name, one match among many
            return "GET", "/v2.0/networks?name=filtered", None
        if op == "port-filter":
            return "GET", "/v2.0/ports?name=filtered", None
        if op in ("network-show", "network-update"):
            body = {"network": {"name": f"u{self.k}"}} if op == "network-update" else None
            return ("PUT" if body else "GET"), f"/v2.0/networks/{self.net}", body
        if op == "network-delete":  # a network of its own, made untimed
            net = self.post("/v2.0/networks", {"network": {"name": "d"}})["network"]["id"]
            return "DELETE", f"/v2.0/networks/{net}", None
        if op in ("subnet-create", "subnet-delete"):  # on a network of its own, as api_bench
            net = self.post("/v2.0/networks", {"network": {"name": "s"}})["network"]["id"]
            body = {"subnet": {"network_id": net, "ip_version": 4, "cidr": "192.168.0.0/24"}}
            if op == "subnet-create":
                return "POST", "/v2.0/subnets", body
            return "DELETE", f"/v2.0/subnets/{self.post('/v2.0/subnets', body)['subnet']['id']}", None
        if op in ("subnet-show", "subnet-update"):
            body = {"subnet": {"name": f"u{self.k}"}} if op == "subnet-update" else None
            return ("PUT" if body else "GET"), f"/v2.0/subnets/{self.subnet}", body
        if op.startswith("port-create"):
            net = self.net if op == "port-create-busy" else self.fresh
            return "POST", "/v2.0/ports", {"port": {"network_id": net, "name": f"p{self.k}"}}
        if op.startswith("port-show"):
            if op == "port-show-cold":  # as a server that has not read the port yet
                self.app.api.plugin.handlers["ports"].memo.clear()
            return "GET", f"/v2.0/ports/{self.ports[self.k % 1000]}", None
        if op == "port-update":
            return "PUT", f"/v2.0/ports/{self.ports[self.k % 1000]}", {"port": {"name": f"u{self.k}"}}
        if op == "port-delete":
            return "DELETE", f"/v2.0/ports/{self.ports.pop()}", None
        return "GET", f"/v2.0/ports?network_id={self.net}&limit=1000", None


def measure(app: CountingApp, ops: Ops, op: str, n: int, begins: list[object]) -> str:
    cpu: list[float] = []
    wall: list[float] = []
    statements = transactions = 0
    for _ in range(n):
        method, path, body = ops.request(op)
        app.statements = 0
        begins.clear()
        c0, w0 = time.process_time(), time.perf_counter()
        res = app.client.simulate_request(method, path, json=body, headers=HEADERS)
        cpu.append((time.process_time() - c0) * 1000)
        wall.append((time.perf_counter() - w0) * 1000)
        assert res.status_code < 300, res.text
        statements, transactions = app.statements, len(begins)
    # On a server database each transaction adds a pre-ping and a COMMIT.
    return (f"{op:16} {statements:3d} statements {transactions} transactions  "
            f"CPU p50 {statistics.median(cpu):6.2f} ms  "
            f"wall p50 {statistics.median(wall):6.2f} ms")


def print_statements(app: CountingApp, ops: Ops, op: str) -> None:
    """One request's statements, in order, each on one line."""
    seen: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        seen.append(" ".join(statement.split()))
    method, path, body = ops.request(op)
    listen_all(app.api.plugin.db, "before_cursor_execute", record)
    try:
        app.client.simulate_request(method, path, json=body, headers=HEADERS)
    finally:
        remove_all(app.api.plugin.db, "before_cursor_execute", record)
    width = None if os.environ.get("FULL") else 400  # FULL=1: whole statements
    for i, statement in enumerate(seen, 1):
        print(f"{i:3d} {statement[:width]}")


def print_scans(app: CountingApp, ops: Ops, names: list[str]) -> None:
    """Each op's statements that MariaDB plans as a whole-table read."""
    seen: list[tuple[str, str, Any]] = []
    current = [""]

    def record(conn: Any, cursor: Any, statement: str, params: Any, context: Any,
               many: bool) -> None:
        if not many and statement.lstrip().upper().startswith(("SELECT", "UPDATE", "DELETE")):
            seen.append((current[0], statement, params))
    listen_all(app.api.plugin.db, "before_cursor_execute", record)
    try:
        for op in names:
            current[0] = op
            for _ in range(3):
                method, path, body = ops.request(op)
                app.client.simulate_request(method, path, json=body, headers=HEADERS)
    finally:
        remove_all(app.api.plugin.db, "before_cursor_execute", record)
    found, asked = 0, set()
    with app.api.plugin.db.writer() as conn:
        for op, statement, params in seen:
            if (op, statement) in asked:
                continue
            asked.add((op, statement))
            for row in conn.exec_driver_sql("EXPLAIN " + statement, params).mappings():
                if row["type"] in ("ALL", "index") and int(row["rows"] or 0) > 50:
                    found += 1
                    print(f"{op:16} {row['table']} {row['type']} rows={row['rows']}: "
                          f"{' '.join(statement.split())[:300]}")
        conn.rollback()
    print(f"scans: {found} in {len(asked)} distinct statements")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", choices=("sqlite", "mariadb", "postgresql"), default="sqlite")
    ap.add_argument("--requests", type=int, default=100)
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--profile", help="an op to profile after measuring")
    ap.add_argument("--statements", help="an op whose SQL statements to print after measuring")
    ap.add_argument("--scans", action="store_true",
                    help="(MariaDB) list the statements of --ops planned as whole-table reads")
    args = ap.parse_args()
    url, drop = {"mariadb": mariadb, "postgresql": postgresql}.get(
        args.db, lambda: (None, lambda: None))()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            app = CountingApp(Path(tmp), CONFIG, url=url)
            app.api.plugin.initialize()
            begins: list[object] = []
            listen_all(app.api.plugin.db, "begin", begins.append)
            ops = Ops(app, 2 * args.requests + 50)
            tune_gc()
            for op in args.ops.split(","):
                for _ in range(5):
                    method, path, body = ops.request(op)
                    app.client.simulate_request(method, path, json=body, headers=HEADERS)
                print(measure(app, ops, op, args.requests, begins), flush=True)
            if args.statements:
                print_statements(app, ops, args.statements)
            if args.scans:
                print_scans(app, ops, [o for o in args.ops.split(",") if o != "port-list"])
            if args.profile:
                prof = cProfile.Profile()
                for _ in range(args.requests):
                    method, path, body = ops.request(args.profile)
                    prof.enable()
                    app.client.simulate_request(method, path, json=body, headers=HEADERS)
                    prof.disable()
                stats = pstats.Stats(prof).sort_stats(os.environ.get("SORT", "tottime"))
                stats.print_stats(os.environ.get("FILTER", ""), int(os.environ.get("TOP", "30")))
                if os.environ.get("CALLERS"):
                    pstats.Stats(prof).print_callers(os.environ["CALLERS"])
            app.api.plugin.db.dispose()  # (its connections would hold the DROP up)
    finally:
        drop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
