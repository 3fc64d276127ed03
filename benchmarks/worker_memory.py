#!/usr/bin/env python3
"""What an API worker holds after ``make bench``, by kind of memory.

Issue 37 caps an API worker at 80 MB resident after the bench. This runs
``make bench``'s neutrino side (``side_by_side.py``'s server on MariaDB, one
worker, ``api_bench.py``'s rows) and reads the worker's
``/proc/PID/smaps`` after start-up and after the bench, summed by kind of
mapping: the main heap (glibc's main arena), anonymous mappings (pymalloc's
arenas, glibc's other arenas and large blocks, thread stacks), and files
(the interpreter, extension modules and libraries), each split into what is
shared with the master (inherited at the fork and not written since) and
what is the worker's own. That tells which allocator to look at before
looking at objects.

    .venv/bin/python benchmarks/worker_memory.py [--count 50] [--hold]

``--hold`` keeps the server up after the bench (until SIGINT or SIGTERM)
for a look from outside. Environment variables given with ``--env
NAME=VALUE`` reach the server (``MALLOC_ARENA_MAX``, ``PYTHONMALLOC``).
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import psutil
import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))
import side_by_side  # noqa: E402

FIELDS = ("Rss", "Private_Clean", "Private_Dirty", "Shared_Clean", "Shared_Dirty")


def kind(name: str) -> str:
    if name == "[heap]":
        return "heap"
    if not name or name.startswith("[anon"):
        return "anonymous"
    if name.startswith("["):
        return name.strip("[]")
    return "file"


def smaps(pid: int) -> dict[str, dict[str, int]]:
    """kB per kind of mapping and field of ``FIELDS``."""
    sums: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(FIELDS, 0))
    current = "anonymous"
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split(None, 1)[0]
        if "-" in head and not head.endswith(":"):
            parts = line.split(None, 5)
            current = kind(parts[5].strip() if len(parts) > 5 else "")
        elif head.rstrip(":") in FIELDS:
            sums[current][head.rstrip(":")] += int(line.split()[1])
    return dict(sums)


def describe(label: str, pid: int) -> str:
    rows = smaps(pid)
    total = psutil.Process(pid).memory_info().rss / 2**20
    lines = [f"{label}: worker {pid} RSS {total:.1f} MB",
             f"  {'kind':<12}{'rss':>9}{'own':>9}{'shared':>9}  (MB; own = private, "
             "shared = pages still shared with the master)"]
    for name, f in sorted(rows.items(), key=lambda kv: -kv[1]["Rss"]):
        own = (f["Private_Clean"] + f["Private_Dirty"]) / 1024
        shared = (f["Shared_Clean"] + f["Shared_Dirty"]) / 1024
        if f["Rss"] >= 512:
            lines.append(f"  {name:<12}{f['Rss'] / 1024:>9.1f}{own:>9.1f}{shared:>9.1f}")
    return "\n".join(lines)


def worker_pid(master: int) -> int:
    workers = [c for c in psutil.Process(master).children(recursive=True)]
    if len(workers) != 1:
        raise SystemExit(f"expected one worker under {master}, found {len(workers)}")
    return workers[0].pid


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--count", type=int, default=50)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--list-size", type=int, default=1000)
    p.add_argument("--concurrency", type=int, nargs="+", default=[1, 8])
    p.add_argument("--env", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--hold", action="store_true", help="keep the server up after the bench")
    args = p.parse_args(argv)
    args.workers = 1
    for item in args.env:
        name, _, value = item.partition("=")
        os.environ[name] = value
    home = Path(tempfile.mkdtemp(prefix="worker-memory-"))
    print(f"load average before: {os.getloadavg()}")
    with side_by_side.neutrino_server(args, home) as (url, master):
        requests.get(url + "/", timeout=5)
        time.sleep(3)
        pid = worker_pid(master)
        print(describe("after start-up", pid), flush=True)
        side_by_side.bench({"neutrino": (url, master)}, args, home)
        print(describe("after the bench", pid), flush=True)
        print(f"master {master} RSS {psutil.Process(master).memory_info().rss / 2**20:.1f} MB")
        print(f"load average after: {os.getloadavg()}", flush=True)
        if args.hold:
            print(f"holding {url} (worker {pid}); SIGINT or SIGTERM to stop", flush=True)
            stop: list[int] = []
            for sig in (signal.SIGINT, signal.SIGTERM):  # SIGINT is ignored in the background
                signal.signal(sig, lambda signum, frame: stop.append(signum))
            while not stop:
                time.sleep(1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
