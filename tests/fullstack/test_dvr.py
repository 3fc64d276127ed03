"""Fullstack: a distributed router on two compute hosts and a network node.

Hosts ``a`` and ``b`` are compute hosts (OVS agent with
``enable_distributed_routing``, L3 agent in ``dvr`` mode), ``n`` the
network node (L3 agent in ``dvr_snat`` mode). The underlay is a star
centred on ``a`` (so traffic between ``a`` and ``b`` never touches ``n``'s
underlay), the tunnels are VXLAN with l2population (upstream's DVR needs
it). The external network is a flat physnet1 whose "switch" is a Linux
bridge in the external host's namespace, with a leg into every host's
br-phys: the compute hosts answer their floating IPs themselves. Each L3
agent suffixes its namespaces with its host (``qrouter-<id>@<host>``,
``fip-<net>@<host>``, ``snat-<id>@<host>``), as they share this machine's.
``trace --live`` asks each leg where it happens: east-west on the source
host's ``qrouter-``, SNAT in the network node's ``snat-``, a floating IP
in its instance's host's ``fip-`` and ``qrouter-``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.conftest import Client, Server
from tests.fullstack import cloud
from tests.fullstack.hosts import Fabric, Host, needs_ovs, ping, sh, terminate_all
from tests.rpc.bus import bus
from tests.waiting import wait_for

pytestmark = needs_ovs()
LOCAL_IPS = {"a": "10.96.0.1", "b": "10.96.0.2", "n": "10.96.0.3"}
EXT_HOST_IP = "172.24.7.1"
ROUTER_NAMESPACES = ("qrouter-", "snat-", "fip-")
ML2 = cloud.ML2.replace("mechanism_drivers = openvswitch",
                        "mechanism_drivers = openvswitch,l2population")
OVS_DVR = "l2_population = true\nenable_distributed_routing = true\n"


@dataclass
class Cloud:
    admin: Client
    fabric: Fabric
    hosts: dict[str, Host]
    ext_ns: str
    router: dict[str, Any]
    vm1: str  # on a, subnet 1
    vm2: str  # on b, subnet 2
    port1: dict[str, Any]
    ext_net: dict[str, Any]
    l3: dict[str, Any]
    ovs: dict[str, Any]
    server: Server


@pytest.fixture(scope="module")
def dvr_cloud(fabric: Fabric, vhost: str, tmp_path_factory: pytest.TempPathFactory
              ) -> Iterator[Cloud]:
    server = Server(tmp_path_factory.mktemp("dvr-server"), extra=(
        f"transport_url = {bus(vhost)}\nservice_plugins = router,trace\n"
        "router_auto_schedule = true\n" + ML2)).start()
    hosts = {n: fabric.host(n) for n in LOCAL_IPS}
    l3: dict[str, Any] = {}
    ovs: dict[str, Any] = {}
    try:
        admin = Client(server.url, roles="admin")
        a, b, n = hosts["a"], hosts["b"], hosts["n"]
        for x, y in ((a, b), (a, n)):  # a star centred on a compute host
            fabric.underlay(x, y, LOCAL_IPS[x.name], LOCAL_IPS[y.name])
        for host in hosts.values():
            cloud.add_phys_bridge(host)
        ext_ns = cloud.external_switch(fabric, [a, b, n], f"{EXT_HOST_IP}/24")
        for name, host in hosts.items():
            ovs[name] = cloud.start_agent(fabric, host, cloud.agent_conf(
                host, vhost, LOCAL_IPS[name], agent_options=OVS_DVR))
        for name, host in hosts.items():
            mode = "dvr_snat" if name == "n" else "dvr"
            l3[name] = cloud.start_l3_agent(fabric, host, vhost, f"agent_mode = {mode}\n")
        cloud.wait_agents(admin, list(hosts.values()), "Open vSwitch agent")
        cloud.wait_agents(admin, list(hosts.values()), "L3 agent")

        ext = cloud.external_network(admin, "dvr-ext", "172.24.7.0/24", EXT_HOST_IP)
        net1 = cloud.network(admin, "dvr-one", "10.103.1.0/24")
        net2 = cloud.network(admin, "dvr-two", "10.103.2.0/24")
        status, router = admin.post("/v2.0/routers", {"router": {
            "name": "dvr-r", "distributed": True,
            "external_gateway_info": {"network_id": ext["id"]}}})
        assert status == 201, router
        router = router["router"]
        cloud.add_interfaces(admin, router["id"], [net1, net2])
        port1 = cloud.bound_port(admin, net1, a.hostname)
        port2 = cloud.bound_port(admin, net2, b.hostname)
        vm1 = a.instance("v1", port1)
        vm2 = b.instance("v2", port2)
        sh("ip", "-n", vm1, "route", "replace", "default", "via", "10.103.1.1")
        sh("ip", "-n", vm2, "route", "replace", "default", "via", "10.103.2.1")
        assert cloud.wait_active(admin, port1["id"], 60)
        assert cloud.wait_active(admin, port2["id"], 60)
        yield Cloud(admin, fabric, hosts, ext_ns, router, vm1, vm2, port1, ext,
                    l3, ovs, server)
    finally:
        terminate_all(list(l3.values()))  # then nothing puts the routers back
        for ns in cloud.router_namespaces(list(hosts.values()), ROUTER_NAMESPACES):
            cloud.delete_namespace(ns)
        fabric.stop_processes()
        server.stop()


def _tunnel_packets(host: Host) -> int:
    """Packets through ``host``'s tunnel ports, both ways (br-tun's port counters)."""
    total = 0
    for block in re.split(r"\n\s*port\s+", host.ofctl("--names", "dump-ports", "br-tun")):
        if block.split(":", 1)[0].strip().strip('"').startswith("vxlan-"):
            total += sum(int(x) for x in re.findall(r"[rt]x pkts=(\d+)", block))
    return total


def _log_tail(cl: Cloud) -> str:
    out = [sh("ip", "netns", "list").stdout]
    out += [f"{p['device_owner']} {p['status']} {p['binding:host_id']} {p['mac_address']} "
            f"{[i['ip_address'] for i in p['fixed_ips']]}"
            for p in cl.admin.get("/v2.0/ports")[1]["ports"]]
    for name, host in cl.hosts.items():
        out.append(f"=== {name}")
        out += host.flows("br-tun")
        for ns in cloud.router_namespaces([host], ROUTER_NAMESPACES):
            out.append(f"--- {ns}")
            out.append(sh("ip", "-n", ns, "-br", "addr", check=False).stdout)
            out.append(sh("ip", "-n", ns, "rule", check=False).stdout)
            out.append(sh("ip", "-n", ns, "neigh", check=False).stdout)
        out += cloud.log_lines(host, "l3-agent.log", 10, errors_only=True)
    return "\n".join(out)


def test_east_west_between_two_subnets_does_not_cross_the_network_node(dvr_cloud: Cloud
                                                                        ) -> None:
    cl = dvr_cloud
    port2 = [p for p in cl.admin.get("/v2.0/ports?device_owner=compute:nova")[1]["ports"]
             if p["fixed_ips"][0]["ip_address"].startswith("10.103.2.")][0]
    ip2 = port2["fixed_ips"][0]["ip_address"]
    assert wait_for(lambda: ping(cl.vm1, ip2, tries=1), 90), _log_tail(cl)
    seen: list[tuple[int, int]] = []

    def routed_locally() -> bool:
        """20 pings (40 packets) between the compute hosts' tunnels; the network
        node's tunnels see at most a little link-local chatter meanwhile."""
        node, compute = _tunnel_packets(cl.hosts["n"]), _tunnel_packets(cl.hosts["b"])
        sh("ip", "netns", "exec", cl.vm1, "ping", "-c", "20", "-i", "0.05", "-W", "1", ip2,
           check=False)
        seen.append((_tunnel_packets(cl.hosts["b"]) - compute,
                     _tunnel_packets(cl.hosts["n"]) - node))
        return seen[-1][0] >= 40 and seen[-1][1] < 5
    # the first pings may take the network node's copy while the hosts' own settle
    assert wait_for(routed_locally, 60), f"{seen}\n{_log_tail(cl)}"
    # what a's copy of the router sent reaches the instance on b from the router's MAC
    assert wait_for(lambda: any("mod_dl_src:" in f for f in cl.hosts["b"].flows("br-int")), 30)
    # the router routed on each instance's own host: both have its copy
    for name in ("a", "b"):
        assert f"qrouter-{cl.router['id']}@{cl.hosts[name].hostname}" in sh(
            "ip", "netns", "list").stdout


def test_snat_without_a_floating_ip_goes_through_the_network_node(dvr_cloud: Cloud) -> None:
    cl = dvr_cloud
    rid = cl.router["id"]
    snat_ns = f"snat-{rid}@{cl.hosts['n'].hostname}"
    assert wait_for(lambda: snat_ns in sh("ip", "netns", "list").stdout, 60), _log_tail(cl)
    assert wait_for(lambda: ping(cl.vm1, EXT_HOST_IP, tries=1), 90), _log_tail(cl)
    node = _tunnel_packets(cl.hosts["n"])
    sh("ip", "netns", "exec", cl.vm1, "ping", "-c", "20", "-i", "0.05", "-W", "1", EXT_HOST_IP)
    assert _tunnel_packets(cl.hosts["n"]) - node >= 20  # each echo went to the SNAT port
    # the external host saw the router's gateway address, as SNAT makes it
    gw_ip = cl.admin.get(f"/v2.0/routers/{rid}")[1]["router"][
        "external_gateway_info"]["external_fixed_ips"][0]["ip_address"]
    neigh = sh("ip", "-n", cl.ext_ns, "neigh", "show", gw_ip).stdout
    assert gw_ip in neigh, neigh
    qg = [d for d in sh("ip", "-o", "-n", snat_ns, "link").stdout.split() if d.startswith("qg-")]
    assert qg, _log_tail(cl)


def _live(cl: Cloud, **packet: Any) -> dict[str, Any]:
    status, body = cl.admin.post("/v2.0/trace", {"trace": {**packet, "live": True}})
    assert status == 200, body
    return dict(body["trace"]["live"])


def _legs(live: dict[str, Any]) -> dict[str, tuple[str, str, str]]:
    """leg -> (host, namespace kind asked, namespace that answered)."""
    return {h["leg"]: (h["host"], h.get("asked", ""), h.get("namespace", ""))
            for h in live["hosts"]}


def test_trace_live_routes_east_west_on_the_source_host(dvr_cloud: Cloud) -> None:
    cl = dvr_cloud
    rid, a = cl.router["id"], cl.hosts["a"].hostname
    port2 = [p for p in cl.admin.get("/v2.0/ports?device_owner=compute:nova")[1]["ports"]
             if p["fixed_ips"][0]["ip_address"].startswith("10.103.2.")][0]
    ip2 = port2["fixed_ips"][0]["ip_address"]
    assert wait_for(lambda: ping(cl.vm1, ip2, tries=1), 90), _log_tail(cl)
    live = _live(cl, port_id=cl.port1["id"], destination_ip=ip2, protocol="icmp")
    legs = _legs(live)
    assert legs["router"] == (a, "qrouter", f"qrouter-{rid}@{a}"), live
    assert legs["destination"][0] == cl.hosts["b"].hostname
    assert "snat" not in legs and live["agrees"], live


def _snat_rule_handle(ns: str) -> str:
    listed = sh("ip", "netns", "exec", ns, "nft", "-a", "list", "chain", "ip", "neutrino_l3",
                "postrouting").stdout
    handles = [line.rsplit("# handle ", 1)[1] for line in listed.splitlines()
               if "oifname" in line and "snat to" in line and "# handle" in line]
    assert len(handles) == 1, listed
    return handles[0]


def test_trace_live_asks_the_snat_node_s_snat_namespace_and_names_a_rule_removed_there(
        dvr_cloud: Cloud, tmp_path: Path) -> None:
    cl = dvr_cloud
    rid, a, n = cl.router["id"], cl.hosts["a"].hostname, cl.hosts["n"].hostname
    assert wait_for(lambda: ping(cl.vm1, EXT_HOST_IP, tries=1), 90), _log_tail(cl)
    out = {"port_id": cl.port1["id"], "destination_ip": EXT_HOST_IP, "protocol": "icmp"}
    live = _live(cl, **out)
    legs = _legs(live)
    assert legs["router"] == (a, "qrouter", f"qrouter-{rid}@{a}"), live
    snat_ns = f"snat-{rid}@{n}"
    assert legs["snat"] == (n, "snat", snat_ns), live
    assert live["agrees"], live
    saved = sh("ip", "netns", "exec", snat_ns, "nft", "list", "table", "ip", "neutrino_l3").stdout
    sh("ip", "netns", "exec", snat_ns, "nft", "delete", "rule", "ip", "neutrino_l3",
       "postrouting", "handle", _snat_rule_handle(snat_ns))
    try:
        live = _live(cl, **out)
        assert not live["agrees"], live
        assert list(live["by_host"]) == [n], live["by_host"]
        assert live["by_host"][n][0].startswith("snat: the model passes it"), live
        assert "untranslated" in live["by_host"][n][0]
    finally:
        script = tmp_path / "restore.nft"
        script.write_text("delete table ip neutrino_l3\n" + saved)
        sh("ip", "netns", "exec", snat_ns, "nft", "-f", str(script))
    assert _live(cl, **out)["agrees"]


def test_audit_names_a_compute_host_s_lost_router_namespace_and_repairs_it(
        dvr_cloud: Cloud) -> None:
    """Host ``b``'s copy of the router, holding the NAT of a floating IP of
    its instance, is deleted behind its agent's back: the audit names the
    namespace and the fip- route gone with it, ``--repair`` builds them again."""
    cl = dvr_cloud
    rid, ext_id, b = cl.router["id"], cl.ext_net["id"], cl.hosts["b"].hostname
    port2 = [p for p in cl.admin.get("/v2.0/ports?device_owner=compute:nova")[1]["ports"]
             if p["fixed_ips"][0]["ip_address"].startswith("10.103.2.")][0]
    status, body = cl.admin.post("/v2.0/floatingips", {"floatingip": {
        "floating_network_id": ext_id, "port_id": port2["id"]}})
    assert status == 201, body
    address = body["floatingip"]["floating_ip_address"]
    assert wait_for(lambda: ping(cl.ext_ns, address, tries=1), 90), _log_tail(cl)
    # a healthy DVR cloud audits clean: every host wires the router's interfaces
    cloud.wait_audit_clean(cl.server)
    cloud.delete_namespace(f"qrouter-{rid}@{b}")
    found = cloud.audit_lines(cl.server, rid, ext_id)
    assert f"{b}: namespace qrouter-{rid} is missing" in found, found
    assert any(line.startswith(f"{b}: fip-{ext_id} lacks route {address}/32 via ")
               for line in found), found
    repaired = cloud.audit(cl.server, "--repair", "--wait", "30")
    assert f"{b}: resync asked of the L3 agent" in repaired.stdout, repaired.stdout
    assert wait_for(lambda: not cloud.audit_lines(cl.server, rid, ext_id), 30), \
        cloud.audit(cl.server).stdout
    assert wait_for(lambda: ping(cl.ext_ns, address, tries=1), 60), _log_tail(cl)


def test_a_floating_ip_is_answered_by_the_compute_host_with_the_network_node_down(
        dvr_cloud: Cloud) -> None:
    cl = dvr_cloud
    status, body = cl.admin.post("/v2.0/floatingips", {"floatingip": {
        "floating_network_id": cl.ext_net["id"], "port_id": cl.port1["id"]}})
    assert status == 201, body
    fip = body["floatingip"]
    address = fip["floating_ip_address"]
    assert wait_for(lambda: cl.admin.get(f"/v2.0/floatingips/{fip['id']}")[1][
        "floatingip"]["status"] == "ACTIVE", 60), _log_tail(cl)
    assert wait_for(lambda: ping(cl.ext_ns, address, tries=1), 60), _log_tail(cl)
    terminate_all([cl.l3["n"], cl.ovs["n"]])  # the network node's agents stop
    sh("ip", "-n", cl.ext_ns, "neigh", "flush", "all")
    assert ping(cl.ext_ns, address), _log_tail(cl)
    # the compute host's fip- namespace answered for the floating IP (proxy ARP on fg-)
    gw_ports = cl.admin.get("/v2.0/ports?device_owner=network:floatingip_agent_gateway")[1][
        "ports"]
    mine = [p for p in gw_ports if p["binding:host_id"] == cl.hosts["a"].hostname]
    assert len(mine) == 1, gw_ports
    neigh = sh("ip", "-n", cl.ext_ns, "neigh", "show", address).stdout
    assert mine[0]["mac_address"] in neigh, neigh
    # and the instance leaves from its floating IP: the external host sees it
    fip_ns = f"fip-{cl.ext_net['id']}@{cl.hosts['a'].hostname}"
    assert fip_ns in sh("ip", "netns", "list").stdout


def test_trace_live_asks_a_floating_ip_s_host_fip_and_qrouter_namespaces(
        dvr_cloud: Cloud) -> None:
    cl = dvr_cloud
    rid, a = cl.router["id"], cl.hosts["a"].hostname
    fip = cl.admin.get(f"/v2.0/floatingips?port_id={cl.port1['id']}")[1]["floatingips"]
    if not fip:
        pytest.skip("needs the floating IP scenario")
    group = cl.port1["security_groups"][0]  # the model admits the outside's ping
    status, body = cl.admin.post("/v2.0/security-group-rules", {"security_group_rule": {
        "security_group_id": group, "direction": "ingress", "ethertype": "IPv4",
        "protocol": "icmp"}})
    assert status == 201, body
    fip_ns = f"fip-{cl.ext_net['id']}@{a}"
    live = _live(cl, source_ip=EXT_HOST_IP, destination_ip=fip[0]["floating_ip_address"],
                 protocol="icmp")
    legs = _legs(live)
    assert legs["fip"] == (a, "fip", fip_ns), live
    assert legs["router"] == (a, "qrouter", f"qrouter-{rid}@{a}"), live
    assert legs["destination"][0] == a
    assert live["agrees"], live
    live = _live(cl, port_id=cl.port1["id"], destination_ip=EXT_HOST_IP, protocol="icmp")
    legs = _legs(live)
    assert (legs["router"][0], legs["fip"]) == (a, (a, "fip", fip_ns)), live
    assert "snat" not in legs and live["agrees"], live
