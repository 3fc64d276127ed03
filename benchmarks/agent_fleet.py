#!/usr/bin/env python3
"""A simulated fleet of L2 agents against one ``neutrino serve``: what its RPC
process costs in CPU.

The fleet is 200 Open vSwitch agents (by default) sending state reports and
reacting to ``port_update`` fanouts as the real agent does (device details,
then ``update_device_list``), with 10,000 ports bound across their hosts.
The agents share one connection in this process: the server sees 200 hosts,
the machine is spared 200 oslo.messaging stacks.

Reports come every ``report_interval / speedup`` seconds so that a short run
sees many; the RPC process's CPU time (from /proc, via psutil) is measured in
two windows -- reports only, then port updates only -- and divided by what was
handled, giving a cost per report and per port update. The fleet's load at
real rates is then ``agents / report_interval`` reports and
``--updates-per-s`` port updates per second.

    python benchmarks/agent_fleet.py --agents 200 --ports 10000 --speedup 10

It creates a RabbitMQ vhost of its own (tests/rpc's ``fresh_vhost``) and an SQLite database
(or ``--database URL``, which must be empty) in a temporary directory, and
deletes both at the end.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterator

import oslo_messaging
import psutil
import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from neutrino.rpc import topics  # noqa: E402
from neutrino.rpc.transport import rpc_transport  # noqa: E402
from neutrino.service import make_conf  # noqa: E402
from tests.rpc.bus import bus  # noqa: E402
from tests.rpc.conftest import fresh_vhost  # noqa: E402

PORTS_PER_SUBNET = 250
BULK = 100


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerProcess:
    """``neutrino serve`` with one API worker; ``rpc`` is its RPC process."""

    def __init__(self, home: Path, database: str, transport_url: str, extra: str = "") -> None:
        """``extra``: configuration appended (sections may repeat)."""
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.conf = home / "neutron.conf"
        self.conf.write_text(
            f"[DEFAULT]\nbind_host = 127.0.0.1\nbind_port = {self.port}\napi_workers = 1\n"
            f"auth_strategy = noauth\ntransport_url = {transport_url}\nhost = fleet-server\n"
            f"state_path = {home}\naccess_log =\n[database]\nconnection = {database}\n"
            "[ml2]\ntype_drivers = vxlan\ntenant_network_types = vxlan\n"
            "mechanism_drivers = openvswitch\n[ml2_type_vxlan]\nvni_ranges = 1:1000\n"
            "[quotas]\ndefault_quota = -1\nquota_network = -1\nquota_subnet = -1\n"
            "quota_port = -1\n" + extra)
        self.log = home / "server.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> "ServerProcess":
        cmd = [sys.executable, "-m", "neutrino.cmd.main"]
        subprocess.run([*cmd, "db", "upgrade", "--config-file", str(self.conf)], check=True,
                       capture_output=True, cwd=ROOT)
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen([*cmd, "serve", "--config-file", str(self.conf)],
                                         stdout=out, stderr=out, cwd=ROOT)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(self.log.read_text()[-2000:])
            try:
                requests.get(self.url + "/", timeout=5)
                return self
            except requests.RequestException:
                time.sleep(0.2)
        raise RuntimeError("server did not start")

    def processes(self) -> tuple[psutil.Process, list[psutil.Process]]:
        """(the RPC process, the API workers): the RPC process is forked
        before granian forks its workers."""
        assert self.proc is not None
        children = sorted(psutil.Process(self.proc.pid).children(),
                          key=lambda p: p.create_time())
        return children[0], children[1:]

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(60)


@contextlib.contextmanager
def server_on_a_vhost(home: Path, database: str, extra: str = ""
                      ) -> Iterator[tuple[ServerProcess, str]]:
    """A started ``ServerProcess`` on a RabbitMQ vhost of its own (and the
    vhost's name, tests/rpc's ``fresh_vhost``); the server is stopped and
    the vhost deleted afterwards."""
    with fresh_vhost() as vhost:
        server = ServerProcess(home, database, bus(vhost), extra)
        try:
            yield server.start(), vhost
        finally:
            server.stop()


class Fleet:
    """Many agents on one connection: state reports and port-update reactions."""

    def __init__(self, transport_url: str, hosts: list[str]) -> None:
        conf_file = Path(tempfile.mkstemp(suffix=".conf")[1])
        conf_file.write_text(f"[DEFAULT]\ntransport_url = {transport_url}\n")
        self.conf = make_conf(["--config-file", str(conf_file)])
        self.transport = rpc_transport(self.conf)
        self.reports = oslo_messaging.get_rpc_client(
            self.transport, oslo_messaging.Target(topic=topics.REPORTS, version="1.0"))
        self.plugin = oslo_messaging.get_rpc_client(
            self.transport, oslo_messaging.Target(topic=topics.PLUGIN, version="1.0"))
        self.hosts = hosts
        self.started = {h: True for h in hosts}
        self.port_host: dict[str, str] = {}
        self.reactions = 0
        self.reacted = threading.Condition()
        self.listener: Any = None

    def wait_for_server(self, within: float = 120.0) -> None:
        """Until the server's RPC consumers are bound the broker drops what
        is sent to them: short reports of the first host, until one is
        answered."""
        deadline = time.monotonic() + within
        while True:
            try:
                self.report(self.hosts[0], timeout=2)
                return
            except oslo_messaging.MessagingTimeout:
                if time.monotonic() > deadline:
                    raise

    def report(self, host: str, timeout: float = 60) -> str:
        now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")
        state = {"binary": "neutrino-openvswitch-agent", "host": host, "topic": "N/A",
                 "agent_type": "Open vSwitch agent", "start_flag": self.started[host],
                 "configurations": {"tunnel_types": ["vxlan"], "bridge_mappings": {},
                                    "tunneling_ip": f"10.{hash(host) % 250}.0.1",
                                    "devices": 10000 // len(self.hosts)}}
        answer = self.reports.prepare(timeout=timeout).call(
            {}, "report_state", agent_state={"agent_state": state}, time=now)
        self.started[host] = False
        return answer

    # the OVS agent's reaction to a port_update: fetch details, report it up
    def port_update(self, context: Any, **kwargs: Any) -> None:
        port_id = kwargs["port"]["id"]
        host = self.port_host.get(port_id)
        if host is not None:
            common = {"agent_id": f"ovs-{host}", "host": host}
            self.plugin.prepare(version="1.5", timeout=60).call(
                {}, "get_devices_details_list_and_failed_devices", devices=[port_id], **common)
            self.plugin.prepare(version="1.5", timeout=60).call(
                {}, "update_device_list", devices_up=[port_id], devices_down=[], **common)
        with self.reacted:
            self.reactions += 1
            self.reacted.notify_all()

    def listen(self) -> None:
        class Endpoint:
            target = oslo_messaging.Target(version="1.9")
        endpoint = Endpoint()
        endpoint.port_update = self.port_update  # type: ignore[attr-defined]
        self.listener = oslo_messaging.get_rpc_server(
            self.transport, oslo_messaging.Target(topic=topics.PORT_UPDATE, server="fleet"),
            [endpoint])
        self.listener.start()

    def close(self) -> None:
        if self.listener is not None:
            self.listener.stop()
            self.listener.wait()
        self.transport.cleanup()


def populate(api: str, fleet: Fleet, ports: int) -> None:
    """Networks with a /24 each and ``ports`` ports bound round-robin to the hosts."""
    session = requests.Session()
    made = 0
    for n in range((ports + PORTS_PER_SUBNET - 1) // PORTS_PER_SUBNET):
        net = session.post(f"{api}/v2.0/networks", json={"network": {"name": f"fleet{n}"}},
                           timeout=120).json()["network"]
        resp = session.post(f"{api}/v2.0/subnets", timeout=120, json={"subnet": {
            "network_id": net["id"], "ip_version": 4, "cidr": f"10.{n // 250}.{n % 250}.0/24"}})
        resp.raise_for_status()
        here = min(PORTS_PER_SUBNET, ports - made)
        for start in range(0, here, BULK):
            body = [{"network_id": net["id"], "device_owner": "compute:nova",
                     "device_id": uuid.uuid4().hex,
                     "binding:host_id": fleet.hosts[(made + start + i) % len(fleet.hosts)]}
                    for i in range(min(BULK, here - start))]
            resp = session.post(f"{api}/v2.0/ports", json={"ports": body}, timeout=300)
            resp.raise_for_status()
            for port in resp.json()["ports"]:
                fleet.port_host[port["id"]] = port["binding:host_id"]
        made += here
        log(f"  {made} ports")


@contextlib.contextmanager
def heartbeats(fleet: Fleet, interval: float) -> Iterator[None]:
    """Every agent reports once per ``interval`` meanwhile, as real agents
    do: binding thousands of ports may outlast ``agent_down_time``, and a
    port is bound only to a host whose agent is alive."""
    done = threading.Event()

    def beat() -> None:
        while not done.wait(interval / 2):
            with ThreadPoolExecutor(16) as pool:
                list(pool.map(fleet.report, fleet.hosts))
    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def cpu(proc: psutil.Process) -> float:
    t = proc.cpu_times()
    return t.user + t.system


def reports_window(fleet: Fleet, rpc: psutil.Process, seconds: float,
                   interval: float) -> dict[str, float]:
    """Every agent reports once per ``interval``, spread evenly."""
    sent, failed = 0, 0
    lock = threading.Lock()

    def one(host: str) -> None:
        nonlocal sent, failed
        try:
            fleet.report(host)
            with lock:
                sent += 1
        except Exception:  # noqa: BLE001 - counted, the run goes on
            with lock:
                failed += 1

    gap = interval / len(fleet.hosts)
    before, start = cpu(rpc), time.monotonic()
    with ThreadPoolExecutor(16) as pool:
        k = 0
        while time.monotonic() - start < seconds:
            due = start + k * gap
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            pool.submit(one, fleet.hosts[k % len(fleet.hosts)])
            k += 1
    wall = time.monotonic() - start
    return {"reports": sent, "failed": failed, "wall_s": wall, "cpu_s": cpu(rpc) - before}


def updates_window(api: str, fleet: Fleet, rpc: psutil.Process, workers: list[psutil.Process],
                   count: int) -> dict[str, float]:
    """``count`` port updates (admin_state_up to False, each a different port,
    so each is a change) one after another through the API; each fans out
    and the owning agent reacts."""
    session = requests.Session()
    ids = random.Random(1).sample(sorted(fleet.port_host), count)
    before, api_before = cpu(rpc), sum(cpu(w) for w in workers)
    start, first = time.monotonic(), fleet.reactions
    for port_id in ids:
        resp = session.put(f"{api}/v2.0/ports/{port_id}",
                           json={"port": {"admin_state_up": False}}, timeout=120)
        resp.raise_for_status()
    with fleet.reacted:
        fleet.reacted.wait_for(lambda: fleet.reactions - first >= count, timeout=300)
    return {"updates": count, "reactions": fleet.reactions - first,
            "wall_s": time.monotonic() - start, "cpu_s": cpu(rpc) - before,
            "api_cpu_s": sum(cpu(w) for w in workers) - api_before}


def restart_window(server: ServerProcess, fleet: Fleet, rpc: psutil.Process,
                   interval: float, threads: int) -> dict[str, Any]:
    """Every agent restarts at once, as after a power cut or an upgrade: a
    report with ``start_flag``, then its resync (the details of all its
    devices, then all of them up), each agent in turn reporting again every
    ``interval`` (real time) until the storm is over. Every report's round
    trip is timed (the server answers within ``interval`` or an agent that
    waits longer falls behind); at the end the agents API must show every
    agent alive."""
    fleet.started = {h: True for h in fleet.hosts}
    devices: dict[str, list[str]] = {h: [] for h in fleet.hosts}
    for port_id, host in fleet.port_host.items():
        devices[host].append(port_id)
    latencies: list[float] = []
    answers: dict[str, int] = {}
    failed = 0
    lock = threading.Lock()
    storm_over = threading.Event()

    def timed_report(host: str) -> None:
        nonlocal failed
        t = time.monotonic()
        try:
            answer = fleet.report(host, timeout=interval * 2)
        except Exception:  # noqa: BLE001 - counted: a report not answered in time
            with lock:
                failed += 1
            return
        with lock:
            latencies.append(time.monotonic() - t)
            answers[answer] = answers.get(answer, 0) + 1

    def restart(host: str) -> None:
        timed_report(host)
        common = {"agent_id": f"ovs-{host}", "host": host}
        mine = devices[host]
        fleet.plugin.prepare(version="1.5", timeout=600).call(
            {}, "get_devices_details_list_and_failed_devices", devices=mine, **common)
        fleet.plugin.prepare(version="1.5", timeout=600).call(
            {}, "update_device_list", devices_up=mine, devices_down=[], **common)

    def heartbeats() -> None:
        """The agents' periodic reports while the storm lasts, spread evenly."""
        gap, k = interval / len(fleet.hosts), 0
        start = time.monotonic()
        with ThreadPoolExecutor(16) as pool:
            while not storm_over.is_set():
                delay = start + k * gap - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                if k >= len(fleet.hosts):  # the first report of each was its restart's
                    pool.submit(timed_report, fleet.hosts[k % len(fleet.hosts)])
                k += 1

    beat = threading.Thread(target=heartbeats, daemon=True)
    before, start = cpu(rpc), time.monotonic()
    beat.start()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(restart, fleet.hosts))
    storm_s = time.monotonic() - start
    storm_cpu = cpu(rpc) - before
    storm_over.set()
    beat.join()
    agents = requests.get(f"{server.url}/v2.0/agents", timeout=120,
                          params={"agent_type": "Open vSwitch agent"}).json()["agents"]
    latencies.sort()
    return {"agents": len(fleet.hosts), "storm_s": round(storm_s, 1),
            "rpc_cpu_s": round(storm_cpu, 1),
            "rpc_core_share": round(storm_cpu / storm_s, 3),
            "reports": len(latencies), "reports_failed": failed,
            "report_p50_s": round(latencies[len(latencies) // 2], 3) if latencies else None,
            "report_max_s": round(latencies[-1], 3) if latencies else None,
            "report_interval_s": interval, "answers": answers,
            "agents_dead": sum(1 for a in agents if not a["alive"]),
            "agents_listed": len(agents)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--agents", type=int, default=200)
    p.add_argument("--ports", type=int, default=10000)
    p.add_argument("--report-interval", type=float, default=30.0)
    p.add_argument("--speedup", type=float, default=10.0,
                   help="reports come this many times faster than report_interval")
    p.add_argument("--seconds", type=float, default=30.0, help="reports window")
    p.add_argument("--updates", type=int, default=200, help="port updates in their window")
    p.add_argument("--updates-per-s", type=float, default=1.0,
                   help="the fleet's port update rate at real time, for the total")
    p.add_argument("--database", help="an empty database URL (default: SQLite)")
    p.add_argument("--json", help="also write the figures here")
    p.add_argument("--restart", action="store_true",
                   help="instead of the two windows: every agent restarting at once "
                        "(reports timed against the real --report-interval)")
    p.add_argument("--restart-threads", type=int, default=64,
                   help="agents restarting concurrently (their calls in flight at once)")
    args = p.parse_args(argv)
    home = Path(tempfile.mkdtemp(prefix="agent-fleet-"))
    database = args.database or f"sqlite:///{home / 'fleet.sqlite'}"
    with server_on_a_vhost(home, database) as (server, vhost):
        fleet = Fleet(bus(vhost), [f"compute-{n:03d}" for n in range(args.agents)])
        try:
            return measure(args, server, fleet, database)
        finally:
            fleet.close()


def measure(args: argparse.Namespace, server: ServerProcess, fleet: Fleet, database: str) -> int:
    """The two windows, and the figures printed (and written to ``--json``)."""
    rpc, workers = server.processes()
    log(f"registering {args.agents} agents")
    fleet.wait_for_server()
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(fleet.report, fleet.hosts))
    log(f"binding {args.ports} ports")
    t0 = time.monotonic()
    with heartbeats(fleet, args.report_interval):
        populate(server.url, fleet, args.ports)
    populate_s = time.monotonic() - t0
    if args.restart:
        out = {"database": database.split(":")[0], "ports": args.ports,
               "populate_s": round(populate_s, 1),
               **restart_window(server, fleet, rpc, args.report_interval, args.restart_threads),
               "loadavg": os.getloadavg()}
        print(json.dumps(out, indent=2))
        if args.json:
            Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
        ok = out["agents_dead"] == 0 and out["reports_failed"] == 0
        return 0 if ok and out["agents_listed"] == args.agents else 1
    fleet.listen()
    time.sleep(1)  # the fanout queue is bound before the first update
    interval = args.report_interval / args.speedup
    idle_before = cpu(rpc)
    time.sleep(5)
    idle = (cpu(rpc) - idle_before) / 5
    log(f"reports window: {args.seconds}s, every agent every {interval:.1f}s")
    rep = reports_window(fleet, rpc, args.seconds, interval)
    log(f"updates window: {args.updates} port updates")
    upd = updates_window(server.url, fleet, rpc, workers, args.updates)
    # the idle process's own CPU (heartbeats, periodic tasks) is not the
    # reports' or the updates' cost; it is added once to the total
    per_report = max(rep["cpu_s"] - idle * rep["wall_s"], 0) / max(rep["reports"], 1)
    per_update = max(upd["cpu_s"] - idle * upd["wall_s"], 0) / max(upd["reactions"], 1)
    real_reports = args.agents / args.report_interval
    share = idle + per_report * real_reports + per_update * args.updates_per_s
    out = {"agents": args.agents, "ports": args.ports, "database": database.split(":")[0],
           "populate_s": round(populate_s, 1), "reports": rep, "updates": upd,
           "rpc_cpu_ms_per_report": round(per_report * 1000, 2),
           "rpc_cpu_ms_per_port_update": round(per_update * 1000, 2),
           "api_cpu_ms_per_port_update": round(upd["api_cpu_s"] / args.updates * 1000, 2),
           "measured_rpc_core_share_reports_window": round(rep["cpu_s"] / rep["wall_s"], 3),
           "rpc_core_share_idle": round(idle, 4),
           "real_rate_reports_per_s": round(real_reports, 2),
           "real_rate_updates_per_s": args.updates_per_s,
           "rpc_core_share_at_real_rates": round(share, 4),
           "loadavg": os.getloadavg()}
    print(json.dumps(out, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    return 0 if rep["failed"] == 0 and upd["reactions"] >= args.updates else 1


if __name__ == "__main__":
    sys.exit(main())
