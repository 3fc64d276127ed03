#!/usr/bin/env python3
"""The DHCP agent at scale, neutrino's against upstream's (issue 37; root only).

For each side, one after the other on the same machine: a server on a fresh
MariaDB database and a RabbitMQ vhost of its own (neutrino: ``neutrino
serve``, agent_fleet.py's; upstream: the anchor's API and its
``neutron-rpc-server``, tests/fullstack/upstream_agents.py's), N networks
with a subnet and P ports each created through the API, then that side's
DHCP agent started on an emulated host (a namespace with a private
userspace Open vSwitch, tests/fullstack/hosts.py; the OVS interface driver
on both sides):

- **cold**: from the agent's start until every network is served: its
  dnsmasq runs (``<state_path>/dhcp/<net>/pid`` names a live dnsmasq) and its
  hosts file lists every port of the network. Both agents keep those files
  under the same names, so the host is read the same way for both.
- **restart**: the agent stopped (SIGTERM; both leave dnsmasq running) and
  started again with everything in place, until its first full sync is
  over (its log says so: upstream's ``Synchronizing state complete``,
  neutrino's ``full sync: N networks``) and every network is still served.

Both agents run with their defaults but ``report_interval`` (10 s) and
``rpc_response_timeout`` (600 s: upstream's asks for all networks in one
call). On neutrino's side the server's ``/metrics`` gives the RPC calls the
agent made and the SQL statements they cost, per phase. Upstream's agent
needs ``sudo`` and ``iptables-save``/``-restore`` on PATH (shims, as the
fullstack tests have them) and a forwarder to reach RabbitMQ from the
host's namespace.

    sudo .venv/bin/python benchmarks/dhcp_scale_bench.py --networks 1000 --ports 10 \\
        [--side neutrino|upstream|both] [--repeat 2] [--isolated-metadata]

With ``--isolated-metadata`` both agents serve metadata from every
network's namespace (no network has a router) and a network counts as
served only once its namespace also listens on 169.254.169.254:80.

Everything created is removed at the end: namespaces of the networks,
dnsmasq processes (by their pid files), the emulated hosts, databases, vhosts.
"""
from __future__ import annotations

import abc
import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from agent_fleet import ServerProcess  # noqa: E402

from tests.fullstack import upstream_agents as upstream  # noqa: E402
from tests.fullstack.hosts import Fabric, Host, sh, terminate_all  # noqa: E402
from tests.rpc.bus import bus  # noqa: E402
from tests.rpc.conftest import fresh_vhost  # noqa: E402

ADMIN = {"X-Auth-Token": "x", "X-User-Id": "bench", "X-Project-Id": "bench",
         "X-Roles": "admin", "Content-Type": "application/json"}
PROJECT = "bench"
AGENT_OPTIONS = "rpc_response_timeout = 600\n"
METADATA_OPTIONS = "enable_isolated_metadata = true\n"
# 169.254.169.254:80 as /proc/net/tcp spells a local address (little-endian)
METADATA_LISTEN = "FEA9FEA9:0050"
CLONE_NEWNET = 0x40000000
SYNC_DONE = {"neutrino": re.compile(r"full sync: (\d+) networks"),
             "upstream": re.compile(r"Synchronizing state complete")}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


class Api:
    def __init__(self, url: str) -> None:
        self.url = url
        self.http = requests.Session()
        self.http.headers.update(ADMIN)

    def call(self, method: str, path: str, body: Any = None) -> Any:
        res = self.http.request(method, self.url + path, data=json.dumps(body) if body else None,
                                timeout=1800)  # upstream, at a load of many times the cores
        if res.status_code >= 300:
            raise RuntimeError(f"{method} {path}: {res.status_code} {res.text[:500]}")
        return res.json() if res.text else None

    def populate(self, networks: int, ports: int) -> list[str]:
        """``networks`` networks of one /24 subnet and ``ports`` ports each
        (instances' ports: unbound, as before their hosts are told)."""
        self.call("PUT", f"/v2.0/quotas/{PROJECT}", {"quota": {
            "network": -1, "subnet": -1, "port": -1}})
        ids: list[str] = []
        for start in range(0, networks, 100):
            count = min(100, networks - start)
            made = self.call("POST", "/v2.0/networks", {"networks": [
                {"name": f"dhcpb-{start + i}", "project_id": PROJECT} for i in range(count)]})
            nets = [n["id"] for n in made["networks"]]
            self.call("POST", "/v2.0/subnets", {"subnets": [
                {"network_id": n, "ip_version": 4, "cidr": "10.9.0.0/24",
                 "project_id": PROJECT} for n in nets]})
            body = [{"network_id": n, "device_owner": "compute:nova", "device_id": f"vm-{n}-{i}",
                     "project_id": PROJECT} for n in nets for i in range(ports)]
            for part in range(0, len(body), 500):  # within the servers' request size limits
                self.call("POST", "/v2.0/ports", {"ports": body[part:part + 500]})
            ids += nets
            log(f"  {len(ids)} networks")
        return ids


class Side(abc.ABC):
    """One side's server, host and agent; ``start_agent``/``stop_agent`` many times.
    Each side (neutrino's, upstream's) says how its server and agent start."""

    name = ""

    def __init__(self, fabric: Fabric, vhost: str, home: Path) -> None:
        self.fabric, self.vhost, self.home = fabric, vhost, home
        self.host: Host = fabric.host(self.name[0])
        self.host.vsctl("--may-exist", "add-br", "br-int", "--", "set", "bridge", "br-int",
                        "datapath_type=netdev")
        self.state = fabric.public_dir(f"{self.name}-dhcp")
        self.agent: subprocess.Popen[bytes] | None = None
        self.agent_log = self.host.dir / "dhcp-agent.log"
        self.api: Api
        self.metadata = False  # isolated metadata: every network must also proxy it

    def agent_options(self) -> str:
        return AGENT_OPTIONS + (METADATA_OPTIONS if self.metadata else "")

    @abc.abstractmethod
    def start_server(self) -> None:
        """This side's own way."""

    @abc.abstractmethod
    def stop_server(self) -> None:
        """This side's own way."""

    @abc.abstractmethod
    def start_agent(self) -> None:
        """This side's own way."""

    def counters(self) -> dict[str, float]:
        return {}

    def stop_agent(self) -> None:
        if self.agent is not None:
            terminate_all([self.agent], grace=30)
            self.agent = None

    def sync_lines(self) -> int:
        if not self.agent_log.exists():
            return 0
        return len(SYNC_DONE[self.name].findall(self.agent_log.read_text(errors="replace")))

    def served(self, networks: dict[str, set[str]]) -> int:
        """How many networks have a live dnsmasq whose hosts file lists all their ports."""
        count = 0
        for net, macs in networks.items():
            conf = self.state / "dhcp" / net
            try:
                pid = int((conf / "pid").read_text().strip())
                if f"{conf}/pid" not in Path(f"/proc/{pid}/cmdline").read_text(errors="replace"):
                    continue
                hosts = (conf / "host").read_text()
            except (OSError, ValueError):
                continue
            if all(mac in hosts for mac in macs):
                count += 1
        if self.metadata and count == len(networks):
            return len(metadata_listening(list(networks)))
        return count

    def cleanup(self, ids: list[str]) -> None:
        """dnsmasq and proxies by their pid files, then the networks' namespaces."""
        for pidfile in list(self.state.glob("dhcp/*/pid")) + list(
                self.state.glob("external/pids/*.pid")):
            with contextlib.suppress(OSError, ValueError):
                os.kill(int(pidfile.read_text().strip()), signal.SIGKILL)
        for net in ids:
            sh("ip", "netns", "del", f"qdhcp-{net}", check=False)


class NeutrinoSide(Side):
    name = "neutrino"

    def start_server(self) -> None:
        database = create_database(f"dhcpb_{self.fabric.prefix}_n")
        self.database = database
        self.server = ServerProcess(self.home, f"mysql://root@127.0.0.1:3306/{database}",
                                    bus(self.vhost))
        self.server.conf.write_text(self.server.conf.read_text() + "[metrics]\nenabled = true\n")
        self.server.start()
        self.api = Api(self.server.url)

    def stop_server(self) -> None:
        self.server.stop()
        drop_database(self.database)

    def start_agent(self) -> None:
        conf = self.host.dir / "dhcp-agent.conf"
        conf.write_text(
            f"[DEFAULT]\nhost = {self.host.hostname}\ntransport_url = {bus(self.vhost)}\n"
            f"log_file = {self.agent_log}\nstate_path = {self.state}\n"
            f"interface_driver = openvswitch\n{self.agent_options()}[AGENT]\nreport_interval = 10\n")
        env = {**self.host.env, "PYTHONPATH": str(ROOT)}
        with open(self.host.dir / "dhcp-agent.out", "ab") as out:
            self.agent = subprocess.Popen(
                [sys.executable, "-m", "neutrino.cmd.main", "agent", "dhcp",
                 "--config-file", str(conf)], stdout=out, stderr=out, env=env,
                cwd=str(self.host.dir))

    def counters(self) -> dict[str, float]:
        """The server's RPC calls served on q-plugin by method, and its SQL statements."""
        text = self.api.http.get(self.api.url + "/metrics", timeout=60).text
        out: dict[str, float] = {}
        for line in text.splitlines():
            m = re.match(r'neutrino_rpc_calls_total\{[^}]*method="([^"]+)"[^}]*topic="q-plugin"'
                         r'[^}]*\} (\S+)', line) or re.match(
                r'neutrino_rpc_calls_total\{[^}]*topic="q-plugin"[^}]*method="([^"]+)"'
                r'[^}]*\} (\S+)', line)
            if m:
                out[f"rpc {m.group(1)}"] = out.get(f"rpc {m.group(1)}", 0) + float(m.group(2))
            m = re.match(r"neutrino_db_statements_total\{[^}]*\} (\S+)", line)
            if m:
                out["sql statements"] = out.get("sql statements", 0) + float(m.group(1))
        return out


class UpstreamSide(Side):
    name = "upstream"

    def start_server(self) -> None:
        from agent_fleet import free_port
        self.server = upstream.UpstreamServer(self.fabric, self.vhost, free_port())
        self.server.env["VNI_RANGES"] = "1:100000"
        self.server.start()
        self.api = Api(self.server.url)
        upstream.forward_bus(self.fabric, self.host)
        self.wait_rpc()

    def wait_rpc(self) -> None:
        """neutron-rpc-server takes seconds to bind its consumers."""
        log_path = self.server.root / "rpc-server.log"
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if log_path.exists() and "q-plugin" in log_path.read_text(errors="replace"):
                return
            time.sleep(1)
        time.sleep(5)

    def stop_server(self) -> None:
        self.server.stop()

    def start_agent(self) -> None:
        conf = self.host.dir / "upstream-dhcp-agent.conf"
        conf.write_text(
            f"[DEFAULT]\nhost = {self.host.hostname}\n"
            f"transport_url = rabbit://guest:guest@127.0.0.1:5672/{self.vhost}\n"
            f"log_file = {self.agent_log}\nstate_path = {self.state}\n"
            f"interface_driver = openvswitch\n{self.agent_options()}"
            "[AGENT]\nroot_helper =\nreport_interval = 10\n"
            f"[OVS]\novsdb_connection = unix:{self.host.dir / 'db.sock'}\n"
            "integration_bridge = br-int\n"
            f"[oslo_concurrency]\nlock_path = {self.state / 'lock'}\n")
        (self.state / "lock").mkdir(exist_ok=True)
        env = {**self.host.env,
               "PATH": f"{upstream.shim_dir(self.host)}:{upstream.VENV / 'bin'}:"
                       f"{os.environ['PATH']}"}
        with open(self.host.dir / "dhcp-agent.out", "ab") as out:
            # nsenter, not ``ip netns exec``: the latter gives the agent a
            # mount namespace of its own, and the qdhcp- namespaces it makes
            # there would be gone (for everyone else and for its next run)
            # when it exits, which makes a restart impossible to measure
            self.agent = subprocess.Popen(
                ["nsenter", f"--net=/run/netns/{self.host.ns}",
                 str(upstream.VENV / "bin" / "neutron-dhcp-agent"), "--config-file", str(conf)],
                stdout=out, stderr=out, env=env, cwd=str(self.host.dir))


def metadata_listening(networks: list[str]) -> set[str]:
    """The networks whose ``qdhcp-`` namespace has a TCP listener on
    169.254.169.254:80, whatever process holds it (upstream: a haproxy per
    network). Read from ``/proc/thread-self/net/tcp`` by a thread that
    enters each namespace in turn (setns moves only the calling thread)."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    found: set[str] = set()

    def scan() -> None:
        home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        try:
            for net in networks:
                try:
                    fd = os.open(f"/run/netns/qdhcp-{net}", os.O_RDONLY)
                except OSError:
                    continue
                try:
                    if libc.setns(fd, CLONE_NEWNET) != 0:
                        continue
                    with open("/proc/thread-self/net/tcp", encoding="ascii") as f:
                        if any(line.split()[1] == METADATA_LISTEN and line.split()[3] == "0A"
                               for line in f.readlines()[1:]):
                            found.add(net)
                finally:
                    os.close(fd)
        finally:
            libc.setns(home, CLONE_NEWNET)
            os.close(home)

    worker = threading.Thread(target=scan)
    worker.start()
    worker.join()
    return found


def create_database(name: str) -> str:
    sh("mysql", "-uroot", "-e", f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
    return name


def drop_database(name: str) -> None:
    sh("mysql", "-uroot", "-e", f"DROP DATABASE IF EXISTS `{name}`", check=False)


def wait(what: str, done: Callable[[], bool], timeout: float,
         alive: Callable[[], bool]) -> float:
    started = time.monotonic()
    while not done():
        if not alive():
            raise RuntimeError(f"{what}: the agent died")
        if time.monotonic() - started > timeout:
            raise TimeoutError(what)
        time.sleep(0.5)
    return time.monotonic() - started


def expected(api: Api, ids: list[str]) -> dict[str, set[str]]:
    """Network id -> the MACs of its instances' ports."""
    out: dict[str, set[str]] = {n: set() for n in ids}
    for port in api.call("GET", "/v2.0/ports?device_owner=compute:nova&fields=network_id"
                         "&fields=mac_address")["ports"]:
        if port["network_id"] in out:
            out[port["network_id"]].add(port["mac_address"])
    return out


def register(side: Side) -> None:
    """The DHCP agent known to the server before it starts, as after a
    host's first boot: its first sync is then the cold one (both agents
    sync as they start, and neither syncs again when its first report
    creates it: upstream's does so only on a revival)."""
    import oslo_messaging

    from neutrino.rpc.admin_context import admin_context
    from neutrino.rpc.transport import rpc_transport
    from neutrino.service import make_conf
    conf_file = side.host.dir / "register.conf"
    conf_file.write_text(f"[DEFAULT]\ntransport_url = {bus(side.vhost)}\n")
    transport = rpc_transport(make_conf(["--config-file", str(conf_file)]))
    try:
        client = oslo_messaging.get_rpc_client(transport, oslo_messaging.Target(
            topic="q-reports-plugin", version="1.0"))
        state = {"binary": "neutron-dhcp-agent", "host": side.host.hostname,
                 "topic": "dhcp_agent", "agent_type": "DHCP agent", "start_flag": True,
                 "configurations": {"dhcp_driver": "neutron.agent.linux.dhcp.Dnsmasq",
                                    "networks": 0, "subnets": 0, "ports": 0}}
        deadline = time.monotonic() + 120
        while True:
            try:
                client.prepare(timeout=10).call(
                    admin_context(), "report_state", agent_state={"agent_state": state},
                    time=time.strftime("%Y-%m-%dT%H:%M:%S.000000", time.gmtime()))
                return
            except oslo_messaging.MessagingTimeout:
                if time.monotonic() > deadline:
                    raise
    finally:
        transport.cleanup()


def measure(side: Side, networks: dict[str, set[str]], timeout: float) -> dict[str, Any]:
    n = len(networks)
    alive = lambda: side.agent is not None and side.agent.poll() is None  # noqa: E731
    out: dict[str, Any] = {"side": side.name, "networks": n, "metadata": side.metadata,
                           "load_before": load()}
    before = side.counters()
    side.start_agent()
    out["cold_s"] = round(wait("cold", lambda: side.served(networks) == n, timeout, alive), 2)
    # the sync that served them may still report ports ready: let it finish
    wait("cold sync done", lambda: side.sync_lines() >= 1, timeout, alive)
    time.sleep(3)
    after = side.counters()
    out["cold_server"] = {k: after[k] - before.get(k, 0) for k in after
                          if after[k] != before.get(k, 0)}
    out["load_cold"] = load()
    log(f"{side.name}: cold {out['cold_s']} s, load {out['load_cold']}")
    side.stop_agent()
    lines = side.sync_lines()
    before = side.counters()
    side.start_agent()
    out["restart_s"] = round(wait("restart", lambda: side.sync_lines() > lines
                                  and side.served(networks) == n, timeout, alive), 2)
    time.sleep(3)
    after = side.counters()
    out["restart_server"] = {k: after[k] - before.get(k, 0) for k in after
                             if after[k] != before.get(k, 0)}
    out["load_restart"] = load()
    side.stop_agent()
    return out


@contextlib.contextmanager
def a_side(kind: str, root: Path) -> Iterator[Side]:
    fabric = Fabric(root / kind)
    (root / kind).mkdir(parents=True)
    ids: list[str] = []
    side: Side | None = None
    try:
        with fresh_vhost() as vhost:
            side = (NeutrinoSide if kind == "neutrino" else UpstreamSide)(
                fabric, vhost, root / kind)
            side.start_server()
            side.ids = ids  # type: ignore[attr-defined]
            try:
                yield side
            finally:
                side.stop_agent()
                side.cleanup(ids)
                side.stop_server()
    finally:
        fabric.destroy()


def run(kind: str, networks: int, ports: int, timeout: float,
        metadata: bool = False) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="dhcpb-"))
    try:
        with a_side(kind, root) as side:
            side.metadata = metadata
            log(f"{kind}: populating {networks} networks x {ports} ports")
            started = time.monotonic()
            side.ids.extend(side.api.populate(networks, ports))  # type: ignore[attr-defined]
            populate_s = time.monotonic() - started
            nets = expected(side.api, side.ids)  # type: ignore[attr-defined]
            log(f"{kind}: populated in {populate_s:.0f}s; load {load()}")
            register(side)
            result = measure(side, nets, timeout)
            result["populate_s"] = round(populate_s, 1)
            log(json.dumps(result))
            return result
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--networks", type=int, default=1000)
    parser.add_argument("--ports", type=int, default=10)
    parser.add_argument("--side", choices=("neutrino", "upstream", "both"), default="both")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--isolated-metadata", action="store_true",
                        help="enable_isolated_metadata on both agents: every network "
                             "(none has a router) also proxies metadata from its namespace")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("needs root (namespaces, Open vSwitch, dnsmasq)")
    if args.side != "neutrino" and (reason := upstream.server_missing_reason()):
        sys.exit(reason)
    sides = ["neutrino", "upstream"] if args.side == "both" else [args.side]
    results = []
    for _ in range(args.repeat):
        for kind in sides:
            results.append(run(kind, args.networks, args.ports, args.timeout,
                               args.isolated_metadata))
    print(json.dumps(results, indent=1))
    by = {k: [r for r in results if r["side"] == k] for k in sides}
    if len(sides) == 2:
        for phase in ("cold_s", "restart_s"):
            for n, u in zip(by["neutrino"], by["upstream"]):
                print(f"{phase}: neutrino {n[phase]} s, upstream {u[phase]} s, "
                      f"{u[phase] / max(n[phase], 1e-9):.1f}x")


if __name__ == "__main__":
    main()
