"""One metering measurement over N router namespaces (root): install, then read.

    python benchmarks/metering_bench.py --routers 20 --labels 5 --passes 20

Creates namespaces named ``qrouter-mbench<N>-...`` (removed afterwards), runs
the nftables metering driver's ``measure`` once to install the tables, then
``--passes`` times on unchanged tables (one ``nft reset counters`` per
router), and prints the median and p90 per pass and per router.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import time
import uuid

from neutrino.agents.metering import driver, rules


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--routers", type=int, default=20)
    parser.add_argument("--labels", type=int, default=5)
    parser.add_argument("--passes", type=int, default=20)
    args = parser.parse_args()
    tag = uuid.uuid4().hex[:6]
    routers = []
    for i in range(args.routers):
        rid = f"mbench{tag}-{i:04d}"
        subprocess.run(["ip", "netns", "add", "qrouter-" + rid], check=True)
        labels = [{"id": str(uuid.uuid4()), "name": "l", "shared": False, "rules": [
            {"direction": d, "excluded": False, "remote_ip_prefix": f"10.{j}.0.0/16"}
            for d in ("ingress", "egress")]} for j in range(args.labels)]
        routers.append(rules.metered_router({"id": rid, "project_id": "p",
                                             "gw_port_id": uuid.uuid4().hex,
                                             "_metering_labels": labels}))
    try:
        drv = driver.NftablesDriver()
        start = time.perf_counter()
        drv.measure(routers)
        install = time.perf_counter() - start
        times = []
        for _ in range(args.passes):
            start = time.perf_counter()
            readings = drv.measure(routers)
            times.append(time.perf_counter() - start)
            assert len(readings) == args.routers
        times.sort()
        p50, p90 = statistics.median(times), times[int(len(times) * 0.9) - 1]
        print(f"{args.routers} routers x {args.labels} labels: install {install * 1000:.0f} ms; "
              f"read pass p50 {p50 * 1000:.0f} ms, p90 {p90 * 1000:.0f} ms "
              f"({p50 / args.routers * 1000:.1f} ms per router)")
    finally:
        for r in routers:
            subprocess.run(["ip", "netns", "delete", r.namespace], check=False)


if __name__ == "__main__":
    main()
