"""Fullstack: security groups and port security enforced by the OVS agents'
``openvswitch`` firewall driver, checked with real packets.

Two emulated hosts over VXLAN; instances are namespaces. Rules and
memberships are changed through the API while the instances run, so the
security-group fanouts to the agents are exercised too.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, Iterator

import pytest

from tests.conftest import Client, Server
from tests.fullstack import cloud
from tests.fullstack.hosts import (
    TCP_PORT,
    Fabric,
    Host,
    needs_ovs,
    ping,
    serve_tcp,
    sh,
    tcp_answers,
)
from tests.waiting import wait_for

pytestmark = needs_ovs()
LOCAL_IPS = {"1": "10.99.0.1", "2": "10.99.0.2"}


@dataclass
class Cloud:
    server: Server
    admin: Client  # admin of one project: its ports get the project's default group
    fabric: Fabric
    hosts: dict[str, Host]


@pytest.fixture(scope="module")
def env(fabric: Fabric, vhost: str, tmp_path_factory: pytest.TempPathFactory
        ) -> Iterator[Cloud]:
    server = cloud.start_server(tmp_path_factory.mktemp("fullstack-sg"), vhost)
    try:
        admin = Client(server.url, project=uuid.uuid4().hex, roles="admin")
        hosts = {n: fabric.host(n) for n in LOCAL_IPS}
        fabric.underlay(hosts["1"], hosts["2"], LOCAL_IPS["1"], LOCAL_IPS["2"])
        fabric.wire(hosts["1"], hosts["2"], cloud.PHYS_BRIDGE)  # the agent maps physnet1
        for n, host in hosts.items():
            conf = cloud.agent_conf(host, vhost, LOCAL_IPS[n], firewall_driver="openvswitch")
            cloud.start_agent(fabric, host, conf)
        for host in hosts.values():
            assert wait_for(lambda: cloud.agent_alive(admin, host.hostname), 60), (
                (host.dir / "agent.log").read_text()[-3000:])
        yield Cloud(server, admin, fabric, hosts)
    finally:
        fabric.stop_processes()
        server.stop()


@pytest.fixture(scope="module")
def net(env: Cloud) -> dict[str, Any]:
    return cloud.network(env.admin, "fs-sg", "10.101.0.0/24")


def _instance(env: Cloud, net: dict[str, Any], host: str, suffix: str,
              **attrs: Any) -> tuple[dict[str, Any], str]:
    port = cloud.bound_port(env.admin, net, env.hosts[host].hostname, **attrs)
    ns = env.hosts[host].instance(suffix, port)
    assert cloud.wait_active(env.admin, port["id"]), port["id"]
    return port, ns


def _ip(port: dict[str, Any]) -> str:
    return port["fixed_ips"][0]["ip_address"]



def _rule(env: Cloud, group: str, **rule: Any) -> None:
    status, body = env.admin.post("/v2.0/security-group-rules", {"security_group_rule": {
        "security_group_id": group, "direction": "ingress", "ethertype": "IPv4", **rule}})
    assert status == 201, body




def test_default_group_lets_instances_of_the_project_ping_each_other(
        env: Cloud, net: dict[str, Any]) -> None:
    p1, vm1 = _instance(env, net, "1", "d1")
    p2, vm2 = _instance(env, net, "2", "d2")
    p3, vm3 = _instance(env, net, "1", "d3")
    assert ping(vm1, _ip(p2)) and ping(vm2, _ip(p1))  # across hosts
    assert ping(vm1, _ip(p3)) and ping(vm3, _ip(p1))  # on one host
    assert any("ct(commit" in f for f in env.hosts["1"].flows("br-int"))


def test_tcp_is_blocked_until_a_rule_allows_it(env: Cloud, net: dict[str, Any]) -> None:
    web = cloud.security_group(env.admin, "fs-web")  # egress only, no ingress
    server, vm_s = _instance(env, net, "2", "w1", security_groups=[web])
    _, vm_c = _instance(env, net, "1", "w2")
    serve_tcp(env.fabric, vm_s)
    assert not tcp_answers(vm_c, _ip(server))
    assert not ping(vm_c, _ip(server), tries=2)
    _rule(env, web, protocol="tcp", port_range_min=TCP_PORT, port_range_max=TCP_PORT)
    assert wait_for(lambda: tcp_answers(vm_c, _ip(server)), 30)
    assert not ping(vm_c, _ip(server), tries=2)  # only that port was opened


def test_remote_group_rule_admits_its_members_including_later_ones(
        env: Cloud, net: dict[str, Any]) -> None:
    guarded = cloud.security_group(env.admin, "fs-guarded")
    friends = cloud.security_group(env.admin, "fs-friends")
    _rule(env, guarded, protocol="icmp", remote_group_id=friends)
    target, _ = _instance(env, net, "2", "g1", security_groups=[guarded])
    _, vm_f = _instance(env, net, "1", "g2", security_groups=[friends])
    stranger, vm_x = _instance(env, net, "1", "g3")  # default group only
    assert wait_for(lambda: ping(vm_f, _ip(target), tries=1), 30)
    assert not ping(vm_x, _ip(target), tries=2)
    # joining the remote group lets the stranger in (member update fanout)
    status, body = env.admin.put(f"/v2.0/ports/{stranger['id']}",
                                 {"port": {"security_groups": [friends]}})
    assert status == 200, body
    assert wait_for(lambda: ping(vm_x, _ip(target), tries=1), 30)


def _spoof(ns: str, port: dict[str, Any], fake: str) -> None:
    sh("ip", "-n", ns, "addr", "flush", "dev", "eth0")
    sh("ip", "-n", ns, "addr", "add", f"{fake}/24", "dev", "eth0")


def test_spoofed_source_address_is_dropped_only_with_port_security(
        env: Cloud, net: dict[str, Any]) -> None:
    open_ = {"port_security_enabled": False, "security_groups": []}
    target, _ = _instance(env, net, "2", "s0", **open_)
    guarded, vm_g = _instance(env, net, "1", "s1")
    loose, vm_l = _instance(env, net, "1", "s2", **open_)
    assert ping(vm_g, _ip(target)) and ping(vm_l, _ip(target))
    _spoof(vm_g, guarded, "10.101.0.201")
    _spoof(vm_l, loose, "10.101.0.202")
    assert not ping(vm_g, _ip(target), tries=3)
    assert ping(vm_l, _ip(target))
