"""Upstream Neutron's Open vSwitch agent serves a neutrino cloud: it
registers over RabbitMQ, builds each port's details from the versioned
objects it pulls from neutrino's server and is pushed, wires two instances
(ACTIVE, a DHCP lease from neutrino's DHCP agent, ping), applies a security
group rule added later (its openvswitch firewall, told by a push) and puts a
deleted port on the dead VLAN."""
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
LOCAL_IP = "192.0.2.83"
DEAD_VLAN = "4095"


@pytest.fixture(scope="module")
def setup(fabric: Fabric, vhost: str, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[tuple[Server, Client, Host]]:
    server = cloud.start_server(tmp_path_factory.mktemp("upovs-server"), vhost)
    try:
        admin = Client(server.url, roles="admin")
        host = fabric.host("1")
        upstream.start_ovs_agent(fabric, host, vhost, LOCAL_IP)
        # upstream's agent imports all of neutron first: minutes on a loaded machine
        assert wait_for(lambda: cloud.agent_alive(admin, host.hostname,
                                                  "Open vSwitch agent"), 400), (
            upstream.log_tail(host, "upstream-ovs-agent.log"))
        cloud.start_agent(fabric, host, cloud.service_agent_conf(host, vhost, "dhcp"), "dhcp")
        assert wait_for(lambda: cloud.agent_alive(admin, host.hostname, "DHCP agent"), 120)
        yield server, admin, host
    finally:
        fabric.stop_processes()
        cloud.remove_agent_namespaces(server)
        server.stop()


def tag_of(host: Host, tap: str) -> str:
    return host.vsctl("get", "Port", tap, "tag").strip()


def test_upstreams_ovs_agent_wires_instances_applies_rules_and_drops_deleted_ports(
        setup: tuple[Server, Client, Host]) -> None:
    _, admin, host = setup
    logs = lambda: upstream.log_tail(host, "upstream-ovs-agent.log")  # noqa: E731
    net = cloud.network(admin, "upovs", "10.122.0.0/24")
    group = cloud.security_group(admin, "upovs")  # egress only: nothing comes in
    ports = [cloud.bound_port(admin, net, host.hostname, security_groups=[group])
             for _ in range(2)]
    spaces = [host.instance(f"o{i}", port, prefix_len=None) for i, port in enumerate(ports)]
    for port in ports:
        assert cloud.wait_active(admin, port["id"], 90), logs()
    for ns, port in zip(spaces, ports):
        assert dhcp(ns, host.fabric.root) == port["fixed_ips"][0]["ip_address"], logs()
    addresses = [p["fixed_ips"][0]["ip_address"] for p in ports]
    assert not ping(spaces[0], addresses[1], tries=2)

    status, rule = admin.post("/v2.0/security-group-rules", {"security_group_rule": {
        "security_group_id": group, "direction": "ingress", "protocol": "icmp"}})
    assert status == 201, rule
    assert wait_for(lambda: ping(spaces[0], addresses[1], tries=1), 30), logs()
    assert ping(spaces[1], addresses[0])

    tap = f"{host.fabric.prefix}to1"[:15]
    assert tag_of(host, tap) not in ("[]", DEAD_VLAN)
    status, _ = admin.delete(f"/v2.0/ports/{ports[1]['id']}")
    assert status == 204
    assert wait_for(lambda: tag_of(host, tap) == DEAD_VLAN, 30), logs()
    assert not ping(spaces[0], addresses[1], tries=2)
    # every call the agent made along the way was answered
    log = (host.dir / "upstream-ovs-agent.log").read_text()
    assert "RemoteError" not in log, logs()
