"""Fullstack: local IPs (``local_ip``, the OVS agents' ``local_ip`` extension)
with real packets.

Two emulated hosts over VXLAN, without a firewall and with the openvswitch
one (the local IP answered after the source's egress rules, the associated
port's ingress rules seeing its fixed IP). One local IP, associated with an instance's
port on each host: each host's other instance pings and connects to the
local IP and lands on the associated instance of its own host, which sees
the connection at its fixed IP (``translate``); once an association goes,
its host's instances no longer reach the local IP. A restarted agent pulls
the associations again.
"""
from __future__ import annotations

import re
import subprocess
import uuid
from dataclasses import dataclass
from typing import Any, Iterator

import pytest

from tests.conftest import Client
from tests.fullstack import cloud
from tests.fullstack.hosts import Fabric, needs_ovs, ping, sh
from tests.fullstack.test_security_groups import Cloud, _instance, _ip
from tests.waiting import wait_for

pytestmark = needs_ovs()
PLUGIN = "neutrino.plugins.local_ip.plugin:LocalIpPlugin"
PORT = 8080


# per firewall driver: the hosts' names, tunnel endpoints and namespaces' prefix
SETUPS = {"noop": (("1", "2"), ("10.99.0.1", "10.99.0.2"), ""),
          "openvswitch": (("3", "4"), ("10.99.0.3", "10.99.0.4"), "f")}


@dataclass
class LipCloud(Cloud):
    prefix: str = ""


@pytest.fixture(scope="module", params=sorted(SETUPS))
def env(request: pytest.FixtureRequest, fabric: Fabric, vhost: str,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[LipCloud]:
    names, ips, prefix = SETUPS[request.param]
    server = cloud.start_server(tmp_path_factory.mktemp("fullstack-lip"), vhost,
                                service_plugins=PLUGIN)
    try:
        admin = Client(server.url, project=uuid.uuid4().hex, roles="admin")
        hosts = {n: fabric.host(name) for n, name in zip(("1", "2"), names)}
        fabric.underlay(hosts["1"], hosts["2"], ips[0], ips[1])
        fabric.wire(hosts["1"], hosts["2"], cloud.PHYS_BRIDGE)
        for n, host in hosts.items():
            conf = cloud.agent_conf(host, vhost, ips[int(n) - 1],
                                    firewall_driver=request.param,
                                    agent_options="extensions = local_ip\n")
            cloud.start_agent(fabric, host, conf)
        for host in hosts.values():
            assert wait_for(lambda: cloud.agent_alive(admin, host.hostname), 60), (
                (host.dir / "agent.log").read_text()[-3000:])
        yield LipCloud(server, admin, fabric, hosts, prefix)
    finally:
        fabric.stop_processes()
        server.stop()


def _serve_name(env: Cloud, ns: str, name: str) -> None:
    """A TCP server in ``ns`` answering its ``name``."""
    env.fabric.procs.append(subprocess.Popen(  # type: ignore[arg-type]
        ["ip", "netns", "exec", ns, "busybox", "nc", "-ll", "-p", str(PORT), "-e",
         "/bin/echo", name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))


def _answer(ns: str, ip: str) -> str:
    try:
        return str(sh("ip", "netns", "exec", ns, "busybox", "nc", "-w", "2", ip, str(PORT),
                      check=False, timeout=6).stdout.strip())
    except subprocess.TimeoutExpired:
        return ""


def _cookies(host: Any) -> set[str]:
    return set(re.findall(r"cookie=(0x[0-9a-f]+)", host.ofctl("dump-flows", "br-int")))


def _associate(env: Cloud, lip: dict[str, Any], port: dict[str, Any]) -> None:
    status, body = env.admin.post(f"/v2.0/local_ips/{lip['id']}/port_associations",
                                  {"port_association": {"fixed_port_id": port["id"]}})
    assert status == 201, body


def test_instances_on_two_hosts_reach_the_same_local_ip_at_their_own_hosts_port(
        env: LipCloud) -> None:
    net = cloud.network(env.admin, f"fs-lip{env.prefix}", "10.103.0.0/24")
    status, body = env.admin.post("/v2.0/local_ips", {"local_ip": {"network_id": net["id"]}})
    assert status == 201, body
    lip = body["local_ip"]
    address = lip["local_ip_address"]
    # with the firewall: the project's default group lets its instances in
    answering = {n: _instance(env, net, n, f"{env.prefix}la{n}") for n in ("1", "2")}
    clients = {n: _instance(env, net, n, f"{env.prefix}lc{n}")[1] for n in ("1", "2")}
    for n, (_, ns) in answering.items():
        _serve_name(env, ns, f"answer-{n}")
    assert not ping(clients["1"], address, tries=1)  # nobody answers for it yet
    for port, _ in answering.values():
        _associate(env, lip, port)
    for n in ("1", "2"):
        assert wait_for(lambda: _answer(clients[n], address) == f"answer-{n}", 30), (
            n, env.hosts[n].flows("br-int"),
            (env.hosts[n].dir / "agent.log").read_text()[-3000:])
        assert ping(clients[n], address)
        # with the firewall, after the source's egress rules (table 73)
        answered_in = {t for f in env.hosts[n].flows("br-int")
                       if f"nw_dst={address}" in f and "ct(commit" in f
                       for t in re.findall(r"table=\d+", f.split("actions=")[0])}
        assert answered_in == {"table=73" if env.prefix else "table=31"}, answered_in
        # translated: the answering instance was reached at its fixed IP
        assert _answer(clients[n], _ip(answering[n][0])) == f"answer-{n}"
    # a restarted agent pulls the associations again and keeps answering
    host = env.hosts["1"]
    cloud.stop_agent(host)
    before = _cookies(host)
    cloud.start_agent(env.fabric, host, host.dir / "agent.conf")
    assert wait_for(lambda: (_cookies(host) and not _cookies(host) & before), 30), (
        host.dir / "agent.log").read_text()[-3000:]
    assert any(f"arp_tpa={address}" in f for f in host.flows("br-int"))
    assert _answer(clients["1"], address) == "answer-1"
    assert "local IP associations failed" not in (host.dir / "agent.log").read_text()
    # the association of host 2 goes: host 2's instances no longer reach it
    port2 = answering["2"][0]
    status, _ = env.admin.delete(
        f"/v2.0/local_ips/{lip['id']}/port_associations/{port2['id']}")
    assert status == 204
    assert wait_for(lambda: not any(f"arp_tpa={address}" in f
                                    for f in env.hosts["2"].flows("br-int")), 30)
    assert _answer(clients["2"], address) == ""
    assert _answer(clients["1"], address) == "answer-1"


def test_the_associated_ports_ingress_rules_see_the_translated_packets(
        env: LipCloud) -> None:
    if not env.prefix:
        pytest.skip("the openvswitch firewall's case")
    net = cloud.network(env.admin, "fs-lip-closed", "10.104.0.0/24")
    status, body = env.admin.post("/v2.0/local_ips", {"local_ip": {"network_id": net["id"]}})
    assert status == 201, body
    lip = body["local_ip"]
    closed = cloud.security_group(env.admin, "fs-lip-closed")  # no ingress rule
    port, ns = _instance(env, net, "1", "fcl", security_groups=[closed])
    _serve_name(env, ns, "closed")
    _, client = _instance(env, net, "1", "fcc")
    _associate(env, lip, port)
    host = env.hosts["1"]
    assert wait_for(lambda: any(f"arp_tpa={lip['local_ip_address']}" in f
                                for f in host.flows("br-int")), 30)
    assert _answer(client, lip["local_ip_address"]) == ""
    status, body = env.admin.post("/v2.0/security-group-rules", {"security_group_rule": {
        "security_group_id": closed, "direction": "ingress", "ethertype": "IPv4",
        "protocol": "tcp", "port_range_min": PORT, "port_range_max": PORT}})
    assert status == 201, body
    assert wait_for(lambda: _answer(client, lip["local_ip_address"]) == "closed", 30)
