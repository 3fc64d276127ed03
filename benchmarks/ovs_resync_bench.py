#!/usr/bin/env python3
"""OVS agent full resync of N bound ports on an emulated host (root only).

Builds one emulated hypervisor (a netns with its own ovsdb-server and
ovs-vswitchd on the userspace datapath, tests/fullstack/hosts.py), adds N
internal ports to br-int with ``iface-id`` as the compute service would,
and times the OVS agent's first pass (full resync: scan, device details,
tags, every flow) and a restarted agent's first pass (tags already right,
flows re-added under a new cookie and the old cookie's removed), then the
restarted agent's steady-state passes (nothing changed: the polling loop's
cost per interval).

By default the server is an in-memory answerer, so the figure is the agent
and the switch alone. ``--server neutrino`` makes it the real thing: a
``neutrino serve`` (one API worker and its RPC process, agent_fleet.py's) on
a RabbitMQ vhost of its own, with the N ports created through the API and
bound to the emulated host (the agent registers first, so they bind), and
the agent's calls going over the broker. Each pass then also checks that
the server has every port ACTIVE. ``--firewall openvswitch`` adds the
security-group flows (and the agent's ``security_group_info_for_devices``
calls) to every pass. Everything created is removed at the end.

    sudo .venv/bin/python benchmarks/ovs_resync_bench.py --ports 1000
    sudo .venv/bin/python benchmarks/ovs_resync_bench.py --ports 1000 --server neutrino \
        [--database mysql://root@127.0.0.1:3306/<empty db>] [--firewall openvswitch]
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any, Callable, Iterator

import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from neutrino.agents.ovs.agent import OvsAgent  # noqa: E402
from tests.fullstack.hosts import Fabric  # noqa: E402
from tests.rpc.bus import agent_conf  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_fleet import populate, server_on_a_vhost  # noqa: E402

HOST = "bench"


class Server:
    """Answers as the server would for ports bound here."""

    def __init__(self, networks: int) -> None:
        self.networks = networks

    def get_devices_details_list_and_failed_devices(self, devices: list[str]) -> dict[str, Any]:
        out = []
        for d in devices:
            n = int(d.rsplit("-", 1)[1]) % self.networks
            out.append({"device": d, "port_id": d, "network_id": f"net-{n}",
                        "network_type": "vxlan", "segmentation_id": 1000 + n,
                        "physical_network": None, "admin_state_up": True})
        return {"devices": out, "failed_devices": []}

    def update_device_list(self, up: list[str], down: list[str], **kw: Any) -> dict[str, Any]:
        return {"failed_devices_up": []}

    def tunnel_sync(self, ip: str, kind: str) -> dict[str, Any]:
        return {"tunnels": [{"ip_address": "10.0.0.2", "host": "peer"}]}


class Timed:
    """The agent's RPC client, with each method's calls and seconds counted."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: dict[str, list[float]] = {}

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.inner, name)
        if not callable(method) or name == "close":
            return method

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                entry = self.calls.setdefault(name, [0, 0.0])
                entry[0] += 1
                entry[1] += time.perf_counter() - started
        return timed

    def summary(self) -> str:
        return ", ".join(f"{name} {n}x {secs:.2f} s" for name, (n, secs) in self.calls.items())


class Setting:
    """What a pass needs from the server side: the agent's configuration and
    RPC client, the ports to plug (id -> MAC), and how the server sees them."""

    def __init__(self, tmp: Path, vhost: str | None, macs: dict[str, str],
                 rpc_for: Callable[[Any], Any], check: Callable[[], str] | None) -> None:
        self.tmp, self.vhost, self.macs, self.rpc_for, self.check = tmp, vhost, macs, rpc_for, check

    def conf(self, extra: str) -> Any:
        return agent_conf(self.tmp, self.vhost, HOST, extra)


@contextlib.contextmanager
def answerer(ports: int, networks: int, tmp: Path) -> Iterator[Setting]:
    """A fresh in-memory server per agent."""
    macs = {f"port-{i}": f"fa:16:3e:00:{i // 256:02x}:{i % 256:02x}" for i in range(ports)}
    yield Setting(tmp, None, macs, lambda conf: Timed(Server(networks)), None)


@contextlib.contextmanager
def neutrino_server(ports: int, database: str | None, tmp: Path) -> Iterator[Setting]:
    """A real server on a vhost of its own, the ports bound to this host."""
    from neutrino.agents.rpc import PluginApi
    url = database or f"sqlite:///{tmp / 'resync.sqlite'}"
    with server_on_a_vhost(tmp, url) as (server, vhost):
        registrar = OvsAgent(agent_conf(tmp, vhost, HOST, EXTRA), plugin_rpc=object())
        try:
            registrar.register()  # the host is alive: its ports bind to it
            started = time.perf_counter()
            populate(server.url, types.SimpleNamespace(hosts=[HOST], port_host={}), ports)
            print(f"{ports} ports created and bound through the API in "
                  f"{time.perf_counter() - started:.1f} s")

            def ports_here(field: str) -> list[dict[str, Any]]:
                return requests.get(f"{server.url}/v2.0/ports", timeout=120, params={
                    "binding:host_id": HOST, "fields": ["id", field]}).json()["ports"]

            def active() -> str:
                status = ports_here("status")
                return (f"server: {sum(p['status'] == 'ACTIVE' for p in status)} of "
                        f"{len(status)} ACTIVE")
            macs = {p["id"]: p["mac_address"] for p in ports_here("mac_address")}
            yield Setting(tmp, vhost, macs,
                          lambda conf: Timed(PluginApi(conf, f"ovs-agent-{HOST}", HOST)), active)
        finally:
            registrar.stop()


EXTRA = "[ovs]\nlocal_ip = 10.0.0.1\ndatapath_type = netdev\n[agent]\ntunnel_types = vxlan\n"


def plug(host: Any, macs: dict[str, str]) -> None:
    """Each port as an internal br-int port, as the compute service plugs one."""
    ids = sorted(macs)
    for start in range(0, len(ids), 100):
        args: list[str] = []
        for i in range(start, min(start + 100, len(ids))):
            name = f"bp{i}"
            args += ["--", "add-port", "br-int", name, "--", "set", "interface", name,
                     "type=internal", f"external_ids:iface-id={ids[i]}",
                     f"external_ids:attached-mac={macs[ids[i]]}"]
        host.vsctl(*args[1:])


def run(ports: int, networks: int, scans: int = 5, real: bool = False,
        database: str | None = None, firewall: str = "noop") -> None:
    fab = Fabric(Path(tempfile.mkdtemp()))
    tmp = Path(tempfile.mkdtemp())
    extra = EXTRA + f"[securitygroup]\nfirewall_driver = {firewall}\n"
    try:
        host = fab.host("b")
        os.environ.update({k: v for k, v in host.env.items() if k.startswith("OVS_")})
        host.vsctl("add-br", "br-int", "--", "set", "bridge", "br-int", "datapath_type=netdev",
                   "fail-mode=secure")
        serving = neutrino_server(ports, database, tmp) if real else answerer(ports, networks, tmp)
        with serving as setting:
            started = time.perf_counter()
            plug(host, setting.macs)
            print(f"{len(setting.macs)} internal ports plugged in "
                  f"{time.perf_counter() - started:.2f} s")
            for label in ("first start", "restart"):
                conf = setting.conf(extra)
                server = setting.rpc_for(conf)
                agent = OvsAgent(conf, plugin_rpc=server)
                agent.setup_bridges()
                started = time.perf_counter()
                result = agent.run_once()
                took = time.perf_counter() - started
                flows = sum(len(f) for f in agent.programmed.values())
                calls = f", RPC calls: {server.summary()}"
                seen = f"; {setting.check()}" if setting.check else ""
                print(f"full resync ({label}): {took:.2f} s, {len(result['up'])} ports up, "
                      f"{flows} flows{calls}{seen}", flush=True)
                if label == "first start":
                    agent.stop()
                    getattr(server, "close", lambda: None)()
            started = time.perf_counter()
            for _ in range(scans):
                agent.run_once()
            if scans:
                print(f"steady-state pass (nothing changed), mean of {scans}: "
                      f"{(time.perf_counter() - started) / scans:.3f} s")
            agent.stop()
            getattr(server, "close", lambda: None)()
    finally:
        fab.destroy()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ports", type=int, default=1000)
    parser.add_argument("--networks", type=int, default=50)
    parser.add_argument("--scans", type=int, default=5,
                        help="steady-state passes to time after the restart")
    parser.add_argument("--server", choices=("answerer", "neutrino"), default="answerer",
                        help="an in-memory answerer, or a real neutrino serve over RabbitMQ")
    parser.add_argument("--database", help="with --server neutrino: an empty database URL "
                        "(default: SQLite)")
    parser.add_argument("--firewall", choices=("noop", "openvswitch"), default="noop")
    args = parser.parse_args()
    run(args.ports, args.networks, args.scans, args.server == "neutrino", args.database,
        args.firewall)
