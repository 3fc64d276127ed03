"""Fullstack: load balancers of the Octavia API realised by the haproxy
provider on emulated hosts.

Three hosts joined by a VXLAN underlay: a network node ``n`` running the
OVS, L3 and load-balancer agents, and two compute hosts ``1`` and ``2``
running the OVS agent, where HTTP members run as instances
(``tests.lbhaproxy.backend``). The load balancer's VIP is on the members'
network, behind a router whose gateway is on the flat external network
where an "external host" namespace is the client; a floating IP on the
VIP port is what the client reaches.

The scenarios build on each other, in file order: round robin across the
members through the floating IP; a member failing its health check stops
receiving traffic and shows ERROR through the API, then returns; an L7
policy sends ``/static/*`` to another pool and another redirects; a
listener change applied while a long download keeps flowing; statistics;
and deleting the load balancer leaves no namespace, process or port. Then
an ACTIVE_STANDBY pair, a UDP load balancer over UDP echo members on the
same instances (nftables in its namespace, members checked by the agent),
and an SCTP one (a raw-socket INIT answered by a raw-socket member).
"""
from __future__ import annotations

import os
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.conftest import ROOT, Client, Server
from tests.fullstack import cloud
from tests.fullstack.hosts import Fabric, Host, needs_ovs, sh
from tests.lbhaproxy import backend
from tests.rpc.bus import bus
from tests.waiting import wait_for

pytestmark = needs_ovs()
LOCAL_IPS = {"n": "10.99.0.3", "1": "10.99.0.1", "2": "10.99.0.2"}
EXT_HOST_IP = "172.24.4.1"
LB = "/load-balancer/v2/lbaas"
OCTAVIA = ("[octavia]\nenabled_provider_drivers = haproxy:haproxy on neutrino agents\n"
           "default_provider_driver = haproxy\n")


@dataclass
class Stack:
    server: Server
    admin: Client
    fabric: Fabric
    hosts: dict[str, Host]
    ext_ns: str
    state: Path
    octavia: Client  # the Octavia API wants a project: an admin of one
    vhost: str
    made: dict[str, Any] = field(default_factory=dict)


def _lb_agent_conf(host: Host, vhost: str) -> Path:
    return cloud.service_agent_conf(
        host, vhost, "loadbalancer", defaults="periodic_interval = 2\n",
        agent="[haproxy]\nstats_interval = 1\nsend_gratuitous_arp = 1\n")


@pytest.fixture(scope="module")
def stack(fabric: Fabric, vhost: str, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("lb-server")
    server = Server(tmp, extra=f"transport_url = {bus(vhost)}\n"
                    f"service_plugins = router,octavia\n{cloud.ML2}{OCTAVIA}").start()
    try:
        admin = Client(server.url, roles="admin")
        hosts = {n: fabric.host(n) for n in LOCAL_IPS}
        fabric.underlay(hosts["n"], hosts["1"], LOCAL_IPS["n"], LOCAL_IPS["1"])
        fabric.underlay(hosts["n"], hosts["2"], LOCAL_IPS["n"], LOCAL_IPS["2"])
        for host in hosts.values():
            cloud.add_phys_bridge(host)
        ext_ns = cloud.external_host(fabric, hosts["n"], f"{EXT_HOST_IP}/24")
        for name, host in hosts.items():
            cloud.start_agent(fabric, host, cloud.agent_conf(host, vhost, LOCAL_IPS[name]))
        node = hosts["n"]
        cloud.start_agent(fabric, node, cloud.service_agent_conf(node, vhost, "l3"), "l3")
        lb_agent = cloud.start_agent(fabric, node, _lb_agent_conf(node, vhost), "loadbalancer")
        for host in hosts.values():
            assert wait_for(lambda: cloud.agent_alive(admin, host.hostname,
                                                      "Open vSwitch agent"), 60)
        for agent_type in ("L3 agent", "Loadbalancerv2 agent"):
            assert wait_for(lambda: cloud.agent_alive(admin, node.hostname, agent_type), 60), (
                agent_type, _log_tail(node))
        stack = Stack(server, admin, fabric, hosts, ext_ns, tmp,
                      Client(server.url, uuid.uuid4().hex, roles="admin,member"), vhost)
        stack.made["lb_agents"] = {"qlbaas-": lb_agent}
        yield stack
    finally:
        fabric.stop_processes()
        cloud.remove_agent_namespaces(server)
        _remove_load_balancers(fabric)
        server.stop()


def _remove_load_balancers(fabric: Fabric) -> None:
    """What a failed test leaves of the agent's load balancers (a killed agent
    cleans nothing): their haproxy and namespaces, found by their state directories."""
    for host, suffix in (("n", ""), ("1", "@h1")):
        lbaas = Path(f"/tmp/{fabric.prefix}-{host}-loadbalancer/lbaas")
        for entry in lbaas.iterdir() if lbaas.is_dir() else ():
            cloud.delete_namespace(f"qlbaas-{entry.name}{suffix}")


def _log_tail(host: Host) -> str:
    out = []
    for name in ("loadbalancer-agent.log", "l3-agent.log", "agent.log"):
        path = host.dir / name
        if path.exists():
            lines = [ln for ln in path.read_text().splitlines()
                     if " neutrino." in ln or "Traceback" in ln or ln.startswith("  ")]
            out.append(f"--- {name}\n" + "\n".join(lines[-30:]))
    return "\n".join(out)


def _tail(stack: Stack) -> str:
    return _log_tail(stack.hosts["n"])


def _member(stack: Stack, host: str, name: str, net: dict[str, Any], address: str
            ) -> dict[str, Any]:
    """An instance on ``host`` serving HTTP on port 80 as ``name``."""
    port = cloud.bound_port(stack.admin, net, stack.hosts[host].hostname,
                            fixed_ips=[{"ip_address": address}])
    ns = stack.hosts[host].instance(name, port)
    stack.made.setdefault("instances", {})[name] = ns
    sh("ip", "-n", ns, "route", "replace", "default", "via", "10.100.1.1")
    proc = subprocess.Popen(
        ["ip", "netns", "exec", ns, sys.executable, "-m", "tests.lbhaproxy.backend", name, "80",
         str(stack.state)], cwd=str(ROOT), env={**os.environ, "PYTHONPATH": str(ROOT)})
    stack.fabric.procs.append(proc)  # type: ignore[arg-type]
    assert cloud.wait_active(stack.admin, port["id"], 60), _tail(stack)
    return port


def _wait_lb_active(stack: Stack, lb_id: str, timeout: float = 60) -> dict[str, Any]:
    def active() -> dict[str, Any] | None:
        status, body = stack.octavia.get(f"{LB}/loadbalancers/{lb_id}")
        lb = body.get("loadbalancer") if status == 200 else None
        assert lb is None or lb["provisioning_status"] != "ERROR", (lb, _tail(stack))
        return lb if lb and lb["provisioning_status"] == "ACTIVE" else None
    lb = wait_for(active, timeout)
    assert lb, (stack.octavia.get(f"{LB}/loadbalancers/{lb_id}"), _tail(stack))
    return lb  # type: ignore[no-any-return]


def _create(stack: Stack, kind: str, body: dict[str, Any], lb_id: str) -> dict[str, Any]:
    if kind == "rule":
        path = f"l7policies/{body.pop('policy')}/rules"
    elif kind == "member":
        path = f"pools/{body.pop('pool_id')}/members"
    else:
        path = {"l7policy": "l7policies"}.get(kind, f"{kind}s")
    status, made = stack.octavia.post(f"{LB}/{path}", {kind: body})
    assert status == 201, made
    _wait_lb_active(stack, lb_id)
    return made[kind]  # type: ignore[no-any-return]


def _get(stack: Stack, path: str, *flags: str) -> str:
    return sh("ip", "netns", "exec", stack.ext_ns, "curl", "-s", "-m", "5", *flags,
              f"http://{stack.made['fip']}{path}", check=False).stdout


def _names(stack: Stack, times: int = 6) -> set[str]:
    return {(_get(stack, "/").split() or ["-"])[0] for _ in range(times)}


def _operating(stack: Stack, kind: str, oid: str, parent: str = "") -> str:
    path = f"pools/{parent}/members/{oid}" if kind == "member" else f"{kind}s/{oid}"
    return str(stack.octavia.get(f"{LB}/{path}")[1][kind]["operating_status"])


def test_round_robin_across_members_on_two_hosts_through_a_floating_ip(stack: Stack
                                                                      ) -> None:
    admin = stack.admin
    net = cloud.network(admin, "lb-net", "10.100.1.0/24")
    subnet_id = admin.get(f"/v2.0/subnets?network_id={net['id']}")[1]["subnets"][0]["id"]
    status, ext = admin.post("/v2.0/networks", {"network": {
        "name": "lb-ext", "router:external": True, "provider:network_type": "flat",
        "provider:physical_network": "physnet1"}})
    assert status == 201, ext
    ext = ext["network"]
    status, sub = admin.post("/v2.0/subnets", {"subnet": {
        "network_id": ext["id"], "ip_version": 4, "cidr": "172.24.4.0/24",
        "gateway_ip": EXT_HOST_IP, "enable_dhcp": False,
        "allocation_pools": [{"start": "172.24.4.10", "end": "172.24.4.50"}]}})
    assert status == 201, sub
    status, router = admin.post("/v2.0/routers", {"router": {
        "name": "lb-r", "external_gateway_info": {"network_id": ext["id"]}}})
    assert status == 201, router
    router = router["router"]
    status, body = admin.put(f"/v2.0/routers/{router['id']}/add_router_interface",
                             {"subnet_id": subnet_id})
    assert status == 200, body
    ports = {"m1": _member(stack, "1", "m1", net, "10.100.1.21"),
             "m2": _member(stack, "2", "m2", net, "10.100.1.22"),
             "m3": _member(stack, "2", "m3", net, "10.100.1.23")}

    status, lb = stack.octavia.post(f"{LB}/loadbalancers", {"loadbalancer": {
        "name": "web", "vip_subnet_id": subnet_id, "provider": "haproxy"}})
    assert status == 201, lb
    lb = _wait_lb_active(stack, lb["loadbalancer"]["id"])
    lb_id = lb["id"]
    stack.made.update(lb=lb, ports=ports, ext=ext)
    listener = _create(stack, "listener", {"protocol": "HTTP", "protocol_port": 80,
                                           "loadbalancer_id": lb_id}, lb_id)
    pool = _create(stack, "pool", {"protocol": "HTTP", "lb_algorithm": "ROUND_ROBIN",
                                   "listener_id": listener["id"]}, lb_id)
    _create(stack, "healthmonitor", {"pool_id": pool["id"], "type": "HTTP", "delay": 1,
                                     "timeout": 1, "max_retries": 2, "max_retries_down": 2,
                                     "url_path": "/health", "expected_codes": "200"}, lb_id)
    members = {name: _create(stack, "member", {
        "pool_id": pool["id"], "address": ports[name]["fixed_ips"][0]["ip_address"],
        "protocol_port": 80, "subnet_id": subnet_id}, lb_id) for name in ("m1", "m2")}
    stack.made.update(listener=listener, pool=pool, members=members, subnet_id=subnet_id)

    status, fip = admin.post("/v2.0/floatingips", {"floatingip": {
        "floating_network_id": ext["id"], "port_id": lb["vip_port_id"]}})
    assert status == 201, fip
    stack.made["fip"] = fip["floatingip"]["floating_ip_address"]
    assert wait_for(lambda: _get(stack, "/").startswith("m"), 60), (
        _get(stack, "/", "-v"), _tail(stack))
    assert _names(stack) == {"m1", "m2"}
    vip_port = admin.get(f"/v2.0/ports/{lb['vip_port_id']}")[1]["port"]
    assert vip_port["binding:host_id"] == stack.hosts["n"].hostname
    assert f"qlbaas-{lb_id}" in sh("ip", "netns", "list").stdout


def test_a_member_failing_its_health_check_stops_receiving_traffic_and_shows_error(
        stack: Stack) -> None:
    if "members" not in stack.made:
        pytest.skip("needs the round robin scenario")
    pool, m2 = stack.made["pool"]["id"], stack.made["members"]["m2"]["id"]
    assert wait_for(lambda: _operating(stack, "member", m2, pool) == "ONLINE", 30), _tail(stack)
    sick = stack.state / "m2.sick"
    sick.touch()
    try:
        assert wait_for(lambda: _operating(stack, "member", m2, pool) == "ERROR", 30)
        assert _operating(stack, "pool", pool) == "DEGRADED"
        assert _names(stack) == {"m1"}
    finally:
        sick.unlink()
    assert wait_for(lambda: _operating(stack, "member", m2, pool) == "ONLINE", 30)
    assert wait_for(lambda: "m2" in _names(stack), 10)


def test_l7_policies_send_static_to_another_pool_and_redirect(stack: Stack) -> None:
    if "members" not in stack.made:
        pytest.skip("needs the round robin scenario")
    lb_id, listener = stack.made["lb"]["id"], stack.made["listener"]["id"]
    static = _create(stack, "pool", {"protocol": "HTTP", "lb_algorithm": "LEAST_CONNECTIONS",
                                     "loadbalancer_id": lb_id}, lb_id)
    _create(stack, "member", {"pool_id": static["id"], "protocol_port": 80,
                              "address": stack.made["ports"]["m3"]["fixed_ips"][0]["ip_address"],
                              "subnet_id": stack.made["subnet_id"]}, lb_id)
    to_static = _create(stack, "l7policy", {"listener_id": listener, "position": 1,
                                            "action": "REDIRECT_TO_POOL",
                                            "redirect_pool_id": static["id"]}, lb_id)
    _create(stack, "rule", {"policy": to_static["id"], "type": "PATH",
                            "compare_type": "STARTS_WITH", "value": "/static/"}, lb_id)
    moved = _create(stack, "l7policy", {"listener_id": listener, "position": 2,
                                        "action": "REDIRECT_TO_URL", "redirect_http_code": 301,
                                        "redirect_url": "http://example.com/new"}, lb_id)
    _create(stack, "rule", {"policy": moved["id"], "type": "PATH", "compare_type": "EQUAL_TO",
                            "value": "/old"}, lb_id)
    assert wait_for(lambda: _get(stack, "/static/app.css").startswith("m3"), 60), _tail(stack)
    assert wait_for(lambda: _get(stack, "/old", "-o", "/dev/null", "-D", "-").startswith(
        "HTTP/1.1 301"), 30), _tail(stack)
    headers = _get(stack, "/old", "-o", "/dev/null", "-D", "-")
    assert "location: http://example.com/new" in headers.lower()
    assert _names(stack) == {"m1", "m2"}


def test_a_listener_change_keeps_a_long_download_flowing(stack: Stack) -> None:
    if "members" not in stack.made:
        pytest.skip("needs the round robin scenario")
    lb_id, listener = stack.made["lb"]["id"], stack.made["listener"]["id"]
    download = subprocess.Popen(
        ["ip", "netns", "exec", stack.ext_ns, "curl", "-s", "-m", "60", "-o", "/dev/null",
         "-w", "%{http_code} %{size_download}", f"http://{stack.made['fip']}/big"],
        stdout=subprocess.PIPE, text=True)
    assert wait_for(lambda: sh("ip", "netns", "exec", stack.ext_ns, "ss", "-tnH", "state",
                               "established", check=False).stdout.strip(), 10)
    status, body = stack.octavia.put(f"{LB}/listeners/{listener}", {"listener": {
        "connection_limit": 500, "timeout_client_data": 40000}})
    assert status == 200, body
    _wait_lb_active(stack, lb_id)
    result, _ = download.communicate(timeout=70)
    assert result == f"200 {backend.BIG_CHUNKS * backend.CHUNK}", _tail(stack)
    assert _get(stack, "/").startswith("m")


def test_statistics_count_what_the_listener_served(stack: Stack) -> None:
    if "members" not in stack.made:
        pytest.skip("needs the round robin scenario")
    _names(stack)
    lb_id = stack.made["lb"]["id"]

    def counted() -> dict[str, int] | None:
        stats = stack.octavia.get(f"{LB}/loadbalancers/{lb_id}/stats")[1]["stats"]
        return stats if stats["total_connections"] > 0 and stats["bytes_out"] > 0 else None
    assert wait_for(counted, 20), stack.octavia.get(f"{LB}/loadbalancers/{lb_id}/stats")


def test_deleting_the_load_balancer_leaves_no_namespace_process_or_port(stack: Stack) -> None:
    if "lb" not in stack.made:
        pytest.skip("needs the round robin scenario")
    lb = stack.made["lb"]
    status, body = stack.octavia.delete(f"{LB}/loadbalancers/{lb['id']}?cascade=true")
    assert status == 204, body
    assert wait_for(lambda: stack.octavia.get(f"{LB}/loadbalancers/{lb['id']}")[0] == 404, 60), (
        _tail(stack))
    assert f"qlbaas-{lb['id']}" not in sh("ip", "netns", "list").stdout
    haproxies = sh("pgrep", "-af", "haproxy", check=False).stdout
    assert lb["id"] not in haproxies, haproxies
    assert wait_for(lambda: stack.admin.get(f"/v2.0/ports/{lb['vip_port_id']}")[0] == 404, 10)
    assert not any(Path(f"/tmp/{stack.fabric.prefix}-n-loadbalancer/lbaas").glob("*"))


def _start_lb_agent(stack: Stack, name: str) -> subprocess.Popen[bytes]:
    """The load-balancer agent of host ``name`` (host 1's namespaces suffixed)."""
    host = stack.hosts[name]
    if name == "1":
        host.env["NEUTRINO_NS_SUFFIX"] = "h1"
    try:
        conf = host.dir / "loadbalancer-agent.conf"  # a restarted agent keeps its own
        proc = cloud.start_agent(stack.fabric, host, conf if conf.exists() else
                                 _lb_agent_conf(host, stack.vhost), "loadbalancer")
    finally:
        host.env.pop("NEUTRINO_NS_SUFFIX", None)
    assert wait_for(lambda: cloud.agent_alive(stack.admin, host.hostname,
                                              "Loadbalancerv2 agent"), 60)
    return proc


def _haproxy_pids(ns: str) -> list[str]:
    out = []
    for pid in sh("ip", "netns", "pids", ns, check=False).stdout.split():
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() == "haproxy":
                out.append(pid)
        except OSError:
            pass  # gone meanwhile
    return out


def _holder(vip: str, namespaces: list[str]) -> str | None:
    """The namespace whose device carries ``vip`` (the VRRP master's)."""
    for ns in namespaces:
        if f" {vip}/" in sh("ip", "-n", ns, "-o", "addr", "show", check=False).stdout:
            return ns
    return None


def test_active_standby_keeps_serving_when_the_masters_haproxy_dies(stack: Stack) -> None:
    """Two load-balancer agents (network node and host 1); the load balancer's
    flavor asks for ACTIVE_STANDBY: keepalived on both, the VIP on the master.
    Killing the master's haproxy moves the VIP; the floating IP keeps answering."""
    if "ext" not in stack.made:
        pytest.skip("needs the round robin scenario")
    second = _start_lb_agent(stack, "1")
    octavia = stack.octavia
    status, profile = octavia.post(f"{LB}/flavorprofiles", {"flavorprofile": {
        "name": "pair", "provider_name": "haproxy",
        "flavor_data": '{"loadbalancer_topology": "ACTIVE_STANDBY"}'}})
    assert status == 201, profile
    status, flavor = octavia.post(f"{LB}/flavors", {"flavor": {
        "name": "pair", "flavor_profile_id": profile["flavorprofile"]["id"]}})
    assert status == 201, flavor
    status, lb = octavia.post(f"{LB}/loadbalancers", {"loadbalancer": {
        "name": "pair", "vip_subnet_id": stack.made["subnet_id"],
        "flavor_id": flavor["flavor"]["id"]}})
    assert status == 201, lb
    lb = _wait_lb_active(stack, lb["loadbalancer"]["id"])
    lb_id = lb["id"]
    listener = _create(stack, "listener", {"protocol": "HTTP", "protocol_port": 80,
                                           "loadbalancer_id": lb_id}, lb_id)
    pool = _create(stack, "pool", {"protocol": "HTTP", "lb_algorithm": "ROUND_ROBIN",
                                   "listener_id": listener["id"]}, lb_id)
    for name in ("m1", "m2"):
        _create(stack, "member", {
            "pool_id": pool["id"], "protocol_port": 80, "subnet_id": stack.made["subnet_id"],
            "address": stack.made["ports"][name]["fixed_ips"][0]["ip_address"]}, lb_id)
    status, fip = stack.admin.post("/v2.0/floatingips", {"floatingip": {
        "floating_network_id": stack.made["ext"]["id"], "port_id": lb["vip_port_id"]}})
    assert status == 201, fip
    stack.made["fip"] = fip["floatingip"]["floating_ip_address"]
    pair = [f"qlbaas-{lb_id}", f"qlbaas-{lb_id}@h1"]
    assert wait_for(lambda: _holder(lb["vip_address"], pair), 30), _tail(stack)
    assert wait_for(lambda: _get(stack, "/").startswith("m"), 60), _tail(stack)
    master = _holder(lb["vip_address"], pair)
    assert master is not None
    # the master's host fails: its agent is gone (nothing restarts haproxy), then haproxy
    agent = second if master.endswith("@h1") else stack.made["lb_agents"]["qlbaas-"]
    agent.terminate()
    agent.wait(30)
    for pid in _haproxy_pids(master):
        sh("kill", "-9", pid, check=False)
    backup = next(ns for ns in pair if ns != master)
    assert wait_for(lambda: _holder(lb["vip_address"], pair) == backup, 30), _tail(stack)
    assert wait_for(lambda: _get(stack, "/").startswith("m"), 30), _tail(stack)
    # the host comes back: its agent rebuilds haproxy there, the VIP stays (nopreempt)
    _start_lb_agent(stack, "1" if master.endswith("@h1") else "n")
    assert wait_for(lambda: _haproxy_pids(master), 30), _tail(stack)
    assert _holder(lb["vip_address"], pair) == backup

    status, body = octavia.delete(f"{LB}/loadbalancers/{lb_id}?cascade=true")
    assert status == 204, body
    assert wait_for(lambda: octavia.get(f"{LB}/loadbalancers/{lb_id}")[0] == 404, 60)
    assert wait_for(lambda: not any(ns in sh("ip", "netns", "list").stdout for ns in pair),
                    30), _tail(stack)
    left = stack.admin.get(f"/v2.0/ports?device_id=lb-{lb_id}")[1]["ports"]
    assert wait_for(lambda: not stack.admin.get(f"/v2.0/ports?device_id=lb-{lb_id}")[1][
        "ports"], 10), left


def _udp_backend(stack: Stack, name: str) -> subprocess.Popen[bytes]:
    """A UDP echo member answering its name on port 5353 in instance ``name``."""
    proc = subprocess.Popen(
        ["ip", "netns", "exec", stack.made["instances"][name], sys.executable, "-m",
         "tests.lbhaproxy.udp_backend", "serve", name, "5353"],
        cwd=str(ROOT), env={**os.environ, "PYTHONPATH": str(ROOT)})
    stack.fabric.procs.append(proc)  # type: ignore[arg-type]
    return proc


def _ask_udp(stack: Stack, address: str, times: int = 6) -> list[str]:
    done = sh("ip", "netns", "exec", stack.ext_ns, sys.executable, "-m",
              "tests.lbhaproxy.udp_backend", "ask", address, "53", str(times), check=False)
    return done.stdout.split()


def test_udp_round_robin_a_stopped_member_leaves_and_returns_and_delete_leaves_nothing(
        stack: Stack) -> None:
    if "instances" not in stack.made or "ext" not in stack.made:
        pytest.skip("needs the round robin scenario")
    backends = {name: _udp_backend(stack, name) for name in ("m1", "m2")}
    octavia = stack.octavia
    status, lb = octavia.post(f"{LB}/loadbalancers", {"loadbalancer": {
        "name": "dns", "vip_subnet_id": stack.made["subnet_id"], "provider": "haproxy"}})
    assert status == 201, lb
    lb = _wait_lb_active(stack, lb["loadbalancer"]["id"])
    lb_id = lb["id"]
    listener = _create(stack, "listener", {"protocol": "UDP", "protocol_port": 53,
                                           "loadbalancer_id": lb_id}, lb_id)
    pool = _create(stack, "pool", {"protocol": "UDP", "lb_algorithm": "ROUND_ROBIN",
                                   "listener_id": listener["id"]}, lb_id)
    _create(stack, "healthmonitor", {"pool_id": pool["id"], "type": "UDP-CONNECT",
                                     "delay": 1, "timeout": 1, "max_retries": 2,
                                     "max_retries_down": 2}, lb_id)
    members = {name: _create(stack, "member", {
        "pool_id": pool["id"], "protocol_port": 5353, "subnet_id": stack.made["subnet_id"],
        "address": stack.made["ports"][name]["fixed_ips"][0]["ip_address"]}, lb_id)["id"]
        for name in ("m1", "m2")}
    status, fip = stack.admin.post("/v2.0/floatingips", {"floatingip": {
        "floating_network_id": stack.made["ext"]["id"], "port_id": lb["vip_port_id"]}})
    assert status == 201, fip
    address = fip["floatingip"]["floating_ip_address"]
    assert wait_for(lambda: _ask_udp(stack, address, 1) != ["-"], 60), _tail(stack)
    assert sorted(_ask_udp(stack, address, 6)) == ["m1"] * 3 + ["m2"] * 3
    for mid in members.values():
        assert wait_for(lambda: _operating(stack, "member", mid, pool["id"]) == "ONLINE", 30)
    assert _operating(stack, "listener", listener["id"]) == "ONLINE"

    backends["m2"].kill()
    backends["m2"].wait()
    assert wait_for(lambda: _operating(stack, "member", members["m2"], pool["id"]) == "ERROR",
                    30), _tail(stack)
    assert _operating(stack, "pool", pool["id"]) == "DEGRADED"
    assert set(_ask_udp(stack, address, 6)) == {"m1"}
    _udp_backend(stack, "m2")
    assert wait_for(lambda: _operating(stack, "member", members["m2"], pool["id"]) == "ONLINE",
                    30), _tail(stack)
    assert wait_for(lambda: set(_ask_udp(stack, address, 6)) == {"m1", "m2"}, 10)

    def counted() -> dict[str, int] | None:
        stats = octavia.get(f"{LB}/loadbalancers/{lb_id}/stats")[1]["stats"]
        return stats if stats["total_connections"] >= 12 and stats["bytes_out"] > 0 else None
    assert wait_for(counted, 20), octavia.get(f"{LB}/loadbalancers/{lb_id}/stats")

    status, body = octavia.delete(f"{LB}/loadbalancers/{lb_id}?cascade=true")
    assert status == 204, body
    assert wait_for(lambda: octavia.get(f"{LB}/loadbalancers/{lb_id}")[0] == 404, 60), (
        _tail(stack))
    assert f"qlbaas-{lb_id}" not in sh("ip", "netns", "list").stdout
    assert lb_id not in sh("pgrep", "-af", "haproxy", check=False).stdout
    assert wait_for(lambda: stack.admin.get(f"/v2.0/ports/{lb['vip_port_id']}")[0] == 404, 10)
    assert not Path(f"/tmp/{stack.fabric.prefix}-n-loadbalancer/lbaas/{lb_id}").exists()


def test_sctp_reaches_a_member_through_a_floating_ip_and_its_check_passes(stack: Stack) -> None:
    """SCTP on a kernel without SCTP sockets: the member answers INITs from a
    raw socket, the client crafts its INIT (``probe.sctp_check``)."""
    if "instances" not in stack.made or "ext" not in stack.made:
        pytest.skip("needs the round robin scenario")
    port = 38412
    stack.fabric.procs.append(subprocess.Popen(  # type: ignore[arg-type]
        ["ip", "netns", "exec", stack.made["instances"]["m1"], sys.executable, "-m",
         "tests.lbhaproxy.sctp_responder", str(port)],
        cwd=str(ROOT), env={**os.environ, "PYTHONPATH": str(ROOT)}))
    octavia = stack.octavia
    status, lb = octavia.post(f"{LB}/loadbalancers", {"loadbalancer": {
        "name": "sctp", "vip_subnet_id": stack.made["subnet_id"], "provider": "haproxy"}})
    assert status == 201, lb
    lb = _wait_lb_active(stack, lb["loadbalancer"]["id"])
    lb_id = lb["id"]
    listener = _create(stack, "listener", {"protocol": "SCTP", "protocol_port": port,
                                           "loadbalancer_id": lb_id}, lb_id)
    pool = _create(stack, "pool", {"protocol": "SCTP", "lb_algorithm": "ROUND_ROBIN",
                                   "listener_id": listener["id"]}, lb_id)
    _create(stack, "healthmonitor", {"pool_id": pool["id"], "type": "SCTP", "delay": 1,
                                     "timeout": 1, "max_retries": 1}, lb_id)
    member = _create(stack, "member", {
        "pool_id": pool["id"], "protocol_port": port, "subnet_id": stack.made["subnet_id"],
        "address": stack.made["ports"]["m1"]["fixed_ips"][0]["ip_address"]}, lb_id)["id"]
    status, fip = stack.admin.post("/v2.0/floatingips", {"floatingip": {
        "floating_network_id": stack.made["ext"]["id"], "port_id": lb["vip_port_id"]}})
    assert status == 201, fip
    address = fip["floatingip"]["floating_ip_address"]
    code = ("import sys; from neutrino.agents.loadbalancer.probe import sctp_check; "
            f"sys.exit(0 if sctp_check('{address}', {port}, 2.0) else 1)")

    def handshake() -> bool:
        return sh("ip", "netns", "exec", stack.ext_ns, sys.executable, "-c", code,
                  check=False).returncode == 0
    assert wait_for(handshake, 60), _tail(stack)
    assert wait_for(lambda: _operating(stack, "member", member, pool["id"]) == "ONLINE", 30)
    status, body = octavia.delete(f"{LB}/loadbalancers/{lb_id}?cascade=true")
    assert status == 204, body
    assert wait_for(lambda: octavia.get(f"{LB}/loadbalancers/{lb_id}")[0] == 404, 60)
    assert f"qlbaas-{lb_id}" not in sh("ip", "netns", "list").stdout
