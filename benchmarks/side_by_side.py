#!/usr/bin/env python3
"""Run ``api_bench.py`` against neutrino and, with ``--upstream``, against
upstream Neutron, on the same MariaDB server with the same number of API
processes, and write one Markdown table with the ratios (``make bench``,
``make bench UPSTREAM=1``).

neutrino gets a fresh database of its own on the MariaDB at 127.0.0.1:3306
(dropped afterwards); upstream is stood up by the shared script
``../shared/anchors/upstream-neutron/start.sh`` (its own ``neutron_bench``
database on the same server, its own state directory, a free port) and
stopped by its ``stop.sh``. Both servers run at once and every row is
timed on one and then the other (``bench``). Both: noauth, ML2 with the openvswitch mechanism
driver, VXLAN project networks, the port_security and qos extension
drivers, the router/qos/segments/metering/trunk/port_forwarding service
plugins, quotas unlimited.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, Iterator

import psutil
import pymysql
import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))
import api_bench  # noqa: E402
from proc_cpu import tree, tree_cpu_seconds  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
# ../shared beside the checkout; a worktree (wt/<branch>) is one level deeper.
ANCHOR = next((d / "shared" / "anchors" / "upstream-neutron" for d in (ROOT.parent, ROOT.parent.parent)
               if (d / "shared" / "anchors" / "upstream-neutron").is_dir()),
              ROOT.parent / "shared" / "anchors" / "upstream-neutron")
MYSQL = {"host": "127.0.0.1", "user": "root", "password": "", "autocommit": True}
# What neutrino serves in the comparison (op_profile.py serves the same in-process).
SERVICE_PLUGINS = "router,qos,segments,metering,trunk,port_forwarding"
ML2_CONF = """[ml2]
type_drivers = flat,vlan,vxlan,local
tenant_network_types = vxlan
mechanism_drivers = openvswitch
extension_drivers = port_security,qos

[ml2_type_vxlan]
vni_ranges = 1:1000
"""
NEUTRINO_CONF = """[DEFAULT]
bind_host = 127.0.0.1
bind_port = {port}
api_workers = {workers}
auth_strategy = noauth
core_plugin = ml2
service_plugins = """ + SERVICE_PLUGINS + """
state_path = {home}
access_log =

[database]
connection = {database}

""" + ML2_CONF + """
[quotas]
quota_network = -1
quota_subnet = -1
quota_port = -1
"""
LABELS = {"network-create": "network create", "network-show": "network show",
          "network-update": "network update", "network-delete": "network delete",
          "network-list": "list networks", "subnet-create": "subnet create",
          "network-filter": "list networks by name (one match)",
          "subnet-filter": "list subnets by name (one match)",
          "port-filter": "list ports by name (one match)",
          "subnet-show": "subnet show", "subnet-update": "subnet update",
          "subnet-delete": "subnet delete", "subnet-list": "list subnets",
          "port-create": "port create (IP allocated)", "port-list": "list ports",
          "port-show": "show a port", "port-update": "port update",
          "port-delete": "port delete"}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_up(url: str, proc: subprocess.Popen[bytes] | None, log_file: Path) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(log_file.read_text()[-2000:])
        try:
            requests.get(url + "/", timeout=5)
            return
        except requests.RequestException:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer")


def bench(urls: dict[str, tuple[str, int]], args: argparse.Namespace,
          home: Path) -> dict[str, dict[str, Any]]:
    """``api_bench``'s rows on every server, each row on one server and then
    the next (which goes first alternates), so that both see the machine as
    it is during that row. ``urls`` maps a server's name to its URL and the
    pid of its root process, whose tree's CPU is read around each row.

    Run one server after the other, they did not: on this kind of machine
    the speed drifts by a third within minutes, and a ratio then measured
    the drift as much as the servers.
    """
    sides: dict[str, Any] = {}
    for name, (url, pid) in urls.items():
        opts = api_bench.parse_args([
            "--url", url, "--count", str(args.count), "--warmup", str(args.warmup),
            "--list-size", str(args.list_size),
            "--concurrency", *map(str, args.concurrency), "--json", str(home / f"{name}.json")])
        opts.started_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        log(f"$ api_bench.py --url {url} --count {args.count} --warmup {args.warmup} "
            f"--list-size {args.list_size} --concurrency {' '.join(map(str, args.concurrency))}")
        sides[name] = {"opts": opts, "bench": api_bench.Bench(opts), "results": [], "status": 0,
                       "cpu": lambda pid=pid: tree_cpu_seconds(pid)}
    names = list(sides)
    try:
        for name in names:
            log(f"setup of {name} ({sides[name]['bench'].run_tag})")
            sides[name]["bench"].setup()
        row = 0
        for concurrency in args.concurrency:
            log(f"concurrency {concurrency}:")
            for op in sides[names[0]]["opts"].ops:
                for name in (names if row % 2 == 0 else names[::-1]):
                    log(f"{name}:")
                    sides[name]["results"].append(
                        api_bench.run_op(sides[name]["bench"], op, concurrency,
                                         sides[name]["cpu"]))
                row += 1
    except Exception as exc:  # noqa: BLE001 - the rows measured are still reported
        # A phase that aborted (e.g. an untimed bulk create past its timeout).
        log(f"error: {exc}")
        for side in sides.values():
            side["status"] = 2
    finally:
        log("cleanup")
        for side in sides.values():
            side["bench"].cleanup()
    out: dict[str, dict[str, Any]] = {}
    for name, side in sides.items():
        api_bench.write_json(side["opts"].json, side["opts"], side["results"])
        data = json.loads(Path(side["opts"].json).read_text())
        # As api_bench's own exit status: 1 when requests failed, 2 when a
        # phase aborted; the report says the run was cut short.
        data["exit_status"] = side["status"] or int(any(r.errors for r in side["results"]))
        out[name] = data
    return out


@contextmanager
def neutrino_server(args: argparse.Namespace, home: Path,
                    database: str | None = None) -> Iterator[tuple[str, int]]:
    """``neutrino serve`` on a new MariaDB database (dropped after), or on
    ``database`` (a ``mysql://`` URL already at the newest revision)."""
    name = f"neutrino_bench_{uuid.uuid4().hex[:8]}"
    conn = None
    if database is None:
        conn = pymysql.connect(**MYSQL)
        conn.cursor().execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
    port = free_port()
    conf = home / "neutrino.conf"
    conf.write_text(NEUTRINO_CONF.format(
        port=port, workers=args.workers, home=home,
        database=database or f"mysql://root@127.0.0.1:3306/{name}"))
    neutrino = [sys.executable, "-m", "neutrino.cmd.main"]
    server_log = home / "neutrino.log"
    proc = None
    try:
        if database is None:
            subprocess.run([*neutrino, "db", "upgrade", "--config-file", str(conf)], check=True,
                           capture_output=True, cwd=ROOT)
        with open(server_log, "ab") as out:
            proc = subprocess.Popen([*neutrino, "serve", "--config-file", str(conf)],
                                    stdout=out, stderr=out, cwd=ROOT)
        url = f"http://127.0.0.1:{port}"
        wait_up(url, proc, server_log)
        yield url, proc.pid
    finally:
        if proc is not None and proc.poll() is None:
            proc.terminate()
            proc.wait(60)
        if conn is not None:
            conn.cursor().execute(f"DROP DATABASE IF EXISTS `{name}`")
            conn.close()


@contextmanager
def upstream_server(args: argparse.Namespace, home: Path) -> Iterator[tuple[str, int]]:
    port = free_port()
    database = f"neutron_bench_{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "NEUTRON_PORT": str(port), "API_WORKERS": str(args.workers),
           "TENANT_NETWORK_TYPES": "vxlan", "VNI_RANGES": "1:1000",
           # A database of the run's own: two runs may share the MariaDB server.
           "NEUTRON_ANCHOR_DIR": str(home / "upstream"), "DB_NAME": database,
           "SERVICE_PLUGINS": "router,qos,segments,metering,trunk,port_forwarding",
           "WRITE_READY": "0"}
    try:
        subprocess.run(["bash", str(ANCHOR / "start.sh")], env=env, check=True, cwd=home)
        pid = int((home / "upstream" / "state" / "uwsgi.pid").read_text())
        yield f"http://127.0.0.1:{port}", pid
    finally:
        subprocess.run(["bash", str(ANCHOR / "stop.sh")], env=env, check=False, cwd=home)
        with pymysql.connect(**MYSQL) as conn:
            conn.cursor().execute(f"DROP DATABASE IF EXISTS `{database}`")


def ratio(a: float, b: float) -> str:
    return f"{a / b:.1f}x" if a and b else "–"


def table(ours: dict[str, Any], theirs: dict[str, Any] | None) -> str:
    def cells(r: dict[str, Any]) -> str:
        err = f" ({r['errors']} errors)" if r["errors"] else ""
        return f"{r['ops_per_s']:,.1f} | {r['p50_ms']:,.1f}{err} | {cpu(r)}"

    def cpu(r: dict[str, Any]) -> str:
        return "–" if r.get("server_cpu_ms") is None else f"{r['server_cpu_ms']:,.2f}"
    index = {(r["op"], r["concurrency"]): r for r in (theirs or {}).get("results", [])}
    if theirs is None:
        lines = ["| operation | clients | neutrino ops/s | neutrino p50 ms "
                 "| neutrino CPU ms/req |",
                 "|---|---:|---:|---:|---:|"]
    else:
        lines = ["| operation | clients | neutrino ops/s | neutrino p50 ms "
                 "| neutrino CPU ms/req | upstream ops/s | upstream p50 ms "
                 "| upstream CPU ms/req | throughput ratio | p50 ratio | CPU ratio |",
                 "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in ours["results"]:
        row = f"| {LABELS.get(r['op'], r['op'])} | {r['concurrency']} | {cells(r)}"
        u = index.get((r["op"], r["concurrency"]))
        if theirs is not None:
            row += (f" | {cells(u)} | {ratio(r['ops_per_s'], u['ops_per_s'])} | "
                    f"{ratio(u['p50_ms'], r['p50_ms'])} | "
                    f"{ratio(u.get('server_cpu_ms') or 0, r.get('server_cpu_ms') or 0)}"
                    if u else " | – | – | – | – | – | –")
        lines.append(row + " |")
    return "\n".join(lines)


def rss_mb(root: int) -> list[float]:
    """RSS (MB) of a server's root process and of each process below it."""
    return [psutil.Process(pid).memory_info().rss / 2**20 for pid in tree(root)
            if psutil.pid_exists(pid)]


def report(args: argparse.Namespace, ours: dict[str, Any], theirs: dict[str, Any] | None,
           load: tuple[list[float], list[float]], memory: dict[str, list[float]]) -> str:
    mariadb = pymysql.connect(**MYSQL)
    with mariadb.cursor() as cur:
        cur.execute("SELECT VERSION()")
        version = cur.fetchone()[0]
    mariadb.close()
    command = "make bench UPSTREAM=1" if theirs is not None else "make bench"
    fmt = lambda xs: " / ".join(f"{x:.1f}" for x in xs)  # noqa: E731
    return "\n".join([
        "# Side by side: neutrino and upstream Neutron",
        "",
        f"Written by `{command}` (`benchmarks/side_by_side.py "
        f"{' '.join(sys.argv[1:])}`) on {dt.date.today().isoformat()}.",
        "",
        f"Machine: {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"MariaDB {version} on 127.0.0.1 for both servers; {args.workers} API processes "
        "each (neutrino: granian workers, 8 threads each; upstream: uwsgi processes, one "
        "thread each); MySQL driver: neutrino mysqlclient (`mysql://`), upstream PyMySQL "
        "(the anchor's `mysql+pymysql://`); noauth; VXLAN project networks. "
        f"{args.count} requests per row, each row after {args.warmup} untimed ones of "
        f"its own; at least {args.list_size} ports while listing."
        + (" Both servers ran at once, each row on one and then the other (which "
           "first alternates), so a row's ratio compares them on the same machine "
           "state." if theirs is not None else ""),
        "",
        f"Load average (1/5/15 min) before: {fmt(load[0])}; after: {fmt(load[1])}. "
        + ("Other work ran on the machine (the load exceeded its cores); ratios" if
           max(load[0][0], load[1][0]) > (os.cpu_count() or 1) else "Ratios")
        + " from one run are the comparable figures, the absolute numbers move "
        "with the load.",
        "",
        *[f"**{name}'s api_bench run ended with status {run['exit_status']}** (1: some "
          "requests failed, 2: a phase aborted, e.g. an untimed bulk create past its "
          "timeout); rows it did not reach are shown as –.\n"
          for name, run in (("neutrino", ours), ("upstream", theirs))
          if run is not None and run.get("exit_status")],
        "Resident memory after the bench (MB, the root process first, then the "
        "processes below it): " + "; ".join(
            f"{name} {', '.join(f'{m:.1f}' for m in mbs)}" for name, mbs in memory.items())
        + ".",
        "",
        "Ratios: throughput neutrino/upstream; p50 and CPU per request upstream/neutrino "
        "(higher is better for neutrino in all three). CPU per request: user and system "
        "time of every thread of the server's processes (neutrino: its master and "
        "workers; upstream: the uwsgi master and its workers), read from /proc before "
        "and after each row's timed requests, over their number; the database "
        "server's CPU is not counted for either.",
        "",
        table(ours, theirs),
        "",
    ])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--upstream", action="store_true", help="also run upstream Neutron")
    p.add_argument("--workers", type=int, default=2, help="API processes of each server")
    p.add_argument("--count", type=int, default=50)
    p.add_argument("--warmup", type=int, default=10,
                   help="untimed requests before each row, for both servers")
    p.add_argument("--list-size", type=int, default=1000)
    p.add_argument("--concurrency", type=int, nargs="+", default=[1, 8])
    p.add_argument("--out", default=str(ROOT / "docs" / "performance-side-by-side.md"))
    args = p.parse_args(argv)
    home = Path(tempfile.mkdtemp(prefix="side-by-side-"))
    before = list(os.getloadavg())
    with ExitStack() as servers:
        urls = {"neutrino": servers.enter_context(neutrino_server(args, home))}
        if args.upstream:
            urls["upstream"] = servers.enter_context(upstream_server(args, home))
        runs = bench(urls, args, home)
        memory = {name: rss_mb(pid) for name, (_, pid) in urls.items()}
    text = report(args, runs["neutrino"], runs.get("upstream"),
                  (before, list(os.getloadavg())), memory)
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
