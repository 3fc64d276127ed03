"""Neutrino's Open vSwitch agent on a cloud run by upstream Neutron's server
(its API and ``neutron-rpc-server`` on RabbitMQ): the agent registers, wires
the ports upstream binds to its host, upstream shows them ACTIVE, and two
instances ping each other."""
from __future__ import annotations

from typing import Iterator

import pytest

from tests.conftest import Client, free_port
from tests.fullstack import cloud
from tests.fullstack import upstream_agents as upstream
from tests.fullstack.hosts import Fabric, Host, needs_ovs, ping
from tests.waiting import wait_for

pytestmark = [needs_ovs(), pytest.mark.usefixtures("upstream_neutron"),
              pytest.mark.skipif(upstream.server_missing_reason() is not None,
                                 reason=upstream.server_missing_reason() or "")]
LOCAL_IP = "192.0.2.91"


@pytest.fixture(scope="module")
def setup(fabric: Fabric, vhost: str) -> Iterator[tuple[upstream.UpstreamServer, Client, Host]]:
    server = upstream.UpstreamServer(fabric, vhost, free_port())
    try:
        server.start()
        admin = Client(server.url, project="mixed", roles="admin")
        host = fabric.host("1")
        cloud.add_phys_bridge(host)
        cloud.start_agent(fabric, host, cloud.agent_conf(host, vhost, LOCAL_IP))
        assert wait_for(lambda: cloud.agent_alive(admin, host.hostname,
                                                  "Open vSwitch agent"), 90), (
            server.log_tail(), (host.dir / "agent.log").read_text()[-3000:])
        yield server, admin, host
    finally:
        fabric.stop_processes()
        server.stop()


def test_ports_upstream_binds_to_the_host_go_active_and_instances_ping(
        setup: tuple[upstream.UpstreamServer, Client, Host]) -> None:
    server, admin, host = setup
    net = cloud.network(admin, "mixed", "10.121.0.0/24")
    ports = [cloud.bound_port(admin, net, host.hostname) for _ in range(2)]
    spaces = [host.instance(f"u{i}", port) for i, port in enumerate(ports)]
    for port in ports:
        assert cloud.wait_active(admin, port["id"], 90), (
            server.log_tail(), (host.dir / "agent.log").read_text()[-3000:])
    assert ping(spaces[0], ports[1]["fixed_ips"][0]["ip_address"])
    assert ping(spaces[1], ports[0]["fixed_ips"][0]["ip_address"])
