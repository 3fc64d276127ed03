#!/usr/bin/env python3
"""The floor under one API read: the HTTP round trip and the database's
statements alone, beside the read itself (issue 37).

A show at 20x upstream's throughput with one client must answer in a
twentieth of upstream's time. Whether that is within reach is a matter of
what any request costs before neutrino's own code runs, so this measures,
on ``make bench``'s configuration (one API worker, MariaDB, mysqlclient):

- **http**: ``GET /`` (the version document; no database) over one
  keep-alive connection, with ``api_bench.py``'s client: the client, the
  kernel's loopback, Granian and Falcon's routing.
- **statements**: each show's SQL, captured from an in-process server on
  the same database and replayed with the driver alone (no SQLAlchemy, no
  neutrino), and ``SELECT 1`` for the round trip itself.
- **request**: the show and the list by name (one match) over HTTP.

    .venv/bin/python benchmarks/request_floor.py [--requests 2000]

The figures are p50s over ``--requests`` timed requests after a warm-up.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from api_bench import DEFAULT_HEADERS, Client, check_loopback_url  # noqa: E402
from op_profile import CONFIG  # noqa: E402
from scale_bench import mariadb_database  # noqa: E402
from side_by_side import neutrino_server  # noqa: E402

from tests.inprocess import CountingApp  # noqa: E402
from tests.sql_events import listen_all, remove_all  # noqa: E402


def p50(fn: Callable[[], Any], n: int) -> float:
    """The median time of ``fn`` in milliseconds, after a warm-up."""
    for _ in range(min(100, n)):
        fn()
    times = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def resources(app: CountingApp) -> dict[str, str]:
    """A network with a subnet and a port; the paths of their reads."""
    def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
        res = app.client.simulate_post(path, json=body, headers=DEFAULT_HEADERS)
        assert res.status_code == 201, res.text
        return next(iter(res.json.values()))
    net = post("/v2.0/networks", {"network": {"name": "floor"}})
    subnet = post("/v2.0/subnets", {"subnet": {"network_id": net["id"], "ip_version": 4,
                                               "cidr": "10.0.0.0/24", "name": "floor"}})
    port = post("/v2.0/ports", {"port": {"network_id": net["id"], "name": "floor"}})
    return {"network show": f"/v2.0/networks/{net['id']}",
            "network list by name": "/v2.0/networks?name=floor",
            "subnet show": f"/v2.0/subnets/{subnet['id']}",
            "subnet list by name": "/v2.0/subnets?name=floor",
            "port show": f"/v2.0/ports/{port['id']}",
            "port list by name": "/v2.0/ports?name=floor"}


def statements(app: CountingApp, path: str) -> list[tuple[str, Any]]:
    """The statements (with their parameters) a read sends."""
    seen: list[tuple[str, Any]] = []

    def record(conn: Any, cursor: Any, statement: str, params: Any, *args: Any) -> None:
        seen.append((statement, params))
    listen_all(app.api.plugin.db, "before_cursor_execute", record)
    try:
        assert app.client.simulate_get(path, headers=DEFAULT_HEADERS).status_code == 200
    finally:
        remove_all(app.api.plugin.db, "before_cursor_execute", record)
    return seen


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--workers", type=int, default=1)
    args = ap.parse_args()
    import MySQLdb
    url, drop = mariadb_database("neutrino_floor_")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            app = CountingApp(Path(tmp), CONFIG, url=url)
            app.api.plugin.initialize()
            paths = resources(app)
            sent = {op: statements(app, path) for op, path in paths.items()}
            app.api.plugin.db.dispose()
            raw = MySQLdb.connect(host="127.0.0.1", user="root",
                                  database=url.rsplit("/", 1)[1], autocommit=True)
            cursor = raw.cursor()

            def replay(batch: list[tuple[str, Any]]) -> Callable[[], None]:
                def run() -> None:
                    for statement, params in batch:
                        cursor.execute(statement, params)
                        cursor.fetchall()
                return run
            rows = [("SELECT 1", 1, p50(replay([("SELECT 1", None)]), args.requests))]
            db = {op: p50(replay(batch), args.requests) for op, batch in sent.items()}
            raw.close()
            with neutrino_server(args, Path(tmp), database=url) as (base, _pid):
                client = Client(check_loopback_url(base), DEFAULT_HEADERS)
                rows.append(("GET / (no database)", 0,
                             p50(lambda: client.request("GET", "/"), args.requests)))
                http = {op: p50(lambda: client.request("GET", path), args.requests)
                        for op, path in paths.items()}
                client.close()
    finally:
        drop()
    print("| read | statements | its statements alone, p50 ms | over HTTP, p50 ms |")
    print("|---|---:|---:|---:|")
    for name, count, ms in rows:
        print(f"| {name} | {count} | {ms:.3f} | |" if count else f"| {name} | 0 | | {ms:.3f} |")
    for op in paths:
        print(f"| {op} | {len(sent[op])} | {db[op]:.3f} | {http[op]:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
