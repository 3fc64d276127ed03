"""Upstream Neutron's DHCP agent serves a neutrino cloud: it registers over
RabbitMQ, is given the network, makes its DHCP port (wired by neutrino's
Open vSwitch agent of the same host), and an instance gets its address;
once the agent is stopped, no dnsmasq it started is left running."""
from __future__ import annotations

from typing import Iterator

import pytest

from tests.conftest import Client, Server
from tests.fullstack import cloud
from tests.fullstack import upstream_agents as upstream
from tests.fullstack.hosts import Fabric, Host, dhcp, needs_ovs, ping
from tests.waiting import wait_for

pytestmark = [needs_ovs(), pytest.mark.usefixtures("upstream_neutron"),
              pytest.mark.skipif(upstream.missing_reason() is not None,
                                 reason=upstream.missing_reason() or "")]
LOCAL_IP = "192.0.2.81"


@pytest.fixture(scope="module")
def setup(fabric: Fabric, vhost: str, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[tuple[Server, Client, Host]]:
    server = cloud.start_server(tmp_path_factory.mktemp("updhcp-server"), vhost)
    host = fabric.host("1")
    try:
        admin = Client(server.url, roles="admin")
        cloud.add_phys_bridge(host)
        cloud.start_agent(fabric, host, cloud.agent_conf(host, vhost, LOCAL_IP))
        assert wait_for(lambda: cloud.agent_alive(admin, host.hostname,
                                                  "Open vSwitch agent"), 60)
        upstream.start_dhcp_agent(fabric, host, vhost)
        assert wait_for(lambda: cloud.agent_alive(admin, host.hostname, "DHCP agent"), 90), (
            upstream.log_tail(host, "upstream-dhcp-agent.log"))
        yield server, admin, host
    finally:
        fabric.stop_processes()  # the agent, then the dnsmasqs it left running
        leaked = upstream.dnsmasq_pids(host)
        cloud.remove_agent_namespaces(server)
        server.stop()
    assert not leaked, f"dnsmasq left running: {leaked}"


def test_an_instance_gets_its_address_from_upstreams_dhcp_agent(
        setup: tuple[Server, Client, Host]) -> None:
    _, admin, host = setup
    net = cloud.network(admin, "updhcp", "10.120.0.0/24")
    port = cloud.bound_port(admin, net, host.hostname)
    ns = host.instance("v1", port, prefix_len=None)
    assert cloud.wait_active(admin, port["id"], 60), upstream.log_tail(host, "agent.log")

    def dhcp_port_active() -> bool:
        found = admin.get(f"/v2.0/ports?network_id={net['id']}&device_owner=network:dhcp")
        ports = found[1]["ports"]
        return len(ports) == 1 and ports[0]["status"] == "ACTIVE"
    assert wait_for(dhcp_port_active, 90), upstream.log_tail(host, "upstream-dhcp-agent.log")
    leased = dhcp(ns, host.fabric.root)
    assert leased == port["fixed_ips"][0]["ip_address"], (
        upstream.log_tail(host, "upstream-dhcp-agent.log"))
    dhcp_ip = admin.get(f"/v2.0/ports?network_id={net['id']}&device_owner=network:dhcp"
                        )[1]["ports"][0]["fixed_ips"][0]["ip_address"]
    assert ping(ns, dhcp_ip)
    # the agent's dnsmasq, found by its pid file: what the teardown ends
    assert len(upstream.dnsmasq_pids(host)) == 1
