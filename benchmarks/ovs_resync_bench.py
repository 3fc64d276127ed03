#!/usr/bin/env python3
"""OVS agent full resync of N bound ports on an emulated host (root only).

Builds one emulated hypervisor (a netns with its own ovsdb-server and
ovs-vswitchd on the userspace datapath, tests/fullstack/hosts.py), adds N
internal ports to br-int with ``iface-id`` as the compute service would,
and times the OVS agent's first pass (full resync: scan, device details,
tags, every flow) and a restarted agent's first pass (tags already right,
flows re-added under a new cookie and the old cookie's removed), then the
restarted agent's steady-state passes (nothing changed: the polling loop's
cost per interval). The server is an in-memory answerer, so the figure is the agent and the switch
alone. Everything created is removed at the end.

    sudo .venv/bin/python benchmarks/ovs_resync_bench.py --ports 1000
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from neutrino.agents.ovs.agent import OvsAgent  # noqa: E402
from tests.fullstack.hosts import Fabric  # noqa: E402
from tests.rpc.bus import agent_conf  # noqa: E402


class Server:
    """Answers as the server would for ports bound here, counting calls."""

    def __init__(self, networks: int) -> None:
        self.networks = networks
        self.calls: dict[str, int] = {}

    def _count(self, name: str) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1

    def get_devices_details_list_and_failed_devices(self, devices: list[str]) -> dict[str, Any]:
        self._count("get_devices_details_list_and_failed_devices")
        out = []
        for d in devices:
            n = int(d.rsplit("-", 1)[1]) % self.networks
            out.append({"device": d, "port_id": d, "network_id": f"net-{n}",
                        "network_type": "vxlan", "segmentation_id": 1000 + n,
                        "physical_network": None, "admin_state_up": True})
        return {"devices": out, "failed_devices": []}

    def update_device_list(self, up: list[str], down: list[str], **kw: Any) -> dict[str, Any]:
        self._count("update_device_list")
        return {"failed_devices_up": []}

    def tunnel_sync(self, ip: str, kind: str) -> dict[str, Any]:
        self._count("tunnel_sync")
        return {"tunnels": [{"ip_address": "10.0.0.2", "host": "peer"}]}


def run(ports: int, networks: int, scans: int = 5) -> None:
    fab = Fabric(Path(tempfile.mkdtemp()))
    try:
        host = fab.host("b")
        os.environ.update({k: v for k, v in host.env.items() if k.startswith("OVS_")})
        host.vsctl("add-br", "br-int", "--", "set", "bridge", "br-int", "datapath_type=netdev",
                   "fail-mode=secure")
        started = time.perf_counter()
        for start in range(0, ports, 100):
            args: list[str] = []
            for i in range(start, min(start + 100, ports)):
                name = f"bp{i}"
                args += ["--", "add-port", "br-int", name, "--", "set", "interface", name,
                         "type=internal", f"external_ids:iface-id=port-{i}",
                         f"external_ids:attached-mac=fa:16:3e:00:{i // 256:02x}:{i % 256:02x}"]
            host.vsctl(*args[1:])
        print(f"{ports} internal ports plugged in {time.perf_counter() - started:.2f} s")
        tmp = Path(tempfile.mkdtemp())
        extra = "[ovs]\nlocal_ip = 10.0.0.1\ndatapath_type = netdev\n[agent]\ntunnel_types = vxlan\n"
        for label in ("first start", "restart"):
            server = Server(networks)
            agent = OvsAgent(agent_conf(tmp, None, "bench", extra), plugin_rpc=server)
            agent.setup_bridges()
            started = time.perf_counter()
            result = agent.run_once()
            took = time.perf_counter() - started
            flows = sum(len(f) for f in agent.programmed.values())
            print(f"full resync ({label}): {took:.2f} s, {len(result['up'])} ports up, "
                  f"{flows} flows, RPC calls {server.calls}")
        started = time.perf_counter()
        for _ in range(scans):
            agent.run_once()
        if scans:
            print(f"steady-state pass (nothing changed), mean of {scans}: "
                  f"{(time.perf_counter() - started) / scans:.3f} s")
    finally:
        fab.destroy()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ports", type=int, default=1000)
    parser.add_argument("--networks", type=int, default=50)
    parser.add_argument("--scans", type=int, default=5,
                        help="steady-state passes to time after the restart")
    args = parser.parse_args()
    run(args.ports, args.networks, args.scans)
