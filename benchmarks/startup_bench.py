#!/usr/bin/env python3
"""Start-up time and memory of ``neutrino serve``, over several starts.

The performance issue asks for start-up under 1 s and at most 80 MB per API
process after start-up. A start is timed from launching ``neutrino serve``
to its first ``200`` on ``GET /v2.0/networks`` (the schema already
migrated, as after ``neutrino db upgrade``); each process's RSS (the
master and every worker) is read from /proc 3 s later, and again after
``--requests`` more requests have warmed the workers. The configuration is
``make bench``'s (side_by_side.py's: ML2 with openvswitch and VXLAN, the same
service plugins, noauth) with ``--workers`` API processes.

    .venv/bin/python benchmarks/startup_bench.py [--starts 5] [--workers 2] [--db sqlite|mariadb]

Everything it makes (a temporary directory, a MariaDB database) is removed
at the end, also when a start fails.
"""
from __future__ import annotations

import argparse
import http.client
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale_bench import mariadb_database  # noqa: E402
from side_by_side import NEUTRINO_CONF, free_port  # noqa: E402

NEUTRINO = str(Path(sys.executable).parent / "neutrino")
HEADERS = {"X-Project-Id": "bench", "X-Roles": "admin", "X-User-Id": "bench"}


def first_ok(port: int, proc: subprocess.Popen[bytes], started: float) -> float:
    """Seconds from ``started`` to the first 200 on the networks list."""
    deadline = started + 60
    while time.perf_counter() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"neutrino serve exited with {proc.returncode}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/v2.0/networks", headers=HEADERS)
            if conn.getresponse().status == 200:
                return time.perf_counter() - started
        except OSError:
            time.sleep(0.005)
    raise RuntimeError("neutrino serve did not answer within 60 s")


def rss_mb(proc: subprocess.Popen[bytes]) -> tuple[float, list[float]]:
    """The master's RSS and its workers' (MB), read from /proc."""
    master = psutil.Process(proc.pid)
    workers = sorted(c.memory_info().rss / 2**20 for c in master.children(recursive=True))
    return master.memory_info().rss / 2**20, workers


def warm(port: int, requests: int) -> None:
    """Requests on fresh connections, so that every worker serves some."""
    for _ in range(requests):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/v2.0/ports", headers=HEADERS)
        conn.getresponse().read()
        conn.close()


def one_start(conf: Path, port: int, log: Path, requests: int) -> dict[str, object]:
    started = time.perf_counter()
    with open(log, "ab") as out:
        proc = subprocess.Popen([NEUTRINO, "serve", "--config-file", str(conf)],
                                stdout=out, stderr=subprocess.STDOUT)
    try:
        up = first_ok(port, proc, started)
        time.sleep(3)
        master, workers = rss_mb(proc)
        warm(port, requests)
        warm_master, warm_workers = rss_mb(proc)
        return {"up": up, "master": master, "workers": workers,
                "warm_master": warm_master, "warm_workers": warm_workers}
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def spread(values: list[float], unit: str, digits: int = 1) -> str:
    return (f"{min(values):.{digits}f}–{max(values):.{digits}f} {unit} "
            f"(median {statistics.median(values):.{digits}f})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--starts", type=int, default=5)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--db", choices=("sqlite", "mariadb"), default="sqlite")
    ap.add_argument("--requests", type=int, default=200, help="warm-up requests after start")
    args = ap.parse_args()
    home = Path(tempfile.mkdtemp(prefix="neutrino-startup-"))
    drop: Callable[[], None] = lambda: None  # noqa: E731
    try:
        url = f"sqlite:///{home / 'neutrino.sqlite'}"
        if args.db == "mariadb":
            url, drop = mariadb_database("neutrino_startup_")
        port = free_port()
        conf = home / "neutrino.conf"
        conf.write_text(NEUTRINO_CONF.format(port=port, workers=args.workers, home=home,
                                             database=url))
        migrated = subprocess.run([NEUTRINO, "db", "upgrade", "--config-file", str(conf)],
                                  capture_output=True, text=True)
        if migrated.returncode:
            raise RuntimeError(f"neutrino db upgrade failed:\n{migrated.stderr[-2000:]}")
        runs = []
        for i in range(args.starts):
            run = one_start(conf, port, home / "server.log", args.requests)
            runs.append(run)
            print(f"start {i + 1}: first 200 after {run['up']:.2f} s; RSS master "
                  f"{run['master']:.1f} MB, workers "
                  f"{', '.join(f'{w:.1f}' for w in run['workers'])} MB; after "
                  f"{args.requests} requests: master {run['warm_master']:.1f} MB, workers "
                  f"{', '.join(f'{w:.1f}' for w in run['warm_workers'])} MB", flush=True)
        every = [w for r in runs for w in (*r["workers"], *r["warm_workers"])]
        masters = [m for r in runs for m in (r["master"], r["warm_master"])]
        print(f"\n{args.starts} starts, {args.workers} workers, {args.db}, load average "
              f"{os.getloadavg()[0]:.2f}:")
        print(f"- first 200 after launch: {spread([r['up'] for r in runs], 's', 2)}")
        print(f"- master RSS: {spread(masters, 'MB')}")
        print(f"- worker RSS: {spread(every, 'MB')}")
        print(f"- largest API process: {max(every + masters):.1f} MB")
        return 0
    finally:
        drop()
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
