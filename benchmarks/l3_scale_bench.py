#!/usr/bin/env python3
"""L3 agent at scale, neutrino's and upstream's side by side (root only).

N routers, each with a gateway on one external network, two interfaces
(a network and /24 subnet each) and two floating IPs (one on a port of
each subnet), created through the Neutron API of the server under test.
The agent's host is an emulated one (a network namespace with its own
ovsdb-server and ovs-vswitchd, tests/fullstack/hosts.py); the devices it
plugs are internal ports of that switch's br-int. Timed, for each side:

- **cold**: the agent's first full sync on a host without any router
  (ports bound to the host by that sync, as on both servers);
- **restart**: a new agent process over what the previous one built.

A run ends when every router is done; it is then checked, untimed, that
every router's namespace has its gateway and interface addresses, its
floating IPs' addresses and their DNAT (nftables for neutrino, iptables
for upstream). The metadata proxy is off on both sides (one haproxy per
router would measure haproxy).

- ``--side neutrino``: ``neutrino serve`` (one API worker and its RPC
  process) on a RabbitMQ vhost of its own; the agent runs in this process,
  its RPC client wrapped to count each method's calls; done when its first
  pass (``process``) returns.
- ``--side upstream``: upstream Neutron 29's API and ``neutron-rpc-server``
  (the anchor, tests/fullstack/upstream_agents.py) on a vhost of its own,
  and ``neutron-l3-agent`` inside the host's namespace; done when its log
  has "Finished a router update" for every router. Upstream's agent
  deletes every ``qrouter-`` namespace it does not serve, so it runs in a
  mount namespace of its own with a private ``/run/netns`` (held by a
  ``sleep`` between its runs, so a restart finds what it built). It needs
  ``iptables`` (Debian's, the nft backend).

Both servers on the same database engine (MariaDB by default, a database
of their own, dropped at the end) and the same RabbitMQ.

    sudo .venv/bin/python benchmarks/l3_scale_bench.py --routers 500 --side neutrino
    sudo .venv/bin/python benchmarks/l3_scale_bench.py --routers 500 --side upstream
"""
from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Iterator

import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fullstack.counting_ovs import CountingOvs  # noqa: E402
from tests.fullstack.hosts import Fabric, Host  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_fleet import free_port, server_on_a_vhost  # noqa: E402

BULK = 100
HEADERS = {"X-User-Id": "bench", "X-Project-Id": "bench", "X-Roles": "admin"}


def log(msg: str) -> None:
    print(msg, flush=True)


def loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


# -- the routers, through the API (the same requests for both servers) -----------

class Api:
    def __init__(self, url: str) -> None:
        self.url = url
        self.session = requests.Session()
        self.session.headers.update(HEADERS)

    def post(self, path: str, body: dict[str, Any]) -> Any:
        resp = self.session.post(f"{self.url}/v2.0/{path}", json=body, timeout=600)
        if resp.status_code >= 300:
            raise RuntimeError(f"POST {path}: {resp.status_code} {resp.text[:500]}")
        return resp.json()

    def put(self, path: str, body: dict[str, Any]) -> Any:
        resp = self.session.put(f"{self.url}/v2.0/{path}", json=body, timeout=600)
        if resp.status_code >= 300:
            raise RuntimeError(f"PUT {path}: {resp.status_code} {resp.text[:500]}")
        return resp.json()

    def get(self, path: str, **params: Any) -> Any:
        resp = self.session.get(f"{self.url}/v2.0/{path}", params=params, timeout=600)
        resp.raise_for_status()
        return resp.json()

    def bulk(self, collection: str, member: str, bodies: list[dict[str, Any]]) -> list[Any]:
        """Created a hundred at a time, or one by one where the server refuses
        bulk requests (upstream's routers)."""
        made: list[Any] = []
        for start in range(0, len(bodies), BULK):
            part = bodies[start:start + BULK]
            try:
                made += self.post(collection, {collection: part})[collection]
            except RuntimeError as exc:
                if "Bulk operation not supported" not in str(exc):
                    raise
                made += [self.post(collection, {member: body})[member] for body in part]
        return made


def populate(api: Api, routers: int) -> dict[str, dict[str, Any]]:
    """The routers; what each namespace must show, by router id."""
    api.put("quotas/bench", {"quota": {"router": -1, "floatingip": -1, "network": -1,
                                       "subnet": -1, "port": -1}})
    ext = api.post("networks", {"network": {"name": "l3b-ext", "router:external": True}})
    ext_id = ext["network"]["id"]
    api.post("subnets", {"subnet": {"network_id": ext_id, "ip_version": 4,
                                    "cidr": "100.64.0.0/16", "enable_dhcp": False}})
    nets = api.bulk("networks", "network", [{"name": f"l3b-{i}"} for i in range(2 * routers)])
    subnets = api.bulk("subnets", "subnet", [
        {"network_id": n["id"], "ip_version": 4, "enable_dhcp": False,
         "cidr": f"10.{k // 256}.{k % 256}.0/24"} for k, n in enumerate(nets)])
    log(f"  {len(nets)} networks and subnets")
    made = api.bulk("routers", "router", [
        {"name": f"l3b-{i}", "external_gateway_info": {"network_id": ext_id}}
        for i in range(routers)])
    log(f"  {len(made)} routers")
    for i, router in enumerate(made):
        for k in (2 * i, 2 * i + 1):
            api.put(f"routers/{router['id']}/add_router_interface",
                    {"subnet_id": subnets[k]["id"]})
        if i % 100 == 99:
            log(f"  {i + 1} routers with their interfaces")
    ports = api.bulk("ports", "port", [
        {"network_id": n["id"], "device_owner": "compute:nova", "device_id": uuid.uuid4().hex}
        for n in nets])
    fips = api.bulk("floatingips", "floatingip", [
        {"floating_network_id": ext_id, "port_id": p["id"]} for p in ports])
    log(f"  {len(fips)} floating IPs")
    expected: dict[str, dict[str, Any]] = {}
    gw = {r["id"]: r["external_gateway_info"]["external_fixed_ips"][0]["ip_address"]
          for r in api.get("routers", fields=["id", "external_gateway_info"])["routers"]}
    for i, router in enumerate(made):
        inside = [subnets[k]["gateway_ip"] for k in (2 * i, 2 * i + 1)]
        floating = [f["floating_ip_address"] for f in fips[2 * i:2 * i + 2]]
        expected[router["id"]] = {"addresses": [gw[router["id"]], *inside],
                                  "floating": floating}
    return expected


# -- checking the host (untimed) ---------------------------------------------------

def missing(expected: dict[str, dict[str, Any]], enter: list[str], nat: Callable[[str], list[str]]
            ) -> list[str]:
    """What some router's namespace lacks (empty when all is there)."""
    wrong = []
    for rid, want in expected.items():
        ns = f"qrouter-{rid}"
        out = subprocess.run([*enter, "ip", "-j", "-n", ns, "addr", "show"],
                             capture_output=True, text=True)
        if out.returncode:
            wrong.append(f"{ns}: {out.stderr.strip()}")
            continue
        have = {a["local"] for link in json.loads(out.stdout) for a in link.get("addr_info", ())}
        lacking = [a for a in want["addresses"] if a not in have]
        rules = " ".join(nat(ns))
        lacking += [f"DNAT {f}" for f in want["floating"] if f not in rules]
        if lacking:
            wrong.append(f"{ns}: {lacking}")
    return wrong


def nft_nat(enter: list[str]) -> Callable[[str], list[str]]:
    def nat(ns: str) -> list[str]:
        out = subprocess.run([*enter, "ip", "netns", "exec", ns, "nft", "list", "table", "ip",
                              "neutrino_l3"], capture_output=True, text=True).stdout
        return [ln for ln in out.splitlines() if "dnat" in ln]
    return nat


def iptables_nat(enter: list[str]) -> Callable[[str], list[str]]:
    def nat(ns: str) -> list[str]:
        out = subprocess.run([*enter, "ip", "netns", "exec", ns, "iptables-save", "-t", "nat"],
                             capture_output=True, text=True).stdout
        return [ln for ln in out.splitlines() if "DNAT" in ln]
    return nat


@contextlib.contextmanager
def l2_agent(tmp: Path, vhost: str, host: str) -> Iterator[None]:
    """The host's Open vSwitch agent as a server sees it (its state reports
    only), so that the routers' ports bind to the host on both servers
    instead of failing (a failed binding is retried on every sync)."""
    from tests.rpc.bus import OvsAgent, agent_conf
    tmp.mkdir(exist_ok=True)
    agent = OvsAgent(agent_conf(tmp, vhost, host, "[AGENT]\nreport_interval = 10\n"))
    agent.register(within=300)
    agent.start_reporting()
    try:
        yield
    finally:
        agent.stop()


# -- neutrino ------------------------------------------------------------------------

class Counted:
    """The agent's RPC client, each method's calls counted and timed."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: dict[str, int] = {}
        self.seconds: dict[str, float] = {}

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.inner, name)
        if not callable(method) or name == "close":
            return method

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] = self.calls.get(name, 0) + 1
            started = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                self.seconds[name] = (self.seconds.get(name, 0.0)
                                      + time.perf_counter() - started)
        return counted

    def summary(self) -> str:
        return ", ".join(f"{name} {n}x {self.seconds[name]:.2f} s"
                         for name, n in self.calls.items())


def neutrino_conf(tmp: Path, vhost: str, host: str) -> Any:
    from tests.rpc.bus import agent_conf
    # the cold sync_routers binds every router port to the host in one call:
    # more than the default 60 s for 1,500 ports on a loaded machine before
    # they were bound together (bind_ports); kept, so older commits still run
    return agent_conf(tmp, vhost, host, "interface_driver = openvswitch\n"
                      "enable_metadata_proxy = false\nrpc_response_timeout = 600\n"
                      f"state_path = {tmp}\n[AGENT]\nreport_interval = 10\n")


def neutrino_agent(tmp: Path, vhost: str, host: str) -> tuple[Any, Counted, Any]:
    from neutrino.agents.l3.agent import L3Agent
    from neutrino.agents.l3.linux import OwnRouterNamespaces
    from neutrino.agents.l3.rpc import L3PluginApi
    from neutrino.agents.ovs.interface import OVSInterfaceDriver
    conf = neutrino_conf(tmp, vhost, host)
    rpc = Counted(L3PluginApi(conf, host))
    switch = CountingOvs()
    agent = L3Agent(conf, OVSInterfaceDriver(switch), plugin_rpc=rpc,
                    namespaces=OwnRouterNamespaces(tmp / "owned-namespaces"))
    return agent, rpc, switch


def run_neutrino(fab: Fabric, host: Host, routers: int, database: str, repeat: int,
                 tmp: Path) -> None:
    os.environ.update({k: v for k, v in host.env.items() if k.startswith("OVS_")})
    with contextlib.ExitStack() as stack:
        server, vhost = stack.enter_context(server_on_a_vhost(
            tmp, database, "[DEFAULT]\nservice_plugins = router\n"
            "[quotas]\nquota_router = -1\nquota_floatingip = -1\n"
            f"[ml2_type_vxlan]\nvni_ranges = 1:{2 * routers + 100}\n"))
        stack.enter_context(l2_agent(tmp / "l2", vhost, host.hostname))
        agent, _, _ = neutrino_agent(tmp, vhost, host.hostname)
        agent.register()  # the host's L3 agent is alive: routers are scheduled to it
        agent.start_reporting()
        started = time.perf_counter()
        expected = populate(Api(server.url), routers)
        log(f"{routers} routers created through neutrino's API in "
            f"{time.perf_counter() - started:.1f} s")
        agent.stop()
        try:
            for round_ in range(repeat):
                for label in ("cold", "restart"):
                    agent, rpc, switch = neutrino_agent(tmp, vhost, host.hostname)
                    agent.register()  # alive again (untimed), as a starting agent reports first
                    load = loadavg()
                    started = time.perf_counter()
                    ok = agent.process()
                    took = time.perf_counter() - started
                    wrong = missing(expected, [], nft_nat([]))
                    log(f"neutrino {label} #{round_ + 1}: {took:.2f} s (load {load}), "
                        f"pass ok={ok}, RPC calls: {rpc.summary()}; {switch.summary()}; "
                        f"{len(expected) - len(wrong)}/{len(expected)} routers complete"
                        + (f"; e.g. {wrong[:2]}" if wrong else ""))
                    getattr(rpc.inner, "close", lambda: None)()
                if round_ + 1 < repeat:  # back to a host without routers
                    for rid in list(agent.routers.applied):
                        agent.routers.remove(rid)
        finally:
            for rid in list(agent.routers.applied):
                agent.routers.remove(rid)


# -- upstream ------------------------------------------------------------------------

def upstream_l3_conf(host: Host, vhost: str, state: Path) -> Path:
    path = host.dir / "upstream-l3-agent.ini"
    path.write_text(
        f"[DEFAULT]\nhost = {host.hostname}\n"
        f"transport_url = rabbit://guest:guest@127.0.0.1:5672/{vhost}\n"
        f"debug = false\nlog_file = {host.dir / 'upstream-l3-agent.log'}\n"
        f"state_path = {state}\ninterface_driver = openvswitch\n"
        "enable_metadata_proxy = false\n"
        "[AGENT]\nroot_helper =\nreport_interval = 10\n"
        f"[OVS]\novsdb_connection = unix:{host.dir / 'db.sock'}\nintegration_bridge = br-int\n"
        f"[oslo_concurrency]\nlock_path = {state / 'lock'}\n")
    return path


class UpstreamAgent:
    """``neutron-l3-agent`` in the host's network namespace and a mount
    namespace of its own (a private ``/run/netns``), held between runs."""

    def __init__(self, fab: Fabric, host: Host, vhost: str) -> None:
        from tests.fullstack import upstream_agents as ua
        self.ua, self.host = ua, host
        state = fab.public_dir(f"{host.name}-upl3")
        (state / "lock").mkdir()
        self.conf = upstream_l3_conf(host, vhost, state)
        self.log_path = host.dir / "upstream-l3-agent.log"
        shims = host.dir / "upstream-l3-bin"
        shims.mkdir(exist_ok=True)
        (shims / "sudo").write_text(ua.SHIMS["sudo"])  # only sudo: iptables is real here
        (shims / "sudo").chmod(0o755)
        self.env = {**host.env, "PATH": f"{shims}:{ua.VENV / 'bin'}:{os.environ['PATH']}"}
        ua.forward_bus(fab, host)
        self.holder = subprocess.Popen(
            ["ip", "netns", "exec", host.ns, "unshare", "--mount", "--propagation", "private",
             "sh", "-c", "mount -t tmpfs tmpfs /run/netns && exec sleep infinity"])
        fab.procs.append(self.holder)
        time.sleep(1)
        self.enter = ["nsenter", "-t", str(self.holder.pid), "-m", "-n"]
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with open(self.host.dir / "upstream-l3-agent.out", "ab") as out:
            self.proc = subprocess.Popen(
                [*self.enter, str(self.ua.VENV / "bin" / "neutron-l3-agent"),
                 "--config-file", str(self.conf)],
                stdout=out, stderr=out, env=self.env, cwd=str(self.host.dir))
        self.host.fabric.procs.append(self.proc)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def finished(self, since: int) -> set[str]:
        text = self.log_path.read_text()[since:] if self.log_path.exists() else ""
        return set(re.findall(r"Finished a router update for ([0-9a-f-]{36})", text))

    def span(self, since: int) -> float:
        """Seconds from its first "Starting router update" to its last
        "Finished a router update" (the routers' own part of the run)."""
        text = self.log_path.read_text()[since:]
        stamps = [(dt.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f"), m.group(2))
                  for m in re.finditer(r"^(\S+ \S+) \d+ INFO \S+ \[[^]]*\] "
                                       r"(Starting|Finished) a? ?router update", text, re.M)]
        starts = [t for t, what in stamps if what == "Starting"]
        ends = [t for t, what in stamps if what == "Finished"]
        return (max(ends) - min(starts)).total_seconds() if starts and ends else float("nan")

    def log_size(self) -> int:
        return self.log_path.stat().st_size if self.log_path.exists() else 0

    def close(self) -> None:
        self.stop()
        if self.holder.poll() is None:
            self.holder.terminate()
            self.holder.wait(10)


def wait_done(agent: UpstreamAgent, since: int, routers: set[str], limit: float) -> float:
    started = time.perf_counter()
    while time.perf_counter() - started < limit:
        if routers <= agent.finished(since):
            return time.perf_counter() - started
        if agent.proc is not None and agent.proc.poll() is not None:
            raise RuntimeError("neutron-l3-agent exited; see " + str(agent.log_path))
        time.sleep(0.2)
    raise RuntimeError(f"not done after {limit} s: {len(agent.finished(since))} of "
                       f"{len(routers)} routers")


def run_upstream(fab: Fabric, host: Host, routers: int, repeat: int, limit: float,
                 tmp: Path) -> None:
    from tests.fullstack import upstream_agents as ua
    from tests.rpc.conftest import fresh_vhost
    if shutil.which("iptables") is None:
        raise SystemExit("upstream's L3 agent needs iptables (apt-get install -y iptables)")
    reason = ua.server_missing_reason()
    if reason:
        raise SystemExit(reason)
    with fresh_vhost() as vhost, contextlib.ExitStack() as stack:
        server = ua.UpstreamServer(fab, vhost, free_port())
        # two networks a router and the external one: past the anchor's 1,000 VNIs at 500
        server.env["VNI_RANGES"] = "1:100000"
        agent: UpstreamAgent | None = None
        try:
            server.start()
            api = Api(server.url)
            stack.enter_context(l2_agent(tmp / "l2", vhost, host.hostname))
            agent = UpstreamAgent(fab, host, vhost)
            agent.start()  # registers, so the routers are scheduled to it
            deadline = time.monotonic() + 180
            while not any(a["agent_type"] == "L3 agent" and a["alive"]
                          for a in api.get("agents")["agents"]):
                if time.monotonic() > deadline:
                    raise RuntimeError("upstream's L3 agent did not register")
                time.sleep(1)
            agent.stop()
            started = time.perf_counter()
            expected = populate(api, routers)
            log(f"{routers} routers created through upstream's API in "
                f"{time.perf_counter() - started:.1f} s")
            for round_ in range(repeat):
                for label in ("cold", "restart"):
                    since, load = agent.log_size(), loadavg()
                    agent.start()
                    took = wait_done(agent, since, set(expected), limit)
                    wrong = missing(expected, agent.enter, iptables_nat(agent.enter))
                    log(f"upstream {label} #{round_ + 1}: {took:.2f} s from the process's "
                        f"start, {agent.span(since):.2f} s from its first router update to its "
                        f"last (load {load}), {len(expected) - len(wrong)}/{len(expected)} "
                        "routers complete" + (f"; e.g. {wrong[:2]}" if wrong else ""))
                    agent.stop()
                if round_ + 1 < repeat:  # back to a host without routers: a new mount ns
                    agent.close()
                    for port in host.vsctl("list-ports", "br-int").split():
                        if port.startswith(("qr-", "qg-")):
                            host.vsctl("del-port", "br-int", port)
                    agent = UpstreamAgent(fab, host, vhost)
        finally:
            if agent is not None:
                agent.close()
            server.stop()


@contextlib.contextmanager
def fabric() -> Iterator[tuple[Fabric, Host]]:
    fab = Fabric(Path(tempfile.mkdtemp()))
    try:
        host = fab.host("l")
        host.vsctl("add-br", "br-int", "--", "set", "bridge", "br-int", "datapath_type=netdev",
                   "fail-mode=secure")
        yield fab, host
    finally:
        fab.destroy()


@contextlib.contextmanager
def database(url: str | None) -> Iterator[str]:
    """``url``, else a MariaDB database of our own, dropped afterwards."""
    if url:
        yield url
        return
    name = f"l3bench_{uuid.uuid4().hex[:8]}"
    subprocess.run(["mysql", "-uroot", "-e", f"CREATE DATABASE `{name}`"], check=True)
    try:
        yield f"mysql://root@127.0.0.1:3306/{name}"
    finally:
        subprocess.run(["mysql", "-uroot", "-e", f"DROP DATABASE IF EXISTS `{name}`"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--routers", type=int, default=500)
    parser.add_argument("--side", choices=("neutrino", "upstream"), required=True)
    parser.add_argument("--repeat", type=int, default=1, help="cold + restart rounds")
    parser.add_argument("--database", help="neutrino's (default: a new MariaDB database)")
    parser.add_argument("--limit", type=float, default=3600, help="upstream: give up after")
    args = parser.parse_args(argv)
    log(f"load average at start: {loadavg()}")
    with fabric() as (fab, host):
        tmp = Path(tempfile.mkdtemp())
        try:
            if args.side == "neutrino":
                with database(args.database) as url:
                    run_neutrino(fab, host, args.routers, url, args.repeat, tmp)
            else:
                run_upstream(fab, host, args.routers, args.repeat, args.limit, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    log(f"load average at end: {loadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
