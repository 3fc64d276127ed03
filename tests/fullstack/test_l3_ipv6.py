"""Fullstack: IPv6 routers - radvd in the network node's router namespace.

Two hosts joined by a VXLAN underlay: a network node ``n`` running the OVS
and L3 agents, and a compute host ``1`` running the OVS agent. Instances are
namespaces plugged as the compute service plugs them; they accept router
advertisements and configure themselves from them: a SLAAC address built
from the subnet's prefix and their MAC (EUI-64, the address the server gave
their port) and a default route via the router's link-local address. A
``dhcpv6-stateful`` subnet's advertisements carry the managed flag and no
autonomous prefix, read with rdisc6 (Debian ndisc6).
"""
from __future__ import annotations

from typing import Any, Iterator

import pytest

from tests.conftest import Client, Server
from tests.fullstack import cloud
from tests.fullstack.hosts import Fabric, Host, needs_ovs, sh
from tests.l3host.ipv6 import (
    default_gateways,
    global_addresses,
    link_local,
    needs_radvd,
    needs_rdisc6,
    ping6,
    slaac_address,
    solicited_flags,
)
from tests.waiting import wait_for

pytestmark = [needs_ovs(), needs_radvd, needs_rdisc6]
LOCAL_IPS = {"n": "10.99.0.3", "1": "10.99.0.1"}
FAST_RA = "min_rtr_adv_interval = 3\nmax_rtr_adv_interval = 4\n"


class Cloud:
    def __init__(self, server: Server, fabric: Fabric, hosts: dict[str, Host]) -> None:
        self.server, self.fabric, self.hosts = server, fabric, hosts
        self.admin = Client(server.url, roles="admin")
        status, body = self.admin.post("/v2.0/routers", {"router": {"name": "v6-r"}})
        assert status == 201, body
        self.router = body["router"]

    def network(self, name: str, cidr: str, mode: str) -> dict[str, Any]:
        """A network with one IPv6 subnet (both modes ``mode``) on the router."""
        status, body = self.admin.post("/v2.0/networks", {"network": {"name": name}})
        assert status == 201, body
        net = body["network"]
        status, sub = self.admin.post("/v2.0/subnets", {"subnet": {
            "network_id": net["id"], "ip_version": 6, "cidr": cidr,
            "ipv6_ra_mode": mode, "ipv6_address_mode": mode}})
        assert status == 201, sub
        status, body = self.admin.put(
            f"/v2.0/routers/{self.router['id']}/add_router_interface",
            {"subnet_id": sub["subnet"]["id"]})
        assert status == 200, body
        net["router_mac"] = self.admin.get(
            f"/v2.0/ports/{body['port_id']}")[1]["port"]["mac_address"]
        return net

    def instance(self, host: str, suffix: str, net: dict[str, Any]
                 ) -> tuple[str, dict[str, Any]]:
        port = cloud.bound_port(self.admin, net, self.hosts[host].hostname)
        ns = self.hosts[host].instance(suffix, port, prefix_len=None)
        sh("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.eth0.accept_ra=2",
           "net.ipv6.conf.eth0.autoconf=1")
        assert cloud.wait_active(self.admin, port["id"], 60), self.log_tail()
        return ns, port

    def log_tail(self) -> str:
        node = self.hosts["n"]
        out = [sh("ip", "netns", "list").stdout]
        for name in ("l3-agent.log", "agent.log"):
            out.append(f"--- {name}")
            out += cloud.log_lines(node, name, 30)
        return "\n".join(out)


@pytest.fixture(scope="module")
def v6cloud(fabric: Fabric, vhost: str, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[Cloud]:
    server = cloud.start_server(tmp_path_factory.mktemp("v6-server"), vhost, "router")
    try:
        admin = Client(server.url, roles="admin")
        hosts = {n: fabric.host(n) for n in LOCAL_IPS}
        fabric.underlay(hosts["n"], hosts["1"], LOCAL_IPS["n"], LOCAL_IPS["1"])
        for name, host in hosts.items():
            cloud.add_phys_bridge(host)
            cloud.start_agent(fabric, host, cloud.agent_conf(host, vhost, LOCAL_IPS[name]))
        node = hosts["n"]
        cloud.start_agent(fabric, node, cloud.service_agent_conf(node, vhost, "l3", FAST_RA),
                          "l3")
        cloud.wait_agents(admin, list(hosts.values()), "Open vSwitch agent")
        cloud.wait_agents(admin, [node], "L3 agent")
        yield Cloud(server, fabric, hosts)
    finally:
        fabric.stop_processes()
        cloud.remove_agent_namespaces(server)
        server.stop()


def _fixed_ip(port: dict[str, Any]) -> str:
    return str(port["fixed_ips"][0]["ip_address"])


def test_slaac_instances_take_address_and_default_route_from_the_router_and_ping_across(
        v6cloud: Cloud) -> None:
    net_a = v6cloud.network("v6-a", "2001:db8:a::/64", "slaac")
    net_b = v6cloud.network("v6-b", "2001:db8:b::/64", "slaac")
    vm_a, port_a = v6cloud.instance("1", "6a", net_a)  # compute host, across the tunnel
    vm_b, port_b = v6cloud.instance("n", "6b", net_b)
    # the server's address for each port is the instance's own EUI-64 SLAAC address
    assert _fixed_ip(port_a) == slaac_address("2001:db8:a::/64", port_a["mac_address"])
    assert _fixed_ip(port_b) == slaac_address("2001:db8:b::/64", port_b["mac_address"])
    for ns, port, net in ((vm_a, port_a, net_a), (vm_b, port_b, net_b)):
        assert wait_for(lambda: _fixed_ip(port) in global_addresses(ns), 30), (
            sh("ip", "-n", ns, "-6", "addr").stdout, v6cloud.log_tail())
        assert wait_for(lambda: default_gateways(ns) == {link_local(net["router_mac"])}, 15), (
            sh("ip", "-n", ns, "-6", "route").stdout)
    assert ping6(vm_a, _fixed_ip(port_b)), v6cloud.log_tail()
    assert ping6(vm_b, _fixed_ip(port_a))
    flags = solicited_flags(vm_a)
    assert (flags["Stateful address conf."], flags["Stateful other conf."]) == ("No", "No")
    assert flags["Autonomous address conf."] == "Yes"
    assert flags["MTU"] == "1450"  # the VXLAN network's MTU


def test_dhcpv6_stateful_subnet_advertises_the_managed_flag_and_no_autonomous_prefix(
        v6cloud: Cloud) -> None:
    net = v6cloud.network("v6-c", "2001:db8:c::/64", "dhcpv6-stateful")
    vm, port = v6cloud.instance("1", "6c", net)
    assert wait_for(lambda: "Stateful address conf." in solicited_flags(vm), 30), (
        v6cloud.log_tail())
    flags = solicited_flags(vm)
    assert flags["Stateful address conf."] == "Yes"
    assert flags["Stateful other conf."] == "No"
    assert flags["Autonomous address conf."] == "No"
    # the router is still the default router; addresses are DHCPv6's business
    assert wait_for(lambda: default_gateways(vm) == {link_local(net["router_mac"])}, 15)
    assert not any(a.startswith("2001:db8:c:") for a in global_addresses(vm))
