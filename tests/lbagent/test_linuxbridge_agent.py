"""The Linux bridge agent on two emulated hosts, checked with real packets.

Hosts are plain network namespaces (no Open vSwitch) joined by two veth
pairs: an underlay carrying each host's VXLAN endpoint address, and a
"physical" link that ``physical_interface_mappings`` maps to physnet1.
Instances are namespaces whose veth host end is ``tap<port_id[:11]>``, as
the compute service plugs them; the agent (``neutrino agent linuxbridge``,
one per host, running in the root namespace and managing the host's
namespace) bridges them. The server runs ``linuxbridge`` and
``l2population``; security groups are the agent's nftables ruleset.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.conftest import ROOT, Client, Server
from tests.fullstack import cloud
from tests.fullstack.hosts import TCP_PORT, Fabric, ping, serve_tcp, sh, tcp_answers
from tests.rpc.bus import bus
from tests.rpc.conftest import vhost  # noqa: F401 - a RabbitMQ vhost per module
from tests.waiting import wait_for

UNDERLAY = {"1": "10.98.0.1", "2": "10.98.0.2"}
ML2 = ("[ml2]\ntype_drivers = flat,vxlan\ntenant_network_types = vxlan\n"
       "mechanism_drivers = linuxbridge,l2population\nextension_drivers = port_security\n"
       "[ml2_type_vxlan]\nvni_ranges = 2000:2100\n[ml2_type_flat]\nflat_networks = physnet1\n")


def _missing() -> str | None:
    if os.geteuid() != 0:
        return "needs root (network namespaces)"
    for tool in ("ip", "bridge", "nft", "busybox"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian: iproute2, nftables, busybox)"
    return None


pytestmark = pytest.mark.skipif(_missing() is not None, reason=_missing() or "")


@dataclass
class Cloud:
    server: Server
    admin: Client
    fabric: Fabric
    hosts: dict[str, str]  # name -> namespace (also the agent's host name)
    physical: dict[str, str]  # name -> its interface mapped to physnet1
    root: Path  # the agents' configuration and log files

    def agent_log(self, host: str, chars: int = 4000) -> str:
        """The end of ``host``'s agent log, for an assertion to show."""
        return (self.root / f"{self.hosts[host]}.log").read_text()[-chars:]


@pytest.fixture(scope="module")
def env(vhost: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cloud]:  # noqa: F811
    root = tmp_path_factory.mktemp("lbagent")
    fabric = Fabric(root)
    server = None
    try:
        (root / "server").mkdir()
        server = Server(root / "server", extra=f"transport_url = {bus(vhost)}\n{ML2}").start()
        admin = Client(server.url, project=uuid.uuid4().hex, roles="admin")
        hosts = {n: fabric.netns(f"h{n}") for n in UNDERLAY}
        p = fabric.prefix
        sh("ip", "link", "add", f"{p}u1", "netns", hosts["1"], "type", "veth", "peer",
           "name", f"{p}u2", "netns", hosts["2"])
        sh("ip", "link", "add", f"{p}p1", "netns", hosts["1"], "type", "veth", "peer",
           "name", f"{p}p2", "netns", hosts["2"])
        for n, ns in hosts.items():
            sh("ip", "-n", ns, "addr", "add", f"{UNDERLAY[n]}/24", "dev", f"{p}u{n}")
            for dev in (f"{p}u{n}", f"{p}p{n}"):
                sh("ip", "-n", ns, "link", "set", dev, "up")
            _start_agent(fabric, root, ns, vhost, UNDERLAY[n], f"{p}p{n}")
        for ns in hosts.values():
            assert wait_for(lambda: _agent_alive(admin, ns), 60), (
                (root / f"{ns}.log").read_text()[-3000:])
        yield Cloud(server, admin, fabric, hosts, {n: f"{p}p{n}" for n in hosts}, root)
    finally:
        fabric.destroy()
        if server is not None:
            server.stop()


def _start_agent(fabric: Fabric, root: Path, ns: str, vhost: str, local_ip: str,  # noqa: F811
                 physical: str) -> None:
    conf = root / f"{ns}.conf"
    conf.write_text(
        f"[DEFAULT]\nhost = {ns}\ntransport_url = {bus(vhost)}\ndebug = true\n"
        f"log_file = {root / (ns + '.log')}\n"
        f"[linux_bridge]\nnamespace = {ns}\nphysical_interface_mappings = physnet1:{physical}\n"
        f"[vxlan]\nlocal_ip = {local_ip}\nl2_population = true\n"
        "[agent]\npolling_interval = 0.5\nreport_interval = 2\n"
        "[securitygroup]\nfirewall_driver = iptables\n")
    with open(root / f"{ns}.out", "ab") as out:
        fabric.procs.append(subprocess.Popen(
            [sys.executable, "-m", "neutrino.cmd.main", "agent", "linuxbridge",
             "--config-file", str(conf)], stdout=out, stderr=out,
            env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=str(root)))


def _agent_alive(admin: Client, host: str) -> bool:
    status, body = admin.get(f"/v2.0/agents?host={host}")
    return status == 200 and any(a["alive"] and a["agent_type"] == "Linux bridge agent"
                                 for a in body["agents"])


def _network(env: Cloud, name: str, cidr: str, **provider: Any) -> dict[str, Any]:
    status, net = env.admin.post("/v2.0/networks", {"network": {"name": name, **provider}})
    assert status == 201, net
    status, sub = env.admin.post("/v2.0/subnets", {"subnet": {
        "network_id": net["network"]["id"], "ip_version": 4, "cidr": cidr}})
    assert status == 201, sub
    return net["network"]


def _instance(env: Cloud, net: dict[str, Any], host: str, suffix: str,
              **attrs: Any) -> tuple[dict[str, Any], str]:
    """A port bound to ``host`` and a namespace plugged as ``tap<port_id[:11]>``."""
    status, body = env.admin.post("/v2.0/ports", {"port": {
        "network_id": net["id"], "binding:host_id": env.hosts[host],
        "device_owner": "compute:nova", "device_id": uuid.uuid4().hex, **attrs}})
    assert status == 201, body
    port = body["port"]
    assert port["binding:vif_type"] == "bridge", port
    ns = env.fabric.netns(suffix)
    sh("ip", "link", "add", _tap(port), "netns", env.hosts[host], "type", "veth", "peer",
       "name", "eth0", "netns", ns)
    sh("ip", "-n", ns, "link", "set", "eth0", "address", port["mac_address"], "up")
    sh("ip", "-n", ns, "addr", "add", f"{_ip(port)}/24", "dev", "eth0")
    sh("ip", "-n", env.hosts[host], "link", "set", _tap(port), "up")
    assert wait_for(lambda: _status(env, port["id"]) == "ACTIVE", 30), port["id"]
    return port, ns


def _tap(port: dict[str, Any]) -> str:
    return f"tap{port['id'][:11]}"


def _ip(port: dict[str, Any]) -> str:
    return str(port["fixed_ips"][0]["ip_address"])


def _status(env: Cloud, port_id: str) -> str:
    return str(env.admin.get(f"/v2.0/ports/{port_id}")[1]["port"]["status"])


def _link(ns: str, name: str) -> dict[str, Any] | None:
    done = sh("ip", "-j", "-n", ns, "link", "show", "dev", name, check=False)
    return json.loads(done.stdout)[0] if done.returncode == 0 else None


def _master(ns: str, name: str) -> str | None:
    link = _link(ns, name)
    return link.get("master") if link else None


def _brq(net: dict[str, Any]) -> str:
    return f"brq{net['id'][:11]}"





@pytest.fixture(scope="module")
def vxnet(env: Cloud) -> dict[str, Any]:
    return _network(env, "lb-vx", "10.102.0.0/24")


def test_instances_on_two_hosts_ping_over_vxlan_and_their_ports_turn_active(
        env: Cloud, vxnet: dict[str, Any]) -> None:
    p1, vm1 = _instance(env, vxnet, "1", "a1")
    p2, vm2 = _instance(env, vxnet, "2", "a2")
    assert ping(vm1, _ip(p2)) and ping(vm2, _ip(p1))
    vxlan = f"vxlan-{vxnet['provider:segmentation_id']}"
    h1 = env.hosts["1"]
    assert _master(h1, _tap(p1)) == _brq(vxnet) == _master(h1, vxlan)
    # l2population: host 1 forwards p2's MAC to host 2's endpoint without learning it
    fdb = lambda: sh("bridge", "-n", h1, "fdb", "show", "dev", vxlan).stdout  # noqa: E731
    assert wait_for(lambda: f"{p2['mac_address']} dst {UNDERLAY['2']}" in fdb(), 30), fdb()


def test_a_flat_network_bridges_the_mapped_physical_interface(env: Cloud) -> None:
    net = _network(env, "lb-flat", "10.103.0.0/24", **{
        "provider:network_type": "flat", "provider:physical_network": "physnet1"})
    p1, vm1 = _instance(env, net, "1", "f1")
    p2, vm2 = _instance(env, net, "2", "f2")
    assert ping(vm1, _ip(p2)) and ping(vm2, _ip(p1))
    for n in ("1", "2"):
        assert _master(env.hosts[n], env.physical[n]) == _brq(net)


def test_tcp_is_blocked_until_a_rule_allows_it(env: Cloud, vxnet: dict[str, Any]) -> None:
    web = cloud.security_group(env.admin, "lb-web")  # egress only, no ingress
    server, vm_s = _instance(env, vxnet, "2", "w1", security_groups=[web])
    _, vm_c = _instance(env, vxnet, "1", "w2")
    serve_tcp(env.fabric, vm_s)
    assert not tcp_answers(vm_c, _ip(server))
    status, body = env.admin.post("/v2.0/security-group-rules", {"security_group_rule": {
        "security_group_id": web, "direction": "ingress", "ethertype": "IPv4",
        "protocol": "tcp", "port_range_min": TCP_PORT, "port_range_max": TCP_PORT}})
    assert status == 201, body
    assert wait_for(lambda: tcp_answers(vm_c, _ip(server)), 30)
    assert not ping(vm_c, _ip(server), tries=2)  # only that port was opened


def test_port_security_off_lets_a_spoofed_source_through_and_on_blocks_it(
        env: Cloud, vxnet: dict[str, Any]) -> None:
    target, _ = _instance(env, vxnet, "2", "s1", port_security_enabled=False)
    sender, vm = _instance(env, vxnet, "1", "s2", port_security_enabled=False,
                           security_groups=[])
    spoofed = "10.102.0.250"
    sh("ip", "-n", vm, "addr", "add", f"{spoofed}/32", "dev", "eth0")

    def spoofed_ping(tries: int = 3) -> bool:
        return any(sh("ip", "netns", "exec", vm, "ping", "-c1", "-W1", "-I", spoofed,
                      _ip(target), check=False).returncode == 0 for _ in range(tries))
    assert spoofed_ping()
    egress_only = cloud.security_group(env.admin, "lb-egress")  # a new group lets everything out
    status, body = env.admin.put(f"/v2.0/ports/{sender['id']}", {"port": {
        "port_security_enabled": True, "security_groups": [egress_only]}})
    assert status == 200, body
    assert wait_for(lambda: not spoofed_ping(1), 30), env.agent_log("1")
    assert ping(vm, _ip(target))  # its own address still passes


def test_deleting_the_port_removes_its_tap_from_the_bridge_and_the_empty_network(
        env: Cloud) -> None:
    net = _network(env, "lb-del", "10.104.0.0/24")
    port, _ = _instance(env, net, "1", "d1")
    h1, vxlan = env.hosts["1"], f"vxlan-{net['provider:segmentation_id']}"
    assert _master(h1, _tap(port)) == _brq(net) and _link(h1, vxlan) is not None
    status, _ = env.admin.delete(f"/v2.0/ports/{port['id']}")
    assert status == 204
    assert wait_for(lambda: _master(h1, _tap(port)) is None, 30)
    assert wait_for(lambda: _link(h1, _brq(net)) is None and _link(h1, vxlan) is None, 30)
    assert _link(h1, _tap(port)) is not None  # the tap is the compute service's to delete
