#!/usr/bin/env python3
"""CPU cost of one list request, in-process, with its profile.

Wall-clock benchmarks are noisy on a shared machine; the CPU time of the
request (``time.process_time``) and the relative costs in its profile are
not. The app is built as ``tests/inprocess.py`` builds it (SQLite, noauth),
with the all-in-one ML2 drivers, and the garbage collector set as
``neutrino serve`` sets it.

    .venv/bin/python benchmarks/list_profile.py --ports 1000 [--roles member] [--profile]
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from neutrino.cmd.serve import tune_gc  # noqa: E402
from tests.inprocess import CountingApp  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ports", type=int, default=1000)
    ap.add_argument("--roles", default="admin")
    ap.add_argument("--path", default="/v2.0/ports")
    ap.add_argument("--requests", type=int, default=20)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        app = CountingApp(Path(tmp), "[ml2]\nextension_drivers = port_security,qos\n"
                                     "mechanism_drivers = openvswitch,l2population\n")
        headers = {"X-Project-Id": "p1", "X-Roles": args.roles, "X-User-Id": "u"}
        net = app.client.simulate_post("/v2.0/networks", json={"network": {"name": "n"}},
                                       headers=headers).json["network"]["id"]
        app.client.simulate_post("/v2.0/subnets", headers=headers, json={"subnet": {
            "network_id": net, "ip_version": 4, "cidr": "10.0.0.0/16"}})
        for start in range(0, args.ports, 100):
            batch = [{"network_id": net} for _ in range(min(100, args.ports - start))]
            app.client.simulate_post("/v2.0/ports", json={"ports": batch}, headers=headers)
        tune_gc()

        def once() -> None:
            assert app.client.simulate_get(args.path, headers=headers).status_code == 200

        for _ in range(3):
            once()
        statements, _ = app.counted("GET", args.path, headers=headers)
        started = time.process_time()
        for _ in range(args.requests):
            once()
        cpu = (time.process_time() - started) / args.requests * 1000
        print(f"{args.path} ({args.ports} ports, {args.roles}): {cpu:.1f} ms CPU per request, "
              f"{statements} statements")
        if args.profile:
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(5):
                once()
            prof.disable()
            pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    return 0


if __name__ == "__main__":
    sys.exit(main())
