"""Fullstack: security-group logging (``logging``, the agents' ``log``
extension) with real packets.

Two emulated hosts over VXLAN, the openvswitch firewall on both. A log of a
group makes the agent of its member's host copy the packets the group
accepts (the first of each connection) and those it drops to its packet-in
reader, which writes upstream's lines to ``[network_log]
local_output_log_base``, no more than the rate limit allows.
"""
from __future__ import annotations

import re
import time
import uuid
from pathlib import Path
from typing import Callable, Iterator

import pytest

from neutrino.agents.ovs import netlog
from tests.conftest import Client
from tests.fullstack import cloud
from tests.fullstack.hosts import Fabric, Host, needs_ovs, ping, sh
from tests.fullstack.test_security_groups import LOCAL_IPS, Cloud, _instance, _ip, _rule
from tests.waiting import wait_for

pytestmark = needs_ovs()
PLUGIN = "neutrino.plugins.logging.plugin:LoggingPlugin"
BURST = 25


def _log_file(host: Host) -> Path:
    return host.dir / "security-groups.log"


@pytest.fixture(scope="module")
def env(fabric: Fabric, vhost: str, tmp_path_factory: pytest.TempPathFactory
        ) -> Iterator[Cloud]:
    server = cloud.start_server(tmp_path_factory.mktemp("fullstack-log"), vhost,
                                service_plugins=PLUGIN)
    try:
        admin = Client(server.url, project=uuid.uuid4().hex, roles="admin")
        hosts = {n: fabric.host(n) for n in LOCAL_IPS}
        fabric.underlay(hosts["1"], hosts["2"], LOCAL_IPS["1"], LOCAL_IPS["2"])
        fabric.wire(hosts["1"], hosts["2"], cloud.PHYS_BRIDGE)
        for n, host in hosts.items():
            options = (f"extensions = log\n[network_log]\nrate_limit = 100\n"
                       f"burst_limit = {BURST}\nlocal_output_log_base = {_log_file(host)}\n")
            conf = cloud.agent_conf(host, vhost, LOCAL_IPS[n], firewall_driver="openvswitch",
                                    agent_options=options)
            cloud.start_agent(fabric, host, conf)
        for host in hosts.values():
            assert wait_for(lambda: cloud.agent_alive(admin, host.hostname), 60), (
                (host.dir / "agent.log").read_text()[-3000:])
        yield Cloud(server, admin, fabric, hosts)
    finally:
        fabric.stop_processes()
        server.stop()


def _lines(host: Host, action: str, port_id: str) -> list[str]:
    path = _log_file(host)
    text = path.read_text() if path.exists() else ""
    return [line for line in text.splitlines()
            if f"action={action} " in line and f"vm_port={port_id} " in line]


def _udp(ns: str, ip: str, count: int) -> None:
    """``count`` UDP packets to ``ip``, each to another port (a new connection each)."""
    sh("ip", "netns", "exec", ns, "python3", "-c",
       "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
       f"for i in range({count}): s.sendto(b'x', ('{ip}', 20000 + i))")


def _settled(read: Callable[[], int]) -> int:
    """``read``'s value once two reads half a second apart agree."""
    last = read()
    for _ in range(40):
        time.sleep(0.5)
        now = read()
        if now == last:
            return now
        last = now
    return last


def _log_flow_packets(host: Host, cookie: int) -> int:
    out = host.ofctl("dump-flows", "br-int", f"cookie={cookie:#x}/-1")
    return sum(int(n) for n in re.findall(r"n_packets=(\d+)", out))


def test_accepted_and_dropped_packets_of_a_logged_group_are_logged_within_the_rate_limit(
        env: Cloud) -> None:
    net = cloud.network(env.admin, "fs-log", "10.102.0.0/24")
    logged = cloud.security_group(env.admin, "fs-logged")
    _rule(env, logged, protocol="icmp")  # pings in; UDP is dropped
    target, _ = _instance(env, net, "2", "l1", security_groups=[logged])
    client, vm_c = _instance(env, net, "1", "l2")
    host = env.hosts["2"]
    assert ping(vm_c, _ip(target))
    assert _lines(host, "ACCEPT", target["id"]) == []  # nothing logged yet

    status, body = env.admin.post("/v2.0/log/logs", {"log": {
        "name": "fs", "resource_type": "security_group", "resource_id": logged}})
    assert status == 201, body
    drop_cookie = netlog.cookie(target["id"], "DROP")
    assert wait_for(lambda: any(f"cookie={drop_cookie:#x}" in f for f in host.ofctl(
        "dump-flows", "br-int").splitlines()), 30), host.flows("br-int")

    assert ping(vm_c, _ip(target))
    assert wait_for(lambda: _lines(host, "ACCEPT", target["id"]), 10), (
        host.dir / "agent.log").read_text()[-3000:]
    accepted = _lines(host, "ACCEPT", target["id"])[0]
    assert f"log_resource_ids=['{body['log']['id']}']" in accepted
    assert f"nw_src={_ip(client)}" in accepted and "icmp" in accepted

    sent = 300
    lines_before = len(_lines(host, "DROP", target["id"]))
    packets_before = _log_flow_packets(host, drop_cookie)
    _udp(vm_c, _ip(target), sent)
    packets = _settled(lambda: _log_flow_packets(host, drop_cookie)) - packets_before
    logged = _settled(lambda: len(_lines(host, "DROP", target["id"]))) - lines_before
    dropped = _lines(host, "DROP", target["id"])
    assert dropped and all("udp" in line and f"nw_src={_ip(client)}" in line
                           for line in dropped)
    # the packets reached the controller; the rate limit wrote a burst of them
    assert BURST <= logged < packets, (logged, packets)
    assert _lines(env.hosts["1"], "DROP", client["id"]) == []  # the client is not logged

    status, body = env.admin.put(f"/v2.0/log/logs/{body['log']['id']}",
                                 {"log": {"enabled": False}})
    assert status == 200, body
    assert wait_for(lambda: not any(f"cookie={drop_cookie:#x}" in f for f in host.ofctl(
        "dump-flows", "br-int").splitlines()), 30)
    before = len(_lines(host, "DROP", target["id"]))
    _udp(vm_c, _ip(target), 5)
    assert ping(vm_c, _ip(target))  # and the firewall still filters as before
    assert len(_lines(host, "DROP", target["id"])) == before
