"""Fullstack: the OVS agent's optional parts, on one cloud of two emulated hosts.

The server loads the ``l2population`` mechanism driver and the ``qos``
service; the agents run with ``l2_population`` and ``arp_responder`` (no
tunnel_sync polling), the ``qos`` extension and the ``openvswitch``
firewall. Scenarios: tunnels that follow the ports, bandwidth limits,
stateless security groups.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, Iterator

import pytest

from tests.conftest import Client, Server
from tests.fullstack import cloud
from tests.fullstack.hosts import Fabric, Host, needs_ovs, ping, sh
from tests.waiting import wait_for

pytestmark = needs_ovs()
LOCAL_IPS = {"1": "10.99.0.1", "2": "10.99.0.2"}
AGENT = "l2_population = true\narp_responder = true\nextensions = qos\n"


@dataclass
class Cloud:
    server: Server
    admin: Client
    fabric: Fabric
    hosts: dict[str, Host]


@pytest.fixture(scope="module")
def env(fabric: Fabric, vhost: str, tmp_path_factory: pytest.TempPathFactory
        ) -> Iterator[Cloud]:
    server = cloud.start_server(tmp_path_factory.mktemp("fullstack-extras"), vhost, "qos",
                                mechanism_drivers="openvswitch,l2population",
                                extension_drivers="port_security,qos")
    try:
        admin = Client(server.url, project=uuid.uuid4().hex, roles="admin")
        hosts = {n: fabric.host(n) for n in LOCAL_IPS}
        fabric.underlay(hosts["1"], hosts["2"], LOCAL_IPS["1"], LOCAL_IPS["2"])
        for host in hosts.values():
            cloud.add_phys_bridge(host)
        for n, host in hosts.items():
            conf = cloud.agent_conf(host, vhost, LOCAL_IPS[n], "openvswitch", AGENT)
            cloud.start_agent(fabric, host, conf)
        for host in hosts.values():
            assert wait_for(lambda: cloud.agent_alive(admin, host.hostname), 60), (
                (host.dir / "agent.log").read_text()[-3000:])
        yield Cloud(server, admin, fabric, hosts)
    finally:
        fabric.stop_processes()
        server.stop()


def _ip(port: dict[str, Any]) -> str:
    return str(port["fixed_ips"][0]["ip_address"])


def _tunnels(host: Host) -> list[str]:
    return [p for p in host.vsctl("list-ports", "br-tun").split() if p.startswith("vxlan-")]


def _instance(env: Cloud, net: dict[str, Any], host: str, suffix: str,
              **attrs: Any) -> tuple[dict[str, Any], str]:
    port = cloud.bound_port(env.admin, net, env.hosts[host].hostname, **attrs)
    ns = env.hosts[host].instance(suffix, port)
    assert cloud.wait_active(env.admin, port["id"]), port["id"]
    return port, ns


def test_l2pop_tunnels_come_with_a_shared_network_and_go_with_its_last_port(env: Cloud
                                                                            ) -> None:
    h1, h2 = env.hosts["1"], env.hosts["2"]
    # both agents are alive: tunnel_sync would have joined them by now
    assert not _tunnels(h1) and not _tunnels(h2)
    assert all(a["configurations"]["l2_population"]
               for a in env.admin.get("/v2.0/agents")[1]["agents"])
    net = cloud.network(env.admin, "fs-l2pop", "10.102.0.0/24")
    p1, vm1 = _instance(env, net, "1", "l1")
    assert not _tunnels(h1)  # nobody else has a port of the network yet
    p2, vm2 = _instance(env, net, "2", "l2")
    assert wait_for(lambda: _tunnels(h1) == ["vxlan-0a630002"]
                    and _tunnels(h2) == ["vxlan-0a630001"], 30)
    assert ping(vm1, _ip(p2)) and ping(vm2, _ip(p1))
    # br-tun answers ARP for the remote instance and sends its MAC straight to h2
    assert wait_for(lambda: any(f"arp_tpa={_ip(p2)}" in f for f in h1.flows("br-tun")), 10)
    assert any(f"dl_dst={p2['mac_address']}" in f and "vxlan-0a630002" in f
               for f in h1.flows("br-tun"))
    env.hosts["2"].unplug("l2")
    assert env.admin.delete(f"/v2.0/ports/{p2['id']}")[0] == 204
    assert wait_for(lambda: not _tunnels(h1) and not _tunnels(h2), 30), (
        _tunnels(h1), _tunnels(h2))
    assert wait_for(lambda: not any(_ip(p2) in f or p2["mac_address"] in f
                                    for f in h1.flows("br-tun")
                                    if "hard_timeout" not in f), 10), "\n".join(h1.flows("br-tun"))


# -- QoS ---------------------------------------------------------------------------------

RECEIVE = ("import socket,sys\ns=socket.socket();s.setsockopt(socket.SOL_SOCKET,"
           "socket.SO_REUSEADDR,1);s.bind(('',5001));s.listen(1);s.settimeout(60)\n"
           "c,_=s.accept()\nwhile c.recv(65536): pass\nc.close()")
SEND = ("import socket,sys,time\nfor _ in range(50):\n try:\n  s=socket.create_connection("
        "(sys.argv[1],5001),timeout=2); break\n except OSError: time.sleep(0.1)\n"
        "s.settimeout(60);t=time.monotonic();s.sendall(b'x'*int(sys.argv[2]))\n"
        "s.shutdown(socket.SHUT_WR);s.recv(1);print(time.monotonic()-t)")


def _throughput(src: str, dst: str, dst_ip: str, size: int = 1_000_000) -> float:
    """Bits per second of one TCP transfer from namespace ``src`` to ``dst``."""
    import subprocess
    import sys
    receiver = subprocess.Popen(["ip", "netns", "exec", dst, sys.executable, "-c", RECEIVE])
    try:
        took = sh("ip", "netns", "exec", src, sys.executable, "-c", SEND, dst_ip, str(size),
                  timeout=120).stdout
    finally:
        receiver.wait(60)
    return size * 8 / float(took)


def _qos_policy(env: Cloud, *rules: dict[str, Any]) -> str:
    status, body = env.admin.post("/v2.0/qos/policies", {"policy": {"name": "fs-qos"}})
    assert status == 201, body
    pid = body["policy"]["id"]
    for r in rules:
        status, made = env.admin.post(f"/v2.0/qos/policies/{pid}/bandwidth_limit_rules",
                                      {"bandwidth_limit_rule": r})
        assert status == 201, made
    return str(pid)


def _meters(host: Host) -> str:
    return sh("ovs-ofctl", "-O", "OpenFlow13", "dump-meters", "br-int", env=host.env).stdout


def _shaping(host: Host, port: dict[str, Any]) -> str:
    tap = host.vsctl("--bare", "--columns=name", "find", "interface",
                     f"external_ids:iface-id={port['id']}").strip()
    return host.vsctl("--bare", "--columns=qos", "list", "port", tap).strip()


def test_bandwidth_limits_cap_tcp_both_ways_follow_rule_updates_and_go_with_the_policy(
        env: Cloud) -> None:
    h1 = env.hosts["1"]
    net = cloud.network(env.admin, "fs-qos", "10.103.0.0/24")
    # A burst of a tenth of the rate: the default (80% of it, 3.2 Mbit) is
    # two fifths of a 1 MB transfer and lets its average reach 1.5x the rate.
    pid = _qos_policy(env, {"max_kbps": 4000, "max_burst_kbps": 400, "direction": "egress"},
                      {"max_kbps": 4000, "max_burst_kbps": 400, "direction": "ingress"})
    limited, vm_l = _instance(env, net, "1", "q1", qos_policy_id=pid)
    free, vm_f = _instance(env, net, "1", "q2")
    other, vm_o = _instance(env, net, "1", "q3")
    assert wait_for(lambda: "rate=4000" in _meters(h1) and _shaping(h1, limited), 30)
    assert "burst_size=400" in _meters(h1), _meters(h1)
    unlimited = _throughput(vm_f, vm_o, _ip(other))
    out = _throughput(vm_l, vm_f, _ip(free))  # egress from the instance: the meter
    into = _throughput(vm_f, vm_l, _ip(limited))  # ingress to the instance: shaping
    print(f"\nTCP bit/s unlimited {unlimited:.0f}, egress-limited {out:.0f}, "
          f"ingress-limited {into:.0f} (limits 4,000,000)")
    assert out < unlimited / 3 and into < unlimited / 3, (unlimited, out, into)
    assert out < 4000 * 1000 * 1.5 and into < 4000 * 1000 * 1.5, (out, into)
    # a rule update applies live (the server pushes the policy)
    rules = env.admin.get(f"/v2.0/qos/policies/{pid}")[1]["policy"]["rules"]
    egress = next(r for r in rules if r["direction"] == "egress")
    status, body = env.admin.put(f"/v2.0/qos/policies/{pid}/bandwidth_limit_rules/"
                                 f"{egress['id']}", {"bandwidth_limit_rule": {"max_kbps": 8000}})
    assert status == 200, body
    assert wait_for(lambda: "rate=8000" in _meters(h1), 30)
    # detached: the meter, its flow and the shaping go
    status, body = env.admin.put(f"/v2.0/ports/{limited['id']}",
                                 {"port": {"qos_policy_id": None}})
    assert status == 200, body
    assert wait_for(lambda: "rate=" not in _meters(h1) and not _shaping(h1, limited), 30)
    assert not any("meter:" in f for f in sh(
        "ovs-ofctl", "-O", "OpenFlow13", "dump-flows", "br-int", env=h1.env).stdout.splitlines())


# -- stateless security groups -------------------------------------------------------------


def test_a_stateless_group_lets_answers_in_only_with_a_rule_of_their_own(env: Cloud) -> None:
    net = cloud.network(env.admin, "fs-stateless", "10.104.0.0/24")
    status, body = env.admin.post("/v2.0/security-groups", {"security_group": {
        "name": "fs-stateless", "stateful": False}})
    assert status == 201, body
    group = body["security_group"]
    assert group["stateful"] is False
    target, _ = _instance(env, net, "2", "s0", port_security_enabled=False, security_groups=[])
    _, vm = _instance(env, net, "1", "s1", security_groups=[group["id"]])
    # egress is open (the group's default rules), the echo reply is not let back in
    assert not ping(vm, _ip(target), tries=3)
    status, body = env.admin.post("/v2.0/security-group-rules", {"security_group_rule": {
        "security_group_id": group["id"], "direction": "ingress", "ethertype": "IPv4",
        "protocol": "icmp"}})
    assert status == 201, body
    assert wait_for(lambda: ping(vm, _ip(target), tries=1), 30)
    tap = f"{env.fabric.prefix}ts1"
    entry = [f for f in env.hosts["1"].flows("br-int") if tap in f and "table=71" in f]
    assert entry and not [f for f in entry if "ct(" in f]
