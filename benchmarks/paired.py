#!/usr/bin/env python3
"""Two neutrino code trees side by side, their requests alternated.

On this kind of machine (a VM whose speed drifts by a third within minutes)
two benchmark runs minutes apart differ more than most changes do. Here
both trees serve at once, each on a fresh MariaDB database of its own with
``make bench``'s configuration (side_by_side.py's), and one client sends
each operation to A and B in turn (ABBA...), so both see the same machine.
It reports each side's throughput (1 / mean latency, one client) and
percentiles, B's p50 over A's, and the median of B's time over A's for
each pair of requests sent one after the other.

    .venv/bin/python benchmarks/paired.py --a /path/to/base/checkout --b . \\
        [--count 400] [--ops network-create,port-create-busy] [--clients 8]

With ``--clients N``, N clients send at once, each on connections of its
own and alternating A and B as the one client does; throughput is then
N / mean latency.

Operations: ``network-create``; ``port-create`` (on a network of its own,
as api_bench's); ``port-create-busy`` (on a network holding 1,000 ports);
``port-show``; ``port-list`` (the 1,000 ports, a tenth of ``--count``);
``port-list-all`` (every port, unfiltered, as ``make bench``'s list; as many).
"""
from __future__ import annotations

import argparse
import http.client
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Callable

import pymysql

sys.path.insert(0, str(Path(__file__).resolve().parent))
from api_bench import percentile  # noqa: E402
from side_by_side import MYSQL, NEUTRINO_CONF, free_port, wait_up  # noqa: E402

PYTHON = sys.executable
HEADERS = {"Content-Type": "application/json", "X-Project-Id": "bench", "X-Roles": "admin",
           "X-User-Id": "bench"}
OPS = ("network-create", "port-create", "port-create-busy", "port-show", "port-list",
       "port-list-all")


class Side:
    """One tree's server, its database and a keep-alive connection to it."""

    def __init__(self, label: str, tree: Path, home: Path, mysql: Any) -> None:
        self.label, self.tree, self.home, self.mysql = label, tree, home, mysql
        self.database = f"neutrino_paired_{label.lower()}_{uuid.uuid4().hex[:8]}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = free_port()
        self.latencies: dict[str, list[float]] = {}

    def start(self) -> None:
        self.mysql.cursor().execute(f"CREATE DATABASE `{self.database}` CHARACTER SET utf8mb4")
        conf = self.home / "neutrino.conf"
        conf.write_text(NEUTRINO_CONF.format(
            port=self.port, workers=1, home=self.home,
            database=f"mysql://root@127.0.0.1:3306/{self.database}"))
        neutrino = [PYTHON, "-m", "neutrino.cmd.main"]
        subprocess.run([*neutrino, "db", "upgrade", "--config-file", str(conf)], check=True,
                       capture_output=True, cwd=self.tree)
        log = self.home / "neutrino.log"
        with open(log, "ab") as out:
            self.proc = subprocess.Popen([*neutrino, "serve", "--config-file", str(conf)],
                                         stdout=out, stderr=out, cwd=self.tree)
        wait_up(f"http://127.0.0.1:{self.port}", self.proc, log)
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(60)
        self.mysql.cursor().execute(f"DROP DATABASE IF EXISTS `{self.database}`")

    def request(self, method: str, path: str, body: Any = None,
                conn: http.client.HTTPConnection | None = None) -> tuple[float, Any]:
        conn = conn or self.conn
        start = time.perf_counter()
        conn.request(method, path, body=None if body is None else json.dumps(body),
                     headers=HEADERS)
        res = conn.getresponse()
        data = res.read()
        elapsed = (time.perf_counter() - start) * 1000
        if res.status >= 300:
            raise RuntimeError(f"{self.label}: {method} {path}: {res.status} {data[:300]!r}")
        return elapsed, data

    def made(self, plural: str, body: Any) -> Any:
        return json.loads(self.request("POST", f"/v2.0/{plural}", body)[1])

    def setup(self) -> None:
        """A network with 1,000 ports, and an empty one, each with a /16."""
        self.busy = self.made("networks", {"network": {"name": "busy"}})["network"]["id"]
        self.fresh = self.made("networks", {"network": {"name": "fresh"}})["network"]["id"]
        for net, cidr in ((self.busy, "10.0.0.0/16"), (self.fresh, "10.1.0.0/16")):
            self.made("subnets", {"subnet": {"network_id": net, "ip_version": 4, "cidr": cidr}})
        self.ports: list[str] = []
        for _ in range(10):
            body = {"ports": [{"network_id": self.busy} for _ in range(100)]}
            self.ports += [p["id"] for p in self.made("ports", body)["ports"]]

    def operation(self, op: str, i: int) -> tuple[str, str, Any]:
        return {
            "network-create": lambda: ("POST", "/v2.0/networks", {"network": {"name": f"n{i}"}}),
            "port-create": lambda: ("POST", "/v2.0/ports",
                                    {"port": {"network_id": self.fresh, "name": f"p{i}"}}),
            "port-create-busy": lambda: ("POST", "/v2.0/ports",
                                         {"port": {"network_id": self.busy, "name": f"p{i}"}}),
            "port-show": lambda: ("GET", f"/v2.0/ports/{self.ports[i % 1000]}", None),
            "port-list": lambda: ("GET", f"/v2.0/ports?network_id={self.busy}&limit=1000", None),
            # Every port, unfiltered, as api_bench.py's (and make bench's) list.
            "port-list-all": lambda: ("GET", "/v2.0/ports", None),
        }[op]()


def run(sides: list[Side], ops: list[str], count: int,
        say: Callable[[str], None], clients: int = 1) -> list[dict[str, Any]]:
    rows = []
    for side in sides:
        # Idle through the other side's start and setup, a connection may be
        # past the server's header_read_timeout: the next request reconnects.
        side.conn.close()
    for op in ops:
        n = max(30, count // 10) if op.startswith("port-list") else count
        for side in sides:
            side.latencies[op] = []
        pairs: list[float] = []

        def client(first: int) -> None:
            # Each client its own connection to each side, A and B in turn.
            conns = [http.client.HTTPConnection("127.0.0.1", side.port, timeout=60)
                     for side in sides]
            for i in range(first, n, clients):
                took = {}
                for j in ((0, 1) if i % 2 == 0 else (1, 0)):
                    took[j], _ = sides[j].request(*sides[j].operation(op, i), conn=conns[j])
                for j, side in enumerate(sides):
                    side.latencies[op].append(took[j])
                pairs.append(took[1] / took[0])
            for conn in conns:
                conn.close()
        threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        row: dict[str, Any] = {"op": op, "requests": n, "clients": clients}
        for side in sides:
            values = sorted(side.latencies[op])
            row[side.label] = {"ops_per_s": 1000 * len(values) * clients / sum(values),
                               "p50_ms": percentile(values, 50),
                               "p90_ms": percentile(values, 90)}
        row["b_over_a_p50"] = row["B"]["p50_ms"] / row["A"]["p50_ms"]
        # Each request's B over the A sent next to it: the load of the
        # moment cancels out, as it does not between two runs' p50s.
        row["pair_median"] = statistics.median(pairs)
        say(f"{op:17} A {row['A']['ops_per_s']:7.1f}/s p50 {row['A']['p50_ms']:7.2f} "
            f"p90 {row['A']['p90_ms']:7.2f}   B {row['B']['ops_per_s']:7.1f}/s "
            f"p50 {row['B']['p50_ms']:7.2f} p90 {row['B']['p90_ms']:7.2f}   "
            f"B/A p50 {row['b_over_a_p50']:.2f} pairs {row['pair_median']:.2f}")
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--a", type=Path, required=True, help="the base tree")
    ap.add_argument("--b", type=Path, required=True, help="the tree with the change")
    ap.add_argument("--count", type=int, default=400, help="requests per operation and side")
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--json", type=Path, help="also write the rows as JSON")
    ap.add_argument("--clients", type=int, default=1,
                    help="clients sending at once, each alternating A and B")
    args = ap.parse_args(argv)
    ops = args.ops.split(",")
    unknown = sorted(set(ops) - set(OPS))
    if unknown:
        ap.error(f"unknown operations: {', '.join(unknown)}")
    mysql = pymysql.connect(**MYSQL)
    with tempfile.TemporaryDirectory() as tmp:
        sides = [Side(label, tree.resolve(), Path(tmp) / label, mysql)
                 for label, tree in (("A", args.a), ("B", args.b))]
        try:
            for side in sides:
                side.home.mkdir()
                side.start()
                side.setup()
            rows = run(sides, ops, args.count, lambda line: print(line, flush=True),
                       args.clients)
        finally:
            for side in sides:
                side.stop()
            mysql.close()
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
