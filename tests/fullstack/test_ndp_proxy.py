"""Fullstack: an NDP proxy made through the API, carried out by the L3 agent.

A network node ``n`` (OVS and L3 agents) and a compute host ``1`` (OVS
agent) joined by a VXLAN underlay; an external host on the flat provider
network (physnet1, br-phys of the network node). The external and the
internal IPv6 subnets come from one subnet pool of one address scope, so
nothing is NATed: the external host takes the pool's whole /48 as on-link
(as the upstream router of an NDP-proxied network does) and reaches an
instance's global address only while the router answers neighbour
solicitations for it on its gateway. The instance takes its SLAAC address
and default route from the router's radvd.
"""
from __future__ import annotations

from typing import Any, Iterator

import pytest

from tests.conftest import Client, Server
from tests.fullstack import cloud
from tests.fullstack.hosts import Fabric, Host, needs_ovs, sh
from tests.l3host.ipv6 import default_gateways, global_addresses, link_local, needs_radvd
from tests.waiting import wait_for

pytestmark = [needs_ovs(), needs_radvd]
LOCAL_IPS = {"n": "10.99.0.3", "1": "10.99.0.1"}
FAST_RA = "min_rtr_adv_interval = 3\nmax_rtr_adv_interval = 4\n"
POOL = "2001:db8:77::/48"
EXT_CIDR, EXT_HOST_IP = "2001:db8:77::/64", "2001:db8:77::1"
INT_CIDR = "2001:db8:77:1::/64"


class Cloud:
    def __init__(self, server: Server, hosts: dict[str, Host], ext_ns: str) -> None:
        self.server, self.hosts, self.ext_ns = server, hosts, ext_ns
        self.admin = Client(server.url, roles="admin")

    def post(self, plural: str, singular: str, **attrs: Any) -> dict[str, Any]:
        status, body = self.admin.post(f"/v2.0/{plural}", {singular: attrs})
        assert status == 201, body
        return dict(body[singular])

    def reaches(self, address: str) -> bool:
        """ping6 from the external host, its neighbour cache forgotten first
        (an address it learnt stays reachable for a while otherwise)."""
        sh("ip", "-n", self.ext_ns, "neigh", "flush", "all")
        return any(sh("ip", "netns", "exec", self.ext_ns, "ping", "-6", "-c1", "-W1", address,
                      check=False).returncode == 0 for _ in range(2))

    def log_tail(self) -> str:
        node = self.hosts["n"]
        out = [sh("ip", "netns", "list").stdout]
        for name in ("l3-agent.log", "agent.log"):
            out.append(f"--- {name}")
            out += cloud.log_lines(node, name, 30)
        return "\n".join(out)


@pytest.fixture(scope="module")
def ndpcloud(fabric: Fabric, vhost: str, tmp_path_factory: pytest.TempPathFactory
             ) -> Iterator[Cloud]:
    server = cloud.start_server(tmp_path_factory.mktemp("ndp-server"), vhost,
                                "router,ndp_proxy")
    try:
        admin = Client(server.url, roles="admin")
        hosts = {n: fabric.host(n) for n in LOCAL_IPS}
        fabric.underlay(hosts["n"], hosts["1"], LOCAL_IPS["n"], LOCAL_IPS["1"])
        for host in hosts.values():
            cloud.add_phys_bridge(host)
        ext_ns = cloud.external_host(fabric, hosts["n"], f"{EXT_HOST_IP}/48")
        for name, host in hosts.items():
            cloud.start_agent(fabric, host, cloud.agent_conf(host, vhost, LOCAL_IPS[name]))
        node = hosts["n"]
        cloud.start_agent(fabric, node, cloud.service_agent_conf(node, vhost, "l3", FAST_RA),
                          "l3")
        cloud.wait_agents(admin, list(hosts.values()), "Open vSwitch agent")
        cloud.wait_agents(admin, [node], "L3 agent")
        yield Cloud(server, hosts, ext_ns)
    finally:
        fabric.stop_processes()
        cloud.remove_agent_namespaces(server)
        server.stop()


def test_external_host_reaches_an_instance_only_while_its_ndp_proxy_exists(
        ndpcloud: Cloud) -> None:
    c = ndpcloud
    scope = c.post("address-scopes", "address_scope", name="ndp-scope", ip_version=6)
    pool = c.post("subnetpools", "subnetpool", name="ndp-pool", prefixes=[POOL],
                  default_prefixlen=64, address_scope_id=scope["id"])
    ext = c.post("networks", "network", name="ndp-ext", **{
        "router:external": True, "provider:network_type": "flat",
        "provider:physical_network": "physnet1"})
    c.post("subnets", "subnet", network_id=ext["id"], ip_version=6, cidr=EXT_CIDR,
           subnetpool_id=pool["id"], gateway_ip=EXT_HOST_IP, enable_dhcp=False)
    router = c.post("routers", "router", name="ndp-r", enable_ndp_proxy=True,
                    external_gateway_info={"network_id": ext["id"]})
    assert router["enable_ndp_proxy"] is True
    gw_ip = router["external_gateway_info"]["external_fixed_ips"][0]["ip_address"]
    net = c.post("networks", "network", name="ndp-int")
    sub = c.post("subnets", "subnet", network_id=net["id"], ip_version=6, cidr=INT_CIDR,
                 subnetpool_id=pool["id"], ipv6_ra_mode="slaac", ipv6_address_mode="slaac")
    status, body = c.admin.put(f"/v2.0/routers/{router['id']}/add_router_interface",
                               {"subnet_id": sub["id"]})
    assert status == 200, body
    router_mac = c.admin.get(f"/v2.0/ports/{body['port_id']}")[1]["port"]["mac_address"]

    port = cloud.bound_port(c.admin, net, c.hosts["1"].hostname)  # across the tunnel
    vm = c.hosts["1"].instance("n1", port, prefix_len=None)
    sh("ip", "netns", "exec", vm, "sysctl", "-qw", "net.ipv6.conf.eth0.accept_ra=2",
       "net.ipv6.conf.eth0.autoconf=1")
    assert cloud.wait_active(c.admin, port["id"], 60), c.log_tail()
    address = port["fixed_ips"][0]["ip_address"]
    assert wait_for(lambda: address in global_addresses(vm), 30), (
        sh("ip", "-n", vm, "-6", "addr").stdout, c.log_tail())
    assert wait_for(lambda: default_gateways(vm) == {link_local(router_mac)}, 15)
    # the router is on the external network, proxying on: only the proxy is missing
    assert wait_for(lambda: c.reaches(gw_ip), 60), c.log_tail()
    assert not c.reaches(address)

    proxy = c.post("ndp_proxies", "ndp_proxy", name="ndp-vm", router_id=router["id"],
                   port_id=port["id"])
    assert proxy["ip_address"] == address
    assert wait_for(lambda: c.reaches(address), 60), c.log_tail()

    assert c.admin.delete(f"/v2.0/ndp_proxies/{proxy['id']}")[0] == 204
    assert wait_for(lambda: not c.reaches(address), 60), c.log_tail()
