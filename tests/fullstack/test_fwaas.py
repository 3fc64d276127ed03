"""Fullstack: firewall groups made through the API, applied by the L3 agent.

A network node ``n`` (OVS and L3 agents, the L3 agent with ``fwaas_v2``)
and a compute host ``1`` (OVS agent) joined by a VXLAN underlay. Two
project networks behind one router: an instance on each, TCP servers on
the second's. A firewall group on the second network's router interface
lets through, drops and rejects the first instance's connections rule by
rule as its ingress policy changes (the group ``ACTIVE`` once the agent
applied each change), and a connection the changed policy still allows
goes on, while one it no longer allows stops.

The compute host's OVS agent runs the ``fwaas_v2`` L2 extension (with the
openvswitch security-group driver): a group on an instance's port filters
its traffic after its security group, so a connection passes only where
both allow it, rule by rule, with the same handling of established
connections; a new instance port there joins its project's default group
(ingress denied) until taken out of it.
"""
from __future__ import annotations

import subprocess
import sys
from typing import Any, Iterator

import pytest

from tests.conftest import Client, Server
from tests.fullstack import cloud
from tests.fullstack.hosts import Fabric, Host, needs_ovs, sh
from tests.l3host.test_fwaas import ECHO_LINES, TALK
from tests.l3host.test_fwaas import connect as _connect
from tests.waiting import wait_for

pytestmark = [needs_ovs()]
LOCAL_IPS = {"n": "10.99.0.3", "1": "10.99.0.1"}
FWAAS = "extensions = fwaas_v2\n[fwaas]\nenabled = true\n"
L2_FWAAS = "extensions = fwaas_v2\n[fwaas]\nfirewall_l2_driver = ovs\n"
GROUPS, POLICIES, RULES = ("/v2.0/fwaas/firewall_groups", "/v2.0/fwaas/firewall_policies",
                           "/v2.0/fwaas/firewall_rules")


class Cloud:
    def __init__(self, server: Server, hosts: dict[str, Host]) -> None:
        self.server, self.hosts = server, hosts
        self.admin = Client(server.url, roles="admin")

    def post(self, path: str, singular: str, **attrs: Any) -> dict[str, Any]:
        status, body = self.admin.post(path, {singular: attrs})
        assert status == 201, body
        return dict(body[singular])

    def status(self, group_id: str) -> str:
        return str(self.admin.get(f"{GROUPS}/{group_id}")[1]["firewall_group"]["status"])

    def log_tail(self) -> str:
        out = []
        for host, name in (("n", "l3-agent.log"), ("n", "agent.log"), ("1", "agent.log")):
            path = self.hosts[host].dir / name
            lines = path.read_text().splitlines() if path.exists() else []
            out.append(f"--- {host} {name}\n" + "\n".join(
                ln for ln in lines if " neutrino." in ln or ln.startswith(" "))[-3000:])
        served = [ln for ln in self.server.log.read_text().splitlines()
                  if "firewall" in ln.lower() or "ERROR" in ln or ln.startswith(" ")]
        out.append("--- server\n" + "\n".join(served[-30:]))
        return "\n".join(out)


@pytest.fixture(scope="module")
def fwcloud(fabric: Fabric, vhost: str, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[Cloud]:
    server = cloud.start_server(tmp_path_factory.mktemp("fwaas-server"), vhost,
                                "router,firewall_v2")
    try:
        admin = Client(server.url, roles="admin")
        hosts = {n: fabric.host(n) for n in LOCAL_IPS}
        fabric.underlay(hosts["n"], hosts["1"], LOCAL_IPS["n"], LOCAL_IPS["1"])
        for host in hosts.values():
            cloud.add_phys_bridge(host)
        for name, host in hosts.items():
            l2 = {"firewall_driver": "openvswitch", "agent_options": L2_FWAAS} if name == "1" else {}
            cloud.start_agent(fabric, host, cloud.agent_conf(host, vhost, LOCAL_IPS[name], **l2))
        node = hosts["n"]
        cloud.start_agent(fabric, node, cloud.service_agent_conf(node, vhost, "l3",
                                                                 agent=FWAAS), "l3")
        for host in hosts.values():
            assert wait_for(lambda: cloud.agent_alive(admin, host.hostname,
                                                      "Open vSwitch agent"), 60)
        assert wait_for(lambda: cloud.agent_alive(admin, node.hostname, "L3 agent"), 60)
        yield Cloud(server, hosts)
    finally:
        fabric.stop_processes()
        cloud.remove_agent_namespaces(server)
        server.stop()


def test_traffic_across_a_router_follows_the_firewall_group_rule_by_rule(
        fwcloud: Cloud) -> None:
    c = fwcloud
    net1 = cloud.network(c.admin, "fw-net1", "10.110.1.0/24")
    net2 = cloud.network(c.admin, "fw-net2", "10.110.2.0/24")
    router = c.post("/v2.0/routers", "router", name="fw-r")
    ports = {}
    for net in (net1, net2):
        sub = c.admin.get(f"/v2.0/subnets?network_id={net['id']}")[1]["subnets"][0]
        status, body = c.admin.put(f"/v2.0/routers/{router['id']}/add_router_interface",
                                   {"subnet_id": sub["id"]})
        assert status == 200, body
        ports[net["id"]] = body["port_id"]
    p1 = cloud.bound_port(c.admin, net1, c.hosts["1"].hostname, port_security_enabled=False)
    p2 = cloud.bound_port(c.admin, net2, c.hosts["n"].hostname, port_security_enabled=False)
    vm1, vm2 = c.hosts["1"].instance("f1", p1), c.hosts["n"].instance("f2", p2)
    sh("ip", "-n", vm1, "route", "replace", "default", "via", "10.110.1.1")
    sh("ip", "-n", vm2, "route", "replace", "default", "via", "10.110.2.1")
    for port in (8080, 9090):
        c.hosts["n"].fabric.procs.append(subprocess.Popen(
            ["ip", "netns", "exec", vm2, sys.executable, "-c", ECHO_LINES, str(port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    assert cloud.wait_active(c.admin, p1["id"], 60), c.log_tail()
    assert cloud.wait_active(c.admin, p2["id"], 60), c.log_tail()
    address = p2["fixed_ips"][0]["ip_address"]
    for port in (8080, 9090):  # the servers may still be starting
        assert wait_for(lambda: _connect(vm1, address, port) == "OPEN", 60), c.log_tail()

    allow_8080 = c.post(RULES, "firewall_rule", protocol="tcp", destination_port="8080",
                        action="allow")
    anything = c.post(RULES, "firewall_rule", action="allow")
    ingress = c.post(POLICIES, "firewall_policy", firewall_rules=[allow_8080["id"]])
    egress = c.post(POLICIES, "firewall_policy", firewall_rules=[anything["id"]])
    group = c.post(GROUPS, "firewall_group", ports=[ports[net2["id"]]],
                   ingress_firewall_policy_id=ingress["id"],
                   egress_firewall_policy_id=egress["id"])
    assert group["status"] == "PENDING_CREATE"
    assert wait_for(lambda: c.status(group["id"]) == "ACTIVE", 60), c.log_tail()
    assert _connect(vm1, address, 8080) == "OPEN"
    assert _connect(vm1, address, 9090) == "TIMEOUT"

    talker = subprocess.Popen(["ip", "netns", "exec", vm1, sys.executable, "-c", TALK,
                               address, "8080"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    c.hosts["1"].fabric.procs.append(talker)  # type: ignore[arg-type]
    assert talker.stdin is not None and talker.stdout is not None

    def say(word: str) -> str:
        assert talker.stdin is not None and talker.stdout is not None
        talker.stdin.write(word + "\n")
        talker.stdin.flush()
        return talker.stdout.readline().strip()

    assert talker.stdout.readline().strip() == "CONNECTED"
    assert say("one") == "one"

    # a reject rule after the allow: 9090 refused at once, 8080 still open and going on
    reject = c.post(RULES, "firewall_rule", protocol="tcp", action="reject")
    status, body = c.admin.put(f"{POLICIES}/{ingress['id']}/insert_rule", {
        "firewall_rule_id": reject["id"], "insert_after": allow_8080["id"]})
    assert status == 200 and body["firewall_rules"] == [allow_8080["id"], reject["id"]], body
    assert c.status(group["id"]) == "PENDING_UPDATE"
    assert wait_for(lambda: c.status(group["id"]) == "ACTIVE", 60), c.log_tail()
    assert _connect(vm1, address, 9090) == "REFUSED"
    assert say("two") == "two"

    # the allow rule disabled: the established connection stops with it
    status, body = c.admin.put(f"{RULES}/{allow_8080['id']}",
                               {"firewall_rule": {"enabled": False}})
    assert status == 200, body
    assert wait_for(lambda: c.status(group["id"]) == "ACTIVE", 60), c.log_tail()
    assert say("three") == "TIMEOUT"
    talker.kill()
    # the router rate-limits its ICMP errors (its retransmissions had some): a probe may time out
    assert wait_for(lambda: _connect(vm1, address, 8080) == "REFUSED", 20), c.log_tail()

    # the group leaves the port: nothing is filtered
    status, body = c.admin.put(f"{GROUPS}/{group['id']}", {"firewall_group": {"ports": []}})
    assert status == 200 and body["firewall_group"]["status"] == "INACTIVE", body
    assert wait_for(lambda: _connect(vm1, address, 9090) == "OPEN", 60), c.log_tail()
    assert c.admin.delete(f"{GROUPS}/{group['id']}")[0] == 204


def _talker(c: Cloud, ns: str, address: str, port: int) -> Any:
    """A connection kept open; ``say`` a word, read its echo (or TIMEOUT)."""
    talker = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c", TALK,
                               address, str(port)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    c.hosts["1"].fabric.procs.append(talker)  # type: ignore[arg-type]
    assert talker.stdout is not None and talker.stdout.readline().strip() == "CONNECTED"

    def say(word: str) -> str:
        assert talker.stdin is not None and talker.stdout is not None
        talker.stdin.write(word + "\n")
        talker.stdin.flush()
        return talker.stdout.readline().strip()
    return talker, say


def test_an_instance_ports_group_and_security_group_must_both_allow_a_connection(
        fwcloud: Cloud) -> None:
    c = fwcloud
    net = cloud.network(c.admin, "fw-l2", "10.110.3.0/24")
    sg = cloud.security_group(c.admin, "fw-l2-sg")
    for port in (8080, 9090):  # the security group lets in 8080 and 9090, not 7070
        c.post("/v2.0/security-group-rules", "security_group_rule", security_group_id=sg,
               direction="ingress", ethertype="IPv4", protocol="tcp",
               port_range_min=port, port_range_max=port)
    served = cloud.bound_port(c.admin, net, c.hosts["1"].hostname, security_groups=[sg])
    client = cloud.bound_port(c.admin, net, c.hosts["n"].hostname,
                              port_security_enabled=False)
    vm, peer = c.hosts["1"].instance("l2s", served), c.hosts["n"].instance("l2c", client)
    for port in (7070, 8080, 9090):
        c.hosts["1"].fabric.procs.append(subprocess.Popen(
            ["ip", "netns", "exec", vm, sys.executable, "-c", ECHO_LINES, str(port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    assert cloud.wait_active(c.admin, served["id"], 60), c.log_tail()
    assert cloud.wait_active(c.admin, client["id"], 60), c.log_tail()
    address = served["fixed_ips"][0]["ip_address"]
    # the new port joined the project's default group: ingress denied, egress allowed
    default = c.admin.get(f"{GROUPS}?name=default")[1]["firewall_groups"][0]
    assert default["ports"] == [served["id"]], default
    assert wait_for(lambda: c.status(default["id"]) == "ACTIVE", 60), c.log_tail()
    assert _connect(peer, address, 9090) == "TIMEOUT"
    status, body = c.admin.put(f"{GROUPS}/{default['id']}", {"firewall_group": {"ports": []}})
    assert status == 200, body
    for port in (8080, 9090):  # the servers may still be starting
        assert wait_for(lambda: _connect(peer, address, port) == "OPEN", 60), c.log_tail()
    assert _connect(peer, address, 7070) == "TIMEOUT"

    allow_8080 = c.post(RULES, "firewall_rule", protocol="tcp", destination_port="8080",
                        action="allow")
    allow_7070 = c.post(RULES, "firewall_rule", protocol="tcp", destination_port="7070",
                        action="allow")
    anything = c.post(RULES, "firewall_rule", action="allow")
    ingress = c.post(POLICIES, "firewall_policy",
                     firewall_rules=[allow_8080["id"], allow_7070["id"]])
    egress = c.post(POLICIES, "firewall_policy", firewall_rules=[anything["id"]])
    group = c.post(GROUPS, "firewall_group", ports=[served["id"]],
                   ingress_firewall_policy_id=ingress["id"],
                   egress_firewall_policy_id=egress["id"])
    assert group["status"] == "PENDING_CREATE"
    assert wait_for(lambda: c.status(group["id"]) == "ACTIVE", 60), c.log_tail()
    assert _connect(peer, address, 8080) == "OPEN"  # both allow
    assert _connect(peer, address, 9090) == "TIMEOUT"  # the group does not
    assert _connect(peer, address, 7070) == "TIMEOUT"  # the security group does not

    talker, say = _talker(c, peer, address, 8080)
    assert say("one") == "one"
    # a deny rule first for 9090: the policy still allows 8080, the connection goes on
    deny = c.post(RULES, "firewall_rule", protocol="tcp", destination_port="9090",
                  action="deny")
    status, body = c.admin.put(f"{POLICIES}/{ingress['id']}/insert_rule", {
        "firewall_rule_id": deny["id"], "insert_before": allow_8080["id"]})
    assert status == 200, body
    assert wait_for(lambda: c.status(group["id"]) == "ACTIVE", 60), c.log_tail()
    assert say("two") == "two"
    # the allow rule disabled: the established connection stops with it
    status, body = c.admin.put(f"{RULES}/{allow_8080['id']}",
                               {"firewall_rule": {"enabled": False}})
    assert status == 200, body
    assert wait_for(lambda: c.status(group["id"]) == "ACTIVE", 60), c.log_tail()
    assert say("three") == "TIMEOUT"
    talker.kill()
    assert _connect(peer, address, 8080) == "TIMEOUT"

    # the group set down drops everything; the port leaving it: its security group alone
    status, body = c.admin.put(f"{GROUPS}/{group['id']}",
                               {"firewall_group": {"admin_state_up": False}})
    assert status == 200, body
    assert wait_for(lambda: c.status(group["id"]) == "DOWN", 60), c.log_tail()
    status, body = c.admin.put(f"{GROUPS}/{group['id']}", {"firewall_group": {"ports": []}})
    assert status == 200 and body["firewall_group"]["status"] == "INACTIVE", body
    assert wait_for(lambda: _connect(peer, address, 9090) == "OPEN", 60), c.log_tail()
    assert _connect(peer, address, 8080) == "OPEN"
    assert _connect(peer, address, 7070) == "TIMEOUT"
