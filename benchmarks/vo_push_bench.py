#!/usr/bin/env python3
"""What pushing versioned objects to upstream's agents costs the server.

Every committed change of a port, network, subnet, security group or rule
is re-read and pushed on its ``neutron-vo-<type>-<version>`` fanout
(``plugins/ml2/vo_rpc.py``) when a bus is configured. The heaviest case is
an L2 agent's ``update_device_list`` of many devices: each port whose
status changes is pushed. This times that call (and a port update through
the API) in process, on the in-process bus (``fake://``), with the pushes
and with their subscriptions removed, and counts the SQL statements each
sends.

    .venv/bin/python benchmarks/vo_push_bench.py [--ports 100] [--rounds 5]
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

from neutrino.plugins.ml2.rpc import L2Endpoint  # noqa: E402
from neutrino.rpc.transport import close_in_process  # noqa: E402
from tests.rpc.bus import OvsAgent  # noqa: E402
from tests.rpc.test_in_process import HOST, InProcess  # noqa: E402
from tests.sql_events import listen_all, remove_all  # noqa: E402


def pusher_off(server: InProcess) -> None:
    """Remove the pusher's subscriptions (what a server without it does)."""
    subscribers = server.api.plugin.events._subscribers
    for key, callbacks in subscribers.items():
        subscribers[key] = [c for c in callbacks
                            if not c.__qualname__.startswith("VersionedObjectPusher.")]
    for key, callbacks in server.api.plugin.events._batches.items():
        server.api.plugin.events._batches[key] = [
            c for c in callbacks if not c.__qualname__.startswith("VersionedObjectPusher.")]


def measure(server: InProcess, call: Callable[[], Any], rounds: int) -> tuple[float, int]:
    """(median seconds, statements of the last round)."""
    count = [0]

    def counted(*_: Any) -> None:
        count[0] += 1
    db = server.api.plugin.db
    times = []
    for _ in range(rounds):
        count[0] = 0
        listen_all(db, "before_cursor_execute", counted)
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
        remove_all(db, "before_cursor_execute", counted)
    return statistics.median(times), count[0]


def run(ports: int, rounds: int, pushes: bool) -> dict[str, tuple[float, int]]:
    with tempfile.TemporaryDirectory() as tmp:
        server = InProcess(Path(tmp))
        server.rpc.start()
        try:
            if not pushes:
                pusher_off(server)
            assert OvsAgent(server.conf).register(within=30) == "new"
            net = server.post("/v2.0/networks", {"network": {"name": "bench"}})["network"]
            server.post("/v2.0/subnets", {"subnet": {"network_id": net["id"], "ip_version": 4,
                                                     "cidr": "10.90.0.0/16"}})
            ids = [p["id"] for p in server.post("/v2.0/ports", {"ports": [
                {"network_id": net["id"], "binding:host_id": HOST,
                 "device_owner": "compute:nova"} for _ in range(ports)]})["ports"]]
            l2 = L2Endpoint(server.api.plugin)

            def up_and_down() -> None:
                l2.update_device_list(None, ids, [], host=HOST)
                l2.update_device_list(None, [], ids, host=HOST)
            found = {"update_device_list (up, then down)": measure(server, up_and_down, rounds)}
            name = iter(range(10**6))
            found["PUT /v2.0/ports/{id} (name)"] = measure(
                server, lambda: server.http.simulate_put(
                    f"/v2.0/ports/{ids[0]}", json={"port": {"name": f"n{next(name)}"}}), rounds)
            return found
        finally:
            server.rpc.stop()
            close_in_process()
            server.api.plugin.db.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ports", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    results = {pushes: run(args.ports, args.rounds, pushes) for pushes in (False, True)}
    print(f"{'operation':42} {'without pushes':>22} {'with pushes':>22}")
    for op in results[False]:
        (t0, s0), (t1, s1) = results[False][op], results[True][op]
        print(f"{op:42} {t0 * 1000:9.1f} ms {s0:6d} stmts {t1 * 1000:9.1f} ms {s1:6d} stmts")


if __name__ == "__main__":
    main()
