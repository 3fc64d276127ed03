"""Fullstack: two sites joined by IPsec site connections made through the API,
run by the L3 agent's ``vpnaas`` extension (strongSwan).

A network node ``n`` runs the OVS agent and the L3 agent with ``vpnaas``;
this kernel has no ESP, so charon runs ESP in userspace over TUN
(``[strongswan] ipsec_backend = libipsec``). Two routers have their
gateways on the flat external network (physnet1) and a private subnet each
with an instance behind it. The instances reach each other only while both
connections are up: a wrong pre-shared key leaves them DOWN, and so does a
connection taken down.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.conftest import Client, Server
from tests.fullstack import cloud
from tests.fullstack.hosts import Fabric, Host, needs_ovs, ping, sh
from tests.waiting import wait_for

LOCAL_IP = "10.99.0.3"
VPN_AGENT = ("extensions = vpnaas\n"
             "[ipsec]\nipsec_status_check_interval = 1\n"
             "[strongswan]\nipsec_backend = libipsec\n")
SITES = {"a": "10.120.1.0/24", "b": "10.120.2.0/24"}


def needs_strongswan() -> Any:
    missing = not Path("/usr/lib/ipsec/charon").exists() or shutil.which("swanctl") is None
    return pytest.mark.skipif(missing, reason="strongSwan (charon, swanctl) not installed")


pytestmark = [needs_ovs(), needs_strongswan()]


class Sites:
    def __init__(self, server: Server, node: Host) -> None:
        self.server, self.node = server, node
        self.admin = Client(server.url, roles="admin")

    def post(self, plural: str, singular: str, **attrs: Any) -> dict[str, Any]:
        status, body = self.admin.post(f"/v2.0/{plural}", {singular: attrs})
        assert status == 201, body
        return dict(body[singular])

    def status(self, plural: str, rid: str) -> str:
        status, body = self.admin.get(f"/v2.0/vpn/{plural}/{rid}")
        assert status == 200, body
        return str(next(iter(body.values()))["status"])

    def log_tail(self) -> str:
        out = [sh("ip", "netns", "list").stdout]
        path = self.node.dir / "l3-agent.log"
        if path.exists():
            lines = [ln for ln in path.read_text().splitlines() if " neutrino." in ln]
            out.append("--- l3-agent.log\n" + "\n".join(lines[-40:]))
        return "\n".join(out)


@pytest.fixture(scope="module")
def sites(fabric: Fabric, vhost: str, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[Sites]:
    server = cloud.start_server(tmp_path_factory.mktemp("vpn-server"), vhost, "router,vpnaas")
    try:
        node = fabric.host("n")
        cloud.add_phys_bridge(node)
        cloud.start_agent(fabric, node, cloud.agent_conf(node, vhost, LOCAL_IP))
        cloud.start_agent(fabric, node, cloud.service_agent_conf(node, vhost, "l3",
                                                                 agent=VPN_AGENT), "l3")
        admin = Client(server.url, roles="admin")
        for agent_type in ("Open vSwitch agent", "L3 agent"):
            assert wait_for(lambda: cloud.agent_alive(admin, node.hostname, agent_type), 60)
        yield Sites(server, node)
    finally:
        fabric.stop_processes()
        cloud.remove_agent_namespaces(server)
        server.stop()


def _site(s: Sites, name: str, ext: dict[str, Any]) -> dict[str, Any]:
    """A router with a gateway, a private subnet behind it, an instance on it."""
    net = s.post("networks", "network", name=f"vpn-{name}")
    sub = s.post("subnets", "subnet", network_id=net["id"], ip_version=4, cidr=SITES[name],
                 enable_dhcp=False)
    router = s.post("routers", "router", name=f"vpn-{name}",
                    external_gateway_info={"network_id": ext["id"]})
    status, body = s.admin.put(f"/v2.0/routers/{router['id']}/add_router_interface",
                               {"subnet_id": sub["id"]})
    assert status == 200, body
    port = cloud.bound_port(s.admin, net, s.node.hostname)
    vm = s.node.instance(f"v{name}", port)
    sh("ip", "-n", vm, "route", "replace", "default", "via", sub["gateway_ip"])
    assert cloud.wait_active(s.admin, port["id"], 60), s.log_tail()
    gw_ip = router["external_gateway_info"]["external_fixed_ips"][0]["ip_address"]
    return {"router": router, "subnet": sub, "vm": vm, "ip": port["fixed_ips"][0]["ip_address"],
            "gw_ip": gw_ip}


def _reaches(src: dict[str, Any], dst: dict[str, Any]) -> bool:
    return ping(src["vm"], dst["ip"], tries=1)


def test_instances_reach_each_other_only_while_both_connections_are_up(sites: Sites) -> None:
    s = sites
    ext = s.post("networks", "network", name="vpn-ext", **{
        "router:external": True, "provider:network_type": "flat",
        "provider:physical_network": "physnet1"})
    s.post("subnets", "subnet", network_id=ext["id"], ip_version=4, cidr="172.24.4.0/24",
           gateway_ip="172.24.4.1", enable_dhcp=False,
           allocation_pools=[{"start": "172.24.4.10", "end": "172.24.4.50"}])
    a, b = _site(s, "a", ext), _site(s, "b", ext)
    # both routers answer on the external network; the private subnets are not routed
    assert wait_for(lambda: ping(a["vm"], b["gw_ip"], tries=1), 60), s.log_tail()
    assert not _reaches(a, b)

    ike = s.post("vpn/ikepolicies", "ikepolicy", name="ike", auth_algorithm="sha256",
                 encryption_algorithm="aes-256", ike_version="v2")
    ipsec = s.post("vpn/ipsecpolicies", "ipsecpolicy", name="ipsec", auth_algorithm="sha256",
                   encryption_algorithm="aes-256")
    conns = {}
    for here, there, psk in ((a, b, "s3cret"), (b, a, "wrong")):
        service = s.post("vpn/vpnservices", "vpnservice", router_id=here["router"]["id"],
                         subnet_id=here["subnet"]["id"])
        assert service["external_v4_ip"] == here["gw_ip"]
        conns[here["vm"]] = s.post(
            "vpn/ipsec-site-connections", "ipsec_site_connection",
            vpnservice_id=service["id"], ikepolicy_id=ike["id"], ipsecpolicy_id=ipsec["id"],
            peer_address=there["gw_ip"], peer_id=there["gw_ip"], psk=psk,
            peer_cidrs=[there["subnet"]["cidr"]])
    ca, cb = conns[a["vm"]], conns[b["vm"]]

    # a wrong key on one side: the agent reports both connections DOWN
    for conn in (ca, cb):
        assert wait_for(lambda: s.status("ipsec-site-connections", conn["id"]) == "DOWN",
                        60), s.log_tail()
        assert s.status("vpnservices", conn["vpnservice_id"]) == "ACTIVE"
    assert not _reaches(a, b)

    # the right key: both connections come up and carry the instances' traffic
    status, body = s.admin.put(f"/v2.0/vpn/ipsec-site-connections/{cb['id']}",
                               {"ipsec_site_connection": {"psk": "s3cret"}})
    assert status == 200, body
    for conn in (ca, cb):
        assert wait_for(lambda: s.status("ipsec-site-connections", conn["id"]) == "ACTIVE",
                        60), s.log_tail()
    assert wait_for(lambda: _reaches(a, b), 30), s.log_tail()
    assert _reaches(b, a)
    # userspace ESP: charon's TUN device in the router's namespace
    assert "ipsec0" in sh("ip", "-n", f"qrouter-{a['router']['id']}", "link").stdout

    # one side taken down: the tunnel goes, and its status says so
    status, body = s.admin.put(f"/v2.0/vpn/ipsec-site-connections/{ca['id']}",
                               {"ipsec_site_connection": {"admin_state_up": False}})
    assert status == 200, body
    assert wait_for(lambda: s.status("ipsec-site-connections", ca["id"]) == "DOWN",
                    60), s.log_tail()
    assert wait_for(lambda: not _reaches(a, b), 30)
