#!/usr/bin/env python3
"""From "create a router" to a working ping of a floating IP, on the all-in-one
(root, Open vSwitch, dnsmasq): the L3 path's guard for every feature the L3
agent gains.

The all-in-one is started as ``make run`` starts it (tests/aio's ``Aio``:
``etc/neutrino-aio.conf`` with its port, state directory and namespace moved
out of the way). Before the clock starts: the external network on br-ex, a
project network with a subnet, and an instance (a namespace plugged into
br-int as the compute service plugs one, its address set from its port,
the router's address as its default route, a security group letting ICMP
in), its port ACTIVE. Each round then times, one after another: a router
created with the external gateway, the subnet added to it, a floating IP
created on the instance's port, and a ping from br-ex's side (the
all-in-one's namespace) to the floating IP retried every 50 ms until it is
answered. The router and the floating IP are deleted, and their namespace
gone, before the next round.

    sudo .venv/bin/python benchmarks/aio_ping_bench.py [--rounds 5]

It imports only what every checkout of the suite has had (tests/aio's
``Aio``, tests/conftest's ``Client``, tests/waiting), so the same file can
be copied into an older checkout to measure it side by side. Everything it
makes is removed at the end, also when a step fails.
"""
from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.aio.test_aio import AGENT_TYPES, Aio, _own_namespaces, registered  # noqa: E402
from tests.conftest import Client  # noqa: E402
from tests.waiting import wait_for  # noqa: E402


def sh(*cmd: str, env: dict[str, str] | None = None, check: bool = True) -> str:
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if check and done.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: {done.stderr.strip()}")
    return done.stdout


def pct(values: list[float], p: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def ok(answer: tuple[int, dict], expected: int) -> dict:
    status, body = answer
    if status != expected:
        raise RuntimeError(f"{status}: {body}")
    return body


def plug_instance(aio: Aio, admin: Client, net: dict, subnet: dict, sg: dict) -> tuple[dict, str]:
    port = ok(admin.post("/v2.0/ports", {"port": {
        "network_id": net["id"], "binding:host_id": socket.gethostname(),
        "device_owner": "compute:nova", "device_id": "ping-bench",
        "security_groups": [sg["id"]]}}), 201)["port"]
    vm, tap = f"{aio.prefix}vm", f"{aio.prefix}tap"
    env = {**os.environ, "OVS_RUNDIR": str(aio.rundir)}
    sh("ip", "netns", "add", vm)
    sh("ip", "link", "add", tap, "netns", aio.namespace, "type", "veth", "peer", "name", "eth0",
       "netns", vm)
    sh("ip", "-n", vm, "link", "set", "eth0", "address", port["mac_address"], "up")
    sh("ip", "-n", aio.namespace, "link", "set", tap, "up")
    sh("ip", "netns", "exec", vm, "ethtool", "-K", "eth0", "tx", "off")
    prefix = subnet["cidr"].split("/")[1]
    sh("ip", "-n", vm, "addr", "add", f"{port['fixed_ips'][0]['ip_address']}/{prefix}",
       "dev", "eth0")
    sh("ip", "-n", vm, "route", "add", "default", "via", subnet["gateway_ip"])
    sh("ovs-vsctl", "add-port", "br-int", tap, "--", "set", "interface", tap,
       f"external_ids:iface-id={port['id']}", "external_ids:iface-status=active",
       f"external_ids:attached-mac={port['mac_address']}", env=env)
    if not wait_for(lambda: admin.get(f"/v2.0/ports/{port['id']}")[1]["port"]["status"]
                    == "ACTIVE", 60, 0.05):
        raise RuntimeError("the instance's port did not go ACTIVE")
    return port, vm


def one_round(aio: Aio, admin: Client, public: dict, subnet: dict, port: dict) -> float:
    started = time.perf_counter()
    router = ok(admin.post("/v2.0/routers", {"router": {
        "name": "ping-bench", "external_gateway_info": {"network_id": public["id"]}}}),
        201)["router"]
    ok(admin.put(f"/v2.0/routers/{router['id']}/add_router_interface",
                 {"subnet_id": subnet["id"]}), 200)
    fip = ok(admin.post("/v2.0/floatingips", {"floatingip": {
        "floating_network_id": public["id"], "port_id": port["id"]}}), 201)["floatingip"]
    address = fip["floating_ip_address"]

    def answered() -> bool:
        return subprocess.run(["ip", "netns", "exec", aio.namespace, "ping", "-c", "1", "-W",
                               "0.2", address], capture_output=True).returncode == 0
    if not wait_for(answered, 120, 0.05):
        raise RuntimeError(f"{address} not answered within 120 s")
    took = time.perf_counter() - started
    ok(admin.delete(f"/v2.0/floatingips/{fip['id']}"), 204)
    ok(admin.put(f"/v2.0/routers/{router['id']}/remove_router_interface",
                 {"subnet_id": subnet["id"]}), 200)
    ok(admin.delete(f"/v2.0/routers/{router['id']}"), 204)
    namespace = f"qrouter-{router['id']}"
    if not wait_for(lambda: namespace not in sh("ip", "netns", "list").split(), 60, 0.1):
        raise RuntimeError(f"{namespace} not removed within 60 s")
    return took


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("needs root (namespaces, Open vSwitch)", file=sys.stderr)
        return 2
    aio = Aio()
    leftovers: list[str] = [f"{aio.prefix}vm"]
    try:
        aio.start()
        if not wait_for(lambda: registered(aio) == AGENT_TYPES, 60):
            raise RuntimeError(f"the agents did not register: {aio.output()[-3000:]}")
        admin = Client(aio.url, roles="admin")
        public = ok(admin.post("/v2.0/networks", {"network": {
            "name": "public", "router:external": True, "provider:network_type": "flat",
            "provider:physical_network": "physnet1"}}), 201)["network"]
        ok(admin.post("/v2.0/subnets", {"subnet": {
            "network_id": public["id"], "ip_version": 4, "cidr": "172.24.4.0/24",
            "gateway_ip": "172.24.4.1", "enable_dhcp": False,
            "allocation_pools": [{"start": "172.24.4.10", "end": "172.24.4.100"}]}}), 201)
        net = ok(admin.post("/v2.0/networks", {"network": {"name": "private"}}), 201)["network"]
        subnet = ok(admin.post("/v2.0/subnets", {"subnet": {
            "network_id": net["id"], "ip_version": 4, "cidr": "10.0.0.0/24"}}), 201)["subnet"]
        sg = ok(admin.post("/v2.0/security-groups", {"security_group": {"name": "ping"}}),
                201)["security_group"]
        ok(admin.post("/v2.0/security-group-rules", {"security_group_rule": {
            "security_group_id": sg["id"], "direction": "ingress", "protocol": "icmp"}}), 201)
        port, _ = plug_instance(aio, admin, net, subnet, sg)
        times = []
        for i in range(args.rounds):
            times.append(one_round(aio, admin, public, subnet, port))
            print(f"round {i + 1}: router, interface and floating IP to a ping: "
                  f"{times[-1]:.3f} s", flush=True)
        print(f"\n{args.rounds} rounds, load average {os.getloadavg()[0]:.2f}: "
              f"p50 {pct(times, 50):.3f} s, min {min(times):.3f} s, max {max(times):.3f} s")
        leftovers += _own_namespaces(admin)
        return 0
    finally:
        if aio.proc is not None and aio.proc.poll() is None:
            try:
                leftovers += _own_namespaces(Client(aio.url))
            except Exception:  # noqa: BLE001 - the server may be what failed
                pass
        aio.destroy(leftovers)


if __name__ == "__main__":
    sys.exit(main())
