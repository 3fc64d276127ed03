"""Fullstack: a BGP peer router reaches a floating IP only through the route
the DR agent advertises.

A network node (OVS and L3 agents) with an instance behind a router whose
gateway is on the flat provider network; on that network, BIRD in a
namespace of its own is the provider's router (the external subnet's
gateway). The floating IPs come from a second subnet of the external
network that BIRD has no route to: it pings the instance's floating IP
only while the BGP DR agent (gobgpd, its session on a link of its own to
BIRD) advertises the floating IP's host route via the router's gateway
address, that is while the floating IP is associated.
"""
from __future__ import annotations

import os
import shutil
import signal
import uuid
from typing import Any, Iterator

import pytest

from tests.conftest import Client
from tests.fullstack import cloud
from tests.fullstack.hosts import Fabric, needs_ovs, sh
from tests.fullstack.test_bgp import BIRD_CONF, LOCAL_AS, PASSWORD, PEER_AS, Bgp, _gobgpds
from tests.rpc.bus import bus
from tests.waiting import wait_for

pytestmark = [needs_ovs(), pytest.mark.skipif(
    not all(shutil.which(t) for t in ("gobgpd", "gobgp", "bird", "birdc")),
    reason="needs gobgpd and BIRD (Debian: gobgpd, bird2)")]
LOCAL_IP = "10.99.0.7"


class ForwardingCloud(Bgp):
    peer_ip = ""  # BIRD's end of the BGP session's link

    def reaches(self, address: str) -> bool:
        return any(sh("ip", "netns", "exec", self.peer_ns, "ping", "-c1", "-W1", address,
                      check=False).returncode == 0 for _ in range(2))


@pytest.fixture(scope="module")
def env(fabric: Fabric, vhost: str, tmp_path_factory: pytest.TempPathFactory
        ) -> Iterator[ForwardingCloud]:
    octet = int(fabric.prefix[1:], 16) % 200 + 20
    link, ext = f"100.126.{octet}", f"172.30.{octet}"
    speaker_ip, peer_ip = f"{link}.250", f"{link}.251"
    server = cloud.start_server(tmp_path_factory.mktemp("bgp-fwd"), vhost, "router,bgp")
    state = fabric.public_dir("bgpfwd")
    try:
        admin = Client(server.url, project=uuid.uuid4().hex, roles="admin")
        node = fabric.host("n")
        cloud.add_phys_bridge(node)
        peer_ns = cloud.external_host(fabric, node, f"{ext}.1/24")
        end = f"{fabric.prefix}bf"
        sh("ip", "link", "add", end, "type", "veth", "peer", "name", "bgp0", "netns", peer_ns)
        sh("ip", "addr", "add", f"{speaker_ip}/24", "dev", end)
        sh("ip", "link", "set", end, "up")
        sh("ip", "-n", peer_ns, "addr", "add", f"{peer_ip}/24", "dev", "bgp0")
        sh("ip", "-n", peer_ns, "link", "set", "bgp0", "up")
        bird_conf, bird_ctl = state / "bird.conf", state / "bird.ctl"
        bird_conf.write_text(BIRD_CONF.format(peer=peer_ip, peer_as=PEER_AS, speaker=speaker_ip,
                                              local_as=LOCAL_AS, password=PASSWORD))
        sh("ip", "netns", "exec", peer_ns, "bird", "-c", str(bird_conf), "-s", str(bird_ctl),
           "-P", str(state / "bird.pid"))
        cloud.start_agent(fabric, node, cloud.agent_conf(node, vhost, LOCAL_IP))
        cloud.start_agent(fabric, node, cloud.service_agent_conf(node, vhost, "l3"), "l3")
        agent_conf = state / "bgp-agent.conf"
        agent_conf.write_text(
            f"[DEFAULT]\nhost = {fabric.prefix}-bgpf\ntransport_url = "
            f"{bus(vhost)}\ndebug = true\nlog_file = {state / 'agent.log'}\n"
            f"state_path = {state}\nperiodic_interval = 5\n[AGENT]\nreport_interval = 2\n"
            f"[BGP]\nbgp_router_id = {speaker_ip}\nbgp_listen_port = -1\n")
        env = ForwardingCloud(server, admin, fabric, peer_ns, bird_ctl, ext, agent_conf, state)
        env.peer_ip = peer_ip
        env.start_agent()
        assert wait_for(lambda: cloud.agent_alive(admin, node.hostname, "Open vSwitch agent"),
                        60)
        assert wait_for(lambda: cloud.agent_alive(admin, node.hostname, "L3 agent"), 60)
        yield env
    finally:
        fabric.stop_processes()
        for pid in _gobgpds(state):
            os.kill(pid, signal.SIGKILL)
        cloud.remove_agent_namespaces(server)
        server.stop()
        sh("ip", "link", "del", f"{fabric.prefix}bf", check=False)


def _made(client: Client, path: str, key: str, **attrs: Any) -> dict[str, Any]:
    status, body = client.post(path, {key: attrs})
    assert status == 201, body
    return dict(body[key])


def test_the_peer_reaches_a_floating_ip_only_while_its_route_is_advertised(
        env: ForwardingCloud, fabric: Fabric) -> None:
    admin, ext = env.admin, env.subnet
    node = fabric.hosts[0]
    octet = ext.rsplit(".", 1)[1]
    fip_cidr = f"198.18.{octet}.0/24"
    net = _made(admin, "/v2.0/networks", "network", name="provider",
                **{"router:external": True, "provider:network_type": "flat",
                   "provider:physical_network": "physnet1"})
    gw_subnet = _made(admin, "/v2.0/subnets", "subnet", network_id=net["id"], ip_version=4,
                      cidr=f"{ext}.0/24", gateway_ip=f"{ext}.1", enable_dhcp=False,
                      allocation_pools=[{"start": f"{ext}.10", "end": f"{ext}.50"}])
    router = _made(admin, "/v2.0/routers", "router", name="r", external_gateway_info={
        "network_id": net["id"], "external_fixed_ips": [{"subnet_id": gw_subnet["id"]}]})
    gateway = router["external_gateway_info"]["external_fixed_ips"][0]["ip_address"]
    fip_subnet = _made(admin, "/v2.0/subnets", "subnet", network_id=net["id"], ip_version=4,
                       cidr=fip_cidr, gateway_ip=None, enable_dhcp=False)
    inner = cloud.network(admin, "inner", "10.178.0.0/24")
    status, body = admin.get(f"/v2.0/subnets?network_id={inner['id']}")
    admin.put(f"/v2.0/routers/{router['id']}/add_router_interface",
              {"subnet_id": body["subnets"][0]["id"]})
    port = cloud.bound_port(admin, inner, node.hostname)
    vm = node.instance("vm", port)
    sh("ip", "-n", vm, "route", "replace", "default", "via", "10.178.0.1")
    assert cloud.wait_active(admin, port["id"], 60)

    speaker = _made(admin, "/v2.0/bgp-speakers", "bgp_speaker", local_as=LOCAL_AS,
                    ip_version=4)
    peer = _made(admin, "/v2.0/bgp-peers", "bgp_peer", peer_ip=env.peer_ip, remote_as=PEER_AS,
                 auth_type="md5", password=PASSWORD)
    admin.put(f"/v2.0/bgp-speakers/{speaker['id']}/add_bgp_peer", {"bgp_peer_id": peer["id"]})
    admin.put(f"/v2.0/bgp-speakers/{speaker['id']}/add_gateway_network",
              {"network_id": net["id"]})
    assert wait_for(env.established, 60), env.log()
    assert wait_for(lambda: env.reaches(gateway), 60)

    fip = _made(admin, "/v2.0/floatingips", "floatingip", floating_network_id=net["id"],
                subnet_id=fip_subnet["id"])
    address = fip["floating_ip_address"]
    assert not env.reaches(address)  # not on BIRD's link: no route yet
    admin.put(f"/v2.0/floatingips/{fip['id']}", {"floatingip": {"port_id": port["id"]}})
    assert wait_for(lambda: f"{address} via {gateway}" in env.routes(), 30), env.log()
    assert wait_for(lambda: env.reaches(address), 60), (env.routes(), env.log())
    admin.put(f"/v2.0/floatingips/{fip['id']}", {"floatingip": {"port_id": None}})
    assert wait_for(lambda: address not in env.routes(), 30), env.routes()
    assert not env.reaches(address)
