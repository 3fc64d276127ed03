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
from tests.fullstack.hosts import Fabric, Host, needs_ovs, ping, wait_for

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
            host.vsctl("--may-exist", "add-br", cloud.PHYS_BRIDGE, "--", "set", "bridge",
                       cloud.PHYS_BRIDGE, "datapath_type=netdev", "fail-mode=secure")
        for n, host in hosts.items():
            conf = cloud.agent_conf(host, vhost, LOCAL_IPS[n], "openvswitch", AGENT)
            cloud.start_agent(fabric, host, conf)
        for host in hosts.values():
            assert wait_for(lambda: cloud.agent_alive(admin, host.hostname), 60), (
                (host.dir / "agent.log").read_text()[-3000:])
        yield Cloud(server, admin, fabric, hosts)
    finally:
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
