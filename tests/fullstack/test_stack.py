"""Fullstack: the whole stack on emulated hosts - OVS, DHCP and L3 agents together.

Three hosts joined by a VXLAN underlay: a network node ``n`` running the
OVS, DHCP and L3 agents, and two compute hosts ``1`` and ``2`` running the
OVS agent. An "external host" namespace sits on the flat provider network
(physnet1, br-phys of the network node). Instances are namespaces plugged
as the compute service plugs them (``binding:host_id`` set on the port);
they get their addresses by DHCP (busybox udhcpc) from the network node.

The scenarios build on each other, in file order: one tenant network
(DHCP, east-west), a second network behind a router, SNAT to the
external host, TFTP through that SNAT with the router's conntrack helper, a
floating IP, QoS limits on a floating IP and on the gateway IP, and finally
deleting everything through the API leaves nothing behind on any host. An IPv6 network (stateful DHCPv6,
ISC dhclient) stands alone: it removes what it made.
"""
from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.conftest import Client, Server
from tests.dhcpagent._host import dhcp6, needs_dhclient
from tests.fullstack import cloud
from tests.fullstack.hosts import Fabric, Host, dhcp, needs_ovs, ping, sh
from tests.l3host import tftp
from tests.l3host.throughput import throughput
from tests.waiting import wait_for

pytestmark = needs_ovs()
LOCAL_IPS = {"n": "10.99.0.3", "1": "10.99.0.1", "2": "10.99.0.2"}
EXT_HOST_IP = "172.24.4.1"
AGENT_EXTENSIONS = {"dhcp": "", "l3": "extensions = fip_qos, gateway_ip_qos\n"}


@dataclass
class Stack:
    server: Server
    admin: Client
    fabric: Fabric
    hosts: dict[str, Host]
    ext_ns: str
    made: dict[str, Any] = field(default_factory=dict)  # what earlier scenarios built


@pytest.fixture(scope="module")
def stack(fabric: Fabric, vhost: str, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[Stack]:
    server = cloud.start_server(tmp_path_factory.mktemp("stack-server"), vhost,
                                "router,qos,conntrack_helper")
    try:
        admin = Client(server.url, roles="admin")
        hosts = {n: fabric.host(n) for n in LOCAL_IPS}
        fabric.underlay(hosts["n"], hosts["1"], LOCAL_IPS["n"], LOCAL_IPS["1"])
        fabric.underlay(hosts["n"], hosts["2"], LOCAL_IPS["n"], LOCAL_IPS["2"])
        for host in hosts.values():  # the operator's bridge of bridge_mappings
            cloud.add_phys_bridge(host)
        ext_ns = cloud.external_host(fabric, hosts["n"], f"{EXT_HOST_IP}/24")
        for name, host in hosts.items():
            cloud.start_agent(fabric, host, cloud.agent_conf(host, vhost, LOCAL_IPS[name]))
        node = hosts["n"]
        for kind in ("dhcp", "l3"):
            conf = cloud.service_agent_conf(node, vhost, kind, agent=AGENT_EXTENSIONS[kind])
            cloud.start_agent(fabric, node, conf, kind)
        for host in hosts.values():
            assert wait_for(lambda: cloud.agent_alive(admin, host.hostname,
                                                      "Open vSwitch agent"), 60), (
                (host.dir / "agent.log").read_text()[-3000:])
        for agent_type in ("DHCP agent", "L3 agent"):
            assert wait_for(lambda: cloud.agent_alive(admin, node.hostname, agent_type), 60), (
                agent_type)
        yield Stack(server, admin, fabric, hosts, ext_ns)
    finally:
        fabric.stop_processes()
        cloud.remove_agent_namespaces(server)
        server.stop()



def _log_tail(stack: Stack) -> str:
    """The network node's agents' own log lines (not the bus library's), for failures."""
    node = stack.hosts["n"]
    out = [sh("ip", "netns", "list").stdout]
    for name in ("dhcp-agent.log", "l3-agent.log", "agent.log"):
        path = node.dir / name
        if path.exists():
            lines = [ln for ln in path.read_text().splitlines()
                     if " neutrino." in ln or not ln[:4].isdigit()
                     and "amqp" not in ln and "kombu" not in ln]
            out.append(f"--- {name}\n" + "\n".join(lines[-40:]))
    return "\n".join(out)


def _instance(stack: Stack, host: str, suffix: str, net: dict[str, Any]
              ) -> tuple[str, dict[str, Any], float]:
    """A port bound to ``host`` as Nova binds it, plugged, addressed by DHCP.
    Also returns when the port was created (monotonic)."""
    started = time.monotonic()
    port = cloud.bound_port(stack.admin, net, stack.hosts[host].hostname)
    ns = stack.hosts[host].instance(suffix, port, prefix_len=None)
    assert cloud.wait_active(stack.admin, port["id"], 60), _log_tail(stack)
    leased = dhcp(ns, stack.fabric.root)
    hosting = stack.admin.get(f"/v2.0/networks/{net['id']}/dhcp-agents")
    assert leased == port["fixed_ips"][0]["ip_address"], (hosting, _log_tail(stack))
    return ns, port, started


def _subnet_id(admin: Client, net: dict[str, Any]) -> str:
    return str(admin.get(f"/v2.0/subnets?network_id={net['id']}")[1]["subnets"][0]["id"])


def _ip(port: dict[str, Any]) -> str:
    return str(port["fixed_ips"][0]["ip_address"])


def test_instances_on_two_hosts_get_addresses_by_dhcp_and_ping_each_other(stack: Stack
                                                                          ) -> None:
    net = cloud.network(stack.admin, "stack-a", "10.100.1.0/24")
    vm1, p1, started = _instance(stack, "1", "a1", net)
    vm2, p2, _ = _instance(stack, "2", "a2", net)
    assert ping(vm1, _ip(p2)), _log_tail(stack)
    first_ping = time.monotonic() - started
    assert ping(vm2, _ip(p1))
    # the DHCP port is the network node's, bound there and wired by its OVS agent
    status, body = stack.admin.get(
        f"/v2.0/ports?network_id={net['id']}&device_owner=network:dhcp")
    assert status == 200 and len(body["ports"]) == 1, body
    dhcp_port = body["ports"][0]
    assert dhcp_port["binding:host_id"] == stack.hosts["n"].hostname
    assert wait_for(lambda: cloud.status_of(stack.admin, dhcp_port["id"]) == "ACTIVE", 30)
    stack.made.update(net_a=net, vm1=vm1, p1=p1, vm2=vm2, p2=p2)
    print(f"port create -> first successful ping (DHCP, cross-host): {first_ping:.2f} s")


def _link_local_ready(ns: str) -> bool:
    out = sh("ip", "-n", ns, "-6", "addr", "show", "dev", "eth0", "scope", "link").stdout
    return "fe80:" in out and "tentative" not in out


@needs_dhclient
def test_dhcpv6_stateful_instance_gets_its_fixed_ipv6_address_from_the_network_node(
        stack: Stack, tmp_path: Path) -> None:
    """IPv6 end to end: the server's IPAM and DHCP RPC, the DHCP agent's
    dnsmasq behind an OVS internal port, the OVS agents' wiring across the
    tunnel; ISC dhclient -6 in the instance. Removes what it made."""
    admin = stack.admin
    status, body = admin.post("/v2.0/networks", {"network": {"name": "stack-v6"}})
    assert status == 201, body
    net = body["network"]
    port: dict[str, Any] = {}
    try:
        status, sub = admin.post("/v2.0/subnets", {"subnet": {
            "network_id": net["id"], "ip_version": 6, "cidr": "2001:db8:100::/64",
            "ipv6_address_mode": "dhcpv6-stateful", "dns_nameservers": ["2001:db8::53"]}})
        assert status == 201, sub
        started = time.monotonic()
        port = cloud.bound_port(admin, net, stack.hosts["1"].hostname)
        ns = stack.hosts["1"].instance("v6", port, prefix_len=None)
        assert cloud.wait_active(admin, port["id"], 60), _log_tail(stack)
        assert wait_for(lambda: _link_local_ready(ns), 10)
        leased = dhcp6(ns, tmp_path, timeout=30)
        print(f"IPv6 port create -> DHCPv6 lease: {time.monotonic() - started:.2f} s")
        assert leased.get("ip") == [_ip(port)], (leased, _log_tail(stack))
        assert leased["dns"] == ["2001:db8::53"]
    finally:
        if port:
            stack.hosts["1"].unplug("v6")
            admin.delete(f"/v2.0/ports/{port['id']}")
        admin.delete(f"/v2.0/networks/{net['id']}")


def test_two_networks_joined_by_a_router_route_between_instances(stack: Stack) -> None:
    if "net_a" not in stack.made:
        pytest.skip("needs the DHCP scenario")
    admin = stack.admin
    net_b = cloud.network(admin, "stack-b", "10.100.2.0/24")
    status, router = admin.post("/v2.0/routers", {"router": {"name": "stack-r"}})
    assert status == 201, router
    router = router["router"]
    for net in (stack.made["net_a"], net_b):
        status, body = admin.put(f"/v2.0/routers/{router['id']}/add_router_interface",
                                 {"subnet_id": _subnet_id(admin, net)})
        assert status == 200, body
    vmb, pb, _ = _instance(stack, "2", "b2", net_b)
    stack.made.update(net_b=net_b, router=router, vmb=vmb, pb=pb)
    vm1 = stack.made["vm1"]  # on host 1, network A; vmb on host 2, network B
    # vm1 got its lease before the router existed: the gateway is the router now
    sh("ip", "-n", vm1, "route", "replace", "default", "via", "10.100.1.1")
    assert wait_for(lambda: ping(vm1, _ip(pb), tries=1), 60), _log_tail(stack)
    assert ping(vmb, _ip(stack.made["p1"]))
    ns = f"qrouter-{router['id']}"
    assert ns in sh("ip", "netns", "list").stdout


def _accept_once(ns: str, port: int) -> subprocess.Popen[str]:
    """A TCP server in ``ns`` that prints the address of its first client and exits."""
    code = ("import socket,sys\n"
            "s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
            f"s.bind(('0.0.0.0',{port})); s.listen(1); s.settimeout(30)\n"
            "c,a=s.accept(); print(a[0], flush=True); c.close()\n")
    proc = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c", code],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    return proc


def _connect(ns: str, ip: str, port: int, tries: int = 10) -> bool:
    code = ("import socket,sys\n"
            f"socket.create_connection(('{ip}',{port}), timeout=2).close()\n")
    for _ in range(tries):
        if sh("ip", "netns", "exec", ns, sys.executable, "-c", code, check=False).returncode == 0:
            return True
        time.sleep(0.5)
    return False


def _peer(proc: subprocess.Popen[str]) -> str:
    try:
        out, _ = proc.communicate(timeout=35)
    except subprocess.TimeoutExpired:
        proc.kill()
        return ""
    return out.strip()


def test_snat_instance_reaches_the_external_host_as_the_router_gateway_ip(stack: Stack
                                                                        ) -> None:
    if "router" not in stack.made:
        pytest.skip("needs the router scenario")
    admin = stack.admin
    status, ext = admin.post("/v2.0/networks", {"network": {
        "name": "stack-ext", "router:external": True, "provider:network_type": "flat",
        "provider:physical_network": "physnet1"}})
    assert status == 201, ext
    ext = ext["network"]
    status, sub = admin.post("/v2.0/subnets", {"subnet": {
        "network_id": ext["id"], "ip_version": 4, "cidr": "172.24.4.0/24",
        "gateway_ip": EXT_HOST_IP, "enable_dhcp": False,
        "allocation_pools": [{"start": "172.24.4.10", "end": "172.24.4.50"}]}})
    assert status == 201, sub
    router = stack.made["router"]
    status, body = admin.put(f"/v2.0/routers/{router['id']}", {"router": {
        "external_gateway_info": {"network_id": ext["id"]}}})
    assert status == 200, body
    gw_ip = body["router"]["external_gateway_info"]["external_fixed_ips"][0]["ip_address"]
    stack.made.update(ext=ext)
    vm2 = stack.made["vm2"]  # network A, host 2
    sh("ip", "-n", vm2, "route", "replace", "default", "via", "10.100.1.1")
    assert wait_for(lambda: ping(vm2, EXT_HOST_IP, tries=1), 60), _log_tail(stack)
    server = _accept_once(stack.ext_ns, 8080)
    assert _connect(vm2, EXT_HOST_IP, 8080)
    assert _peer(server) == gw_ip


def test_tftp_through_snat_needs_the_routers_conntrack_helper(stack: Stack) -> None:
    """The TFTP server answers from a new port: only the router's tftp helper
    (created through the API, applied by the L3 agent) lets that answer
    back through the SNAT; deleting the helper takes it away again."""
    if "ext" not in stack.made:
        pytest.skip("needs the SNAT scenario")
    admin, vm2, router = stack.admin, stack.made["vm2"], stack.made["router"]
    server = tftp.serve(stack.ext_ns)
    try:
        assert tftp.answered(vm2, EXT_HOST_IP, same_port=True, tries=10), _log_tail(stack)
        assert not tftp.answered(vm2, EXT_HOST_IP, tries=2)
        url = f"/v2.0/routers/{router['id']}/conntrack_helpers"
        status, cth = admin.post(url, {"conntrack_helper": {
            "helper": "tftp", "protocol": "udp", "port": 69}})
        assert status == 201, cth
        assert wait_for(lambda: tftp.answered(vm2, EXT_HOST_IP, tries=1), 60), _log_tail(stack)
        assert admin.delete(f"{url}/{cth['conntrack_helper']['id']}")[0] == 204
        assert wait_for(lambda: not tftp.answered(vm2, EXT_HOST_IP, tries=1), 60)
    finally:
        server.kill()
        server.wait()


def test_floating_ip_reaches_the_instance_until_disassociated(stack: Stack) -> None:
    if "ext" not in stack.made:
        pytest.skip("needs the SNAT scenario")
    admin, vm1, p1 = stack.admin, stack.made["vm1"], stack.made["p1"]
    status, fip = admin.post("/v2.0/floatingips", {"floatingip": {
        "floating_network_id": stack.made["ext"]["id"], "port_id": p1["id"]}})
    assert status == 201, fip
    fip = fip["floatingip"]
    stack.made["fip"] = fip
    address = fip["floating_ip_address"]
    assert wait_for(lambda: admin.get(f"/v2.0/floatingips/{fip['id']}")[1]
                    ["floatingip"]["status"] == "ACTIVE", 60), _log_tail(stack)
    server = _accept_once(vm1, 2222)
    assert _connect(stack.ext_ns, address, 2222), _log_tail(stack)
    assert _peer(server) == EXT_HOST_IP  # the client address is preserved
    status, body = admin.put(f"/v2.0/floatingips/{fip['id']}",
                             {"floatingip": {"port_id": None}})
    assert status == 200, body
    assert wait_for(lambda: admin.get(f"/v2.0/floatingips/{fip['id']}")[1]
                    ["floatingip"]["status"] == "DOWN", 60)
    server = _accept_once(vm1, 2223)
    assert not _connect(stack.ext_ns, address, 2223, tries=3)
    server.kill()
    server.wait()


KBPS = 4000
LIMIT = KBPS * 1000 * 1.5  # bit/s a limited transfer stays below


def _shaped(stack: Stack, rate: str) -> int:
    """How many HTB classes of ``rate`` the router's gateway device and its IFB have
    (one per address and direction)."""
    ns = f"qrouter-{stack.made['router']['id']}"
    devices = [line.split(":")[1].strip().split("@")[0]
               for line in sh("ip", "-o", "-n", ns, "link", "show").stdout.splitlines()]
    return sum(sh("ip", "netns", "exec", ns, "tc", "class", "show", "dev", d,
                  check=False).stdout.count(f"rate {rate}")
               for d in devices if d.startswith(("qg-", "qi-")))


def test_qos_limits_a_floating_ip_and_the_gateway_ip_both_ways_until_removed(
        stack: Stack) -> None:
    if "ext" not in stack.made:
        pytest.skip("needs the SNAT scenario")
    admin, vm1, vm2 = stack.admin, stack.made["vm1"], stack.made["vm2"]
    router, ext_ns = stack.made["router"], stack.ext_ns
    status, body = admin.post("/v2.0/qos/policies", {"policy": {"name": "stack-qos"}})
    assert status == 201, body
    pid = body["policy"]["id"]
    for direction in ("ingress", "egress"):  # a burst of a tenth of the rate
        status, body = admin.post(f"/v2.0/qos/policies/{pid}/bandwidth_limit_rules", {
            "bandwidth_limit_rule": {"max_kbps": KBPS, "max_burst_kbps": KBPS // 10,
                                     "direction": direction}})
        assert status == 201, body
    status, fip = admin.post("/v2.0/floatingips", {"floatingip": {
        "floating_network_id": stack.made["ext"]["id"], "port_id": stack.made["p1"]["id"],
        "qos_policy_id": pid}})
    assert status == 201, fip
    fip = fip["floatingip"]
    address = fip["floating_ip_address"]
    try:
        assert wait_for(lambda: admin.get(f"/v2.0/floatingips/{fip['id']}")[1]
                        ["floatingip"]["status"] == "ACTIVE", 60), _log_tail(stack)
        assert wait_for(lambda: _shaped(stack, "4Mbit") == 2, 30), _log_tail(stack)
        into = throughput(ext_ns, vm1, address)  # towards the instance
        out = throughput(vm1, ext_ns, EXT_HOST_IP)  # from it, as its floating IP
        snat_free = throughput(vm2, ext_ns, EXT_HOST_IP)  # the gateway IP: no limit yet
        print(f"\nTCP bit/s: FIP ingress {into:.0f}, egress {out:.0f}, "
              f"SNAT unlimited {snat_free:.0f} (limit {KBPS * 1000})")
        assert into < LIMIT and out < LIMIT, (into, out)
        assert snat_free > 3 * out, (snat_free, out)
        # the router gateway's policy limits vm2's SNAT traffic both ways
        status, body = admin.put(f"/v2.0/routers/{router['id']}", {"router": {
            "external_gateway_info": {"network_id": stack.made["ext"]["id"],
                                      "qos_policy_id": pid}}})
        assert status == 200, body
        assert wait_for(lambda: _shaped(stack, "4Mbit") == 4, 30), _log_tail(stack)
        snat_out = throughput(vm2, ext_ns, EXT_HOST_IP)
        snat_in = throughput(vm2, ext_ns, EXT_HOST_IP, mode="download")
        print(f"SNAT limited: egress {snat_out:.0f}, ingress {snat_in:.0f}")
        assert snat_out < LIMIT and snat_in < LIMIT, (snat_out, snat_in)
        # a rule update applies live (the server pushes the policy)
        rules = admin.get(f"/v2.0/qos/policies/{pid}")[1]["policy"]["rules"]
        egress = next(r for r in rules if r["direction"] == "egress")
        status, body = admin.put(f"/v2.0/qos/policies/{pid}/bandwidth_limit_rules/"
                                 f"{egress['id']}", {"bandwidth_limit_rule": {"max_kbps": 8000}})
        assert status == 200, body
        assert wait_for(lambda: _shaped(stack, "8Mbit") == 2, 30), _log_tail(stack)
        # the policies removed: the limits are lifted
        status, body = admin.put(f"/v2.0/floatingips/{fip['id']}",
                                 {"floatingip": {"qos_policy_id": None}})
        assert status == 200, body
        status, body = admin.put(f"/v2.0/routers/{router['id']}", {"router": {
            "external_gateway_info": {"network_id": stack.made["ext"]["id"],
                                      "qos_policy_id": None}}})
        assert status == 200, body
        assert wait_for(lambda: not _shaped(stack, "4Mbit") and not _shaped(stack, "8Mbit"),
                        30), _log_tail(stack)
        lifted = throughput(ext_ns, vm1, address)
        snat_lifted = throughput(vm2, ext_ns, EXT_HOST_IP, mode="download")
        print(f"lifted: FIP ingress {lifted:.0f}, SNAT ingress {snat_lifted:.0f}")
        assert lifted > 3 * into and snat_lifted > 3 * snat_in, (lifted, snat_lifted)
    finally:
        admin.delete(f"/v2.0/floatingips/{fip['id']}")
        admin.put(f"/v2.0/routers/{router['id']}", {"router": {"external_gateway_info": {
            "network_id": stack.made["ext"]["id"], "qos_policy_id": None}}})
    assert admin.delete(f"/v2.0/qos/policies/{pid}")[0] == 204


def _leftovers(stack: Stack, ids: list[str]) -> list[str]:
    found = [ns for ns in sh("ip", "netns", "list").stdout.split()
             if any(i in ns for i in ids)]
    for host in stack.hosts.values():
        for port in host.vsctl("list-ports", "br-int").split():
            if port.startswith(("tap", "qr-", "qg-", stack.fabric.prefix)):
                found.append(f"{host.name}:{port}")
        for flow in host.flows("br-tun"):
            if "hard_timeout=300" in flow:
                continue  # MACs learned from traffic: they expire by themselves
            if "tun_id=" in flow or "set_tunnel" in flow or "load:0x" in flow:
                found.append(f"{host.name}:br-tun:{flow}")
        for flow in host.flows("br-int"):
            if "dl_vlan=" in flow or "mod_vlan_vid" in flow or "dl_src=" in flow:
                found.append(f"{host.name}:br-int:{flow}")
    return found


def test_deleting_everything_leaves_no_namespaces_ports_or_flows(stack: Stack) -> None:
    made, admin = stack.made, stack.admin
    if "net_a" not in made:
        pytest.skip("needs the earlier scenarios")
    if "fip" in made:
        assert admin.delete(f"/v2.0/floatingips/{made['fip']['id']}")[0] == 204
    router = made.get("router")
    if router:
        if "ext" in made:
            assert admin.put(f"/v2.0/routers/{router['id']}", {"router": {
                "external_gateway_info": {}}})[0] == 200
        for net in (made["net_a"], made.get("net_b")):
            if net:
                assert admin.put(f"/v2.0/routers/{router['id']}/remove_router_interface",
                                 {"subnet_id": _subnet_id(admin, net)})[0] == 200
        assert admin.delete(f"/v2.0/routers/{router['id']}")[0] == 204
    # the compute service unplugs its instances and deletes their ports
    for host, suffix, key in (("1", "a1", "p1"), ("2", "a2", "p2"), ("2", "b2", "pb")):
        if key in made:
            stack.hosts[host].unplug(suffix)
            assert admin.delete(f"/v2.0/ports/{made[key]['id']}")[0] == 204
    ids = []
    for key in ("net_a", "net_b", "ext"):
        if key in made:
            ids.append(made[key]["id"])
            status, body = admin.delete(f"/v2.0/networks/{made[key]['id']}")
            assert status == 204, body
    if router:
        ids.append(router["id"])
    ok = wait_for(lambda: not _leftovers(stack, ids), 60)
    assert ok, "\n".join(_leftovers(stack, ids))
