#!/usr/bin/env python3
"""A port's time from create (bound to this host) to ACTIVE on the all-in-one
(root, Open vSwitch, dnsmasq).

The all-in-one is started as ``make run`` starts it (``etc/neutrino-aio.conf``,
with tests/aio's override moving its port, state directory and namespace out
of the way): the API, the in-process bus and this host's OVS, DHCP and L3
agents in one process. On a network with a DHCP subnet, each port is
created with ``binding:host_id`` of this host and ``device_owner
compute:nova``, then plugged into br-int as the compute service plugs an
instance (an internal port with ``iface-id`` and ``attached-mac``) and
polled every 10 ms until ACTIVE: both the L2 agent's and the DHCP agent's
provisioning blocks must be gone by then. Ports are made one after
another, as instances booting one by one.

    sudo .venv/bin/python benchmarks/aio_active_bench.py [--ports 20]

Everything it makes (the server, its switch and namespaces) is removed at
the end, also when a step fails.
"""
from __future__ import annotations

import argparse
import os
import socket
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from scale_bench import pct  # noqa: E402

from tests.aio.test_aio import AGENT_TYPES, Aio, _own_namespaces, registered  # noqa: E402
from tests.conftest import Client  # noqa: E402
from tests.fullstack.hosts import sh  # noqa: E402
from tests.waiting import wait_for  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ports", type=int, default=20)
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("needs root (namespaces, Open vSwitch)", file=sys.stderr)
        return 2
    aio = Aio()
    leftovers: list[str] = []
    try:
        aio.start()
        if not wait_for(lambda: registered(aio) == AGENT_TYPES, 60):
            raise RuntimeError(f"the agents did not register: {aio.output()[-3000:]}")
        admin = Client(aio.url, roles="admin")
        net = admin.post("/v2.0/networks", {"network": {"name": "active"}})[1]["network"]
        status, subnet = admin.post("/v2.0/subnets", {"subnet": {
            "network_id": net["id"], "ip_version": 4, "cidr": "10.9.0.0/24"}})
        assert status == 201, subnet
        env = {**os.environ, "OVS_RUNDIR": str(aio.rundir)}
        host = socket.gethostname()
        to_active, plugged_to_active = [], []
        for i in range(args.ports):
            started = time.perf_counter()
            status, body = admin.post("/v2.0/ports", {"port": {
                "network_id": net["id"], "binding:host_id": host,
                "device_owner": "compute:nova", "device_id": f"bench-{i}"}})
            assert status == 201 and body["port"]["binding:vif_type"] == "ovs", body
            port = body["port"]
            name = f"{aio.prefix}t{i}"
            sh("ovs-vsctl", "add-port", "br-int", name, "--", "set", "interface", name,
               "type=internal", f"external_ids:iface-id={port['id']}",
               "external_ids:iface-status=active",
               f"external_ids:attached-mac={port['mac_address']}", env=env)
            plugged = time.perf_counter()
            if not wait_for(lambda: admin.get(f"/v2.0/ports/{port['id']}")[1]["port"]["status"]
                            == "ACTIVE", 60, 0.01):
                raise RuntimeError(f"port {port['id']} not ACTIVE within 60 s")
            done = time.perf_counter()
            to_active.append(done - started)
            plugged_to_active.append(done - plugged)
            print(f"port {i + 1}: create to ACTIVE {done - started:.3f} s "
                  f"(plugged to ACTIVE {done - plugged:.3f} s)", flush=True)
        print(f"\n{args.ports} ports, load average {os.getloadavg()[0]:.2f}:")
        for label, values in (("create to ACTIVE", to_active),
                              ("plugged to ACTIVE", plugged_to_active)):
            print(f"- {label}: p50 {pct(values, 50):.3f} s, p90 {pct(values, 90):.3f} s, "
                  f"max {max(values):.3f} s")
        leftovers = _own_namespaces(admin)
        return 0
    finally:
        if aio.proc is not None and aio.proc.poll() is None and not leftovers:
            try:
                leftovers = _own_namespaces(Client(aio.url))
            except Exception:  # noqa: BLE001 - the server may be what failed
                pass
        aio.destroy(leftovers)


if __name__ == "__main__":
    sys.exit(main())
