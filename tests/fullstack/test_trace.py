"""Fullstack: the packet-path tracer's verdicts against real packets.

A network node ``n`` (OVS and L3 agents, br-phys to an external host on
the flat physnet1) and a compute host ``1``, joined by VXLAN; both OVS
agents enforce security groups with the ``openvswitch`` firewall driver.
Instances are namespaces with their fixed IPs and their router as
gateway. For each (source, destination, protocol) of a table,
``POST /v2.0/trace`` is asked and the same packet is sent (a ping, a TCP
connection): the traced verdict must be what the packet does, a denied
case names the missing rule and a NAT case the address it became. With
``live``, the agents run the same packets through br-int's flows and the
router's namespace: they agree with the model until a flow or an nft rule
is deleted behind their back, and the answer then names the step where
the host drops or translates differently.
"""
from __future__ import annotations

import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from tests.conftest import Client, Server
from tests.fullstack import cloud
from tests.fullstack.hosts import Fabric, Host, needs_ovs, ping, serve_tcp, sh, tcp_answers
from tests.waiting import wait_for

pytestmark = needs_ovs()
LOCAL_IPS = {"n": "10.99.0.3", "1": "10.99.0.1"}
EXT_HOST_IP = "172.24.7.1"
WEB_PORT = 5001
PEER_PORT = 8081


@dataclass
class Cloud:
    server: Server
    admin: Client
    fabric: Fabric
    hosts: dict[str, Host]
    ext_ns: str
    made: dict[str, Any]


def _made(admin: Client, plural: str, singular: str, **attrs: Any) -> dict[str, Any]:
    status, body = admin.post(f"/v2.0/{plural}", {singular: attrs})
    assert status == 201, body
    return dict(body[singular])


def _ip(port: dict[str, Any]) -> str:
    return str(port["fixed_ips"][0]["ip_address"])


def _instance(env: Cloud, host: str, suffix: str, net: dict[str, Any], gateway: str,
              **attrs: Any) -> tuple[str, dict[str, Any]]:
    port = cloud.bound_port(env.admin, net, env.hosts[host].hostname, **attrs)
    ns = env.hosts[host].instance(suffix, port)
    sh("ip", "-n", ns, "route", "add", "default", "via", gateway)
    assert cloud.wait_active(env.admin, port["id"], 60), port["id"]
    return ns, port


def _build(env: Cloud) -> None:
    admin, made = env.admin, env.made
    ext = _made(admin, "networks", "network", name="tr-ext", **{
        "router:external": True, "provider:network_type": "flat",
        "provider:physical_network": "physnet1"})
    _made(admin, "subnets", "subnet", network_id=ext["id"], ip_version=4,
          cidr="172.24.7.0/24", gateway_ip=EXT_HOST_IP, enable_dhcp=False,
          allocation_pools=[{"start": "172.24.7.10", "end": "172.24.7.50"}])
    net_a = cloud.network(admin, "tr-a", "10.130.1.0/24")
    net_b = cloud.network(admin, "tr-b", "10.130.2.0/24")
    router = _made(admin, "routers", "router", name="tr-r",
                   external_gateway_info={"network_id": ext["id"]})
    for net in (net_a, net_b):
        sub = admin.get(f"/v2.0/subnets?network_id={net['id']}")[1]["subnets"][0]
        status, body = admin.put(f"/v2.0/routers/{router['id']}/add_router_interface",
                                 {"subnet_id": sub["id"]})
        assert status == 200, body
    web = cloud.security_group(admin, "tr-web")  # egress only, then one TCP port in
    _made(admin, "security-group-rules", "security_group_rule", security_group_id=web,
          direction="ingress", ethertype="IPv4", protocol="tcp",
          port_range_min=WEB_PORT, port_range_max=WEB_PORT)
    made["vm_a"], made["p_a"] = _instance(env, "1", "ta", net_a, "10.130.1.1")
    made["vm_b"], made["p_b"] = _instance(env, "n", "tb", net_a, "10.130.1.1")
    made["vm_w"], made["p_w"] = _instance(env, "n", "tw", net_a, "10.130.1.1",
                                          security_groups=[web])
    made["vm_c"], made["p_c"] = _instance(env, "1", "tc", net_b, "10.130.2.1")
    serve_tcp(env.fabric, made["vm_w"], WEB_PORT)
    serve_tcp(env.fabric, made["vm_b"], WEB_PORT)
    made["fip"] = _made(admin, "floatingips", "floatingip", floating_network_id=ext["id"],
                        port_id=made["p_w"]["id"])
    made["gateway_ip"] = router["external_gateway_info"]["external_fixed_ips"][0]["ip_address"]
    made["web"] = web
    assert wait_for(lambda: admin.get(f"/v2.0/floatingips/{made['fip']['id']}")[1]
                    ["floatingip"]["status"] == "ACTIVE", 60)


@pytest.fixture(scope="module")
def env(fabric: Fabric, vhost: str, tmp_path_factory: pytest.TempPathFactory
        ) -> Iterator[Cloud]:
    server = cloud.start_server(tmp_path_factory.mktemp("fullstack-trace"), vhost,
                                "router,trace")
    try:
        admin = Client(server.url, project=uuid.uuid4().hex, roles="admin")
        hosts = {n: fabric.host(n) for n in LOCAL_IPS}
        fabric.underlay(hosts["n"], hosts["1"], LOCAL_IPS["n"], LOCAL_IPS["1"])
        for host in hosts.values():
            cloud.add_phys_bridge(host)
        ext_ns = cloud.external_host(fabric, hosts["n"], f"{EXT_HOST_IP}/24")
        for name, host in hosts.items():
            conf = cloud.agent_conf(host, vhost, LOCAL_IPS[name], firewall_driver="openvswitch")
            cloud.start_agent(fabric, host, conf)
        cloud.start_agent(fabric, hosts["n"], cloud.service_agent_conf(hosts["n"], vhost, "l3"),
                          "l3")
        for host in hosts.values():
            assert wait_for(lambda: cloud.agent_alive(admin, host.hostname,
                                                      "Open vSwitch agent"), 60)
        assert wait_for(lambda: cloud.agent_alive(admin, hosts["n"].hostname, "L3 agent"), 60)
        env = Cloud(server, admin, fabric, hosts, ext_ns, {})
        _build(env)
        yield env
    finally:
        fabric.stop_processes()
        cloud.remove_agent_namespaces(server)
        server.stop()


def _trace(env: Cloud, **packet: Any) -> dict[str, Any]:
    status, body = env.admin.post("/v2.0/trace", {"trace": packet})
    assert status == 200, body
    return dict(body["trace"])


def _accept_once(ns: str, port: int) -> subprocess.Popen[str]:
    """A TCP server in ``ns`` printing the address of its first client, then exiting."""
    code = ("import socket\n"
            "s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
            f"s.bind(('0.0.0.0',{port})); s.listen(1); s.settimeout(30)\n"
            "c,a=s.accept(); print(a[0], flush=True); c.close()\n")
    proc = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c", code],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    return proc


@dataclass(frozen=True)
class Case:
    name: str
    source: str          # an instance's key in ``made``, or "ext"
    destination: str     # an instance's port key, "fip" or "ext"
    protocol: str
    dport: int | None = None


CASES = [
    Case("same network, default group, ping", "vm_a", "p_b", "icmp"),
    Case("same network, web group admits its port", "vm_a", "p_w", "tcp", WEB_PORT),
    Case("same network, web group has no icmp rule", "vm_a", "p_w", "icmp"),
    Case("routed between networks through the router", "vm_c", "p_b", "icmp"),
    Case("routed tcp into the default group", "vm_c", "p_b", "tcp", WEB_PORT),
    Case("outside host to the floating IP, admitted port", "ext", "fip", "tcp", WEB_PORT),
    Case("outside host pings the floating IP, no icmp rule", "ext", "fip", "icmp"),
    Case("instance to the outside host through SNAT", "vm_b", "ext", "tcp", PEER_PORT),
]


def _address(env: Cloud, destination: str) -> str:
    if destination == "fip":
        return str(env.made["fip"]["floating_ip_address"])
    if destination == "ext":
        return EXT_HOST_IP
    return _ip(env.made[destination])


def _packet(env: Cloud, case: Case) -> dict[str, Any]:
    packet: dict[str, Any] = {"destination_ip": _address(env, case.destination),
                              "protocol": case.protocol}
    if case.dport is not None:
        packet["destination_port"] = case.dport
    if case.source == "ext":
        packet["source_ip"] = EXT_HOST_IP
    else:
        packet["port_id"] = env.made["p" + case.source[2:]]["id"]
    return packet


def _sender(env: Cloud, case: Case) -> Callable[[], bool]:
    ns = env.ext_ns if case.source == "ext" else env.made[case.source]
    address = _address(env, case.destination)
    if case.protocol == "icmp":
        return lambda: ping(ns, address, tries=2)
    if case.destination == "ext":
        def through_snat() -> bool:
            server = _accept_once(env.ext_ns, PEER_PORT)
            code = f"import socket\nsocket.create_connection(('{address}',{PEER_PORT}), 2).close()"
            sh("ip", "netns", "exec", ns, sys.executable, "-c", code, check=False)
            try:
                out, _ = server.communicate(timeout=5)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
                return False
            env.made["seen_as"] = out.strip()
            return bool(out.strip())
        return through_snat
    return lambda: tcp_answers(ns, address, WEB_PORT)


def test_traced_verdicts_match_what_real_packets_do(env: Cloud) -> None:
    traced = {case: _trace(env, **_packet(env, case)) for case in CASES}
    for case, result in traced.items():  # the flows converge: what passes, passes
        if result["verdict"] == "allowed":
            assert wait_for(_sender(env, case), 60), (case.name, result)
    for case, result in traced.items():
        real = _sender(env, case)()
        assert (result["verdict"] == "allowed") == real, (case.name, result, real)


def test_denied_case_names_the_missing_ingress_rule(env: Cloud) -> None:
    denied = _trace(env, **_packet(env, CASES[2]))
    assert denied["verdict"] == "denied"
    assert denied["hops"][-1]["kind"] == "security_group_ingress"
    assert denied["hops"][-1]["security_group_ids"] == [env.made["web"]]
    assert "no ingress rule" in denied["reason"] and "icmp" in denied["reason"]
    assert not ping(env.made["vm_a"], _ip(env.made["p_w"]), tries=2)


def test_nat_cases_name_the_translation_the_packet_gets(env: Cloud) -> None:
    snat = _trace(env, **_packet(env, CASES[7]))
    hop = next(h for h in snat["hops"] if h["kind"] == "snat")
    assert _sender(env, CASES[7])()
    assert hop["translated_source"] == env.made["gateway_ip"] == env.made["seen_as"]
    inbound = _trace(env, **_packet(env, CASES[5]))
    hop = next(h for h in inbound["hops"] if h["kind"] == "floating_ip")
    assert hop["translated_destination"] == _ip(env.made["p_w"])
    assert inbound["verdict"] == "allowed"


def _live(env: Cloud, case: Case) -> dict[str, Any]:
    result = _trace(env, **_packet(env, case), live=True)
    assert "live" in result, result
    return result


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_live_trace_agrees_with_the_model(env: Cloud, case: Case) -> None:
    result = _live(env, case)
    live = result["live"]
    assert live["agrees"], (case.name, live)
    assert live["verdict"] == result["verdict"], (case.name, live)
    asked = {h["leg"]: h for h in live["hosts"]}
    assert all("error" not in h for h in asked.values()), asked
    if case.source != "ext":
        assert asked["source"]["host"] == env.hosts["1" if case.source in ("vm_a", "vm_c")
                                                    else "n"].hostname
    if case is CASES[0]:  # from host 1 to host n: it arrives by n's tunnel from 1
        assert asked["destination"]["entered_at"] == "br-tun vxlan-0a630001", asked
        assert [t["bridge"] for t in asked["destination"]["tables"]][:2] == ["br-tun"] * 2
    if result["verdict"] == "denied":  # the host drops it where the model does
        last = live["hops"][-1]
        assert last["live"]["verdict"] == "dropped", live
        assert asked["destination"]["dropped_at"]["table"] in (81, 82), asked


def _ofport_name(env: Cloud, host: str, port: dict[str, Any]) -> str:
    return env.hosts[host].vsctl("--bare", "--columns=name", "find", "Interface",
                                 f"external_ids:iface-id={port['id']}").strip()


def test_a_flow_deleted_behind_the_agent_is_named_where_the_host_drops(env: Cloud) -> None:
    host = env.hosts["1"]
    name = _ofport_name(env, "1", env.made["p_a"])
    flows = [f for f in host.ofctl("--no-stats", "--names", "dump-flows", "br-int",
                                   "table=72").splitlines() if f"in_port={name}" in f
             and "ct_state=+new-est-inv+trk,ip," in f]
    assert len(flows) == 1, flows
    host.ofctl("--strict", "del-flows", "br-int",
               f"table=72,priority=70,ct_state=+new-est-inv+trk,ip,in_port={name}")
    try:
        result = _live(env, CASES[0])
        live = result["live"]
        assert result["verdict"] == "allowed" and live["verdict"] == "denied", live
        assert not live["agrees"]
        egress = next(h for h in live["hops"] if h["kind"] == "security_group_egress")
        assert egress["model"] == "passed" and egress["live"]["verdict"] == "dropped"
        assert "table 72" in egress["live"]["detail"], egress
        assert any(d.startswith("security_group_egress:") and "table 72" in d
                   for d in live["disagreements"]), live["disagreements"]
        assert not ping(env.made["vm_a"], _ip(env.made["p_b"]), tries=2)
    finally:
        host.ofctl("add-flow", "br-int", flows[0].strip())
    assert _live(env, CASES[0])["live"]["agrees"]


def test_an_nft_rule_deleted_behind_the_agent_is_named_as_the_snat_that_differs(
        env: Cloud, tmp_path: Path) -> None:
    router = env.admin.get("/v2.0/routers?name=tr-r")[1]["routers"][0]
    ns = f"qrouter-{router['id']}"
    saved = sh("ip", "netns", "exec", ns, "nft", "list", "table", "ip", "neutrino_l3").stdout
    listed = sh("ip", "netns", "exec", ns, "nft", "-a", "list", "chain", "ip", "neutrino_l3",
                "postrouting").stdout
    handles = [line.rsplit("# handle ", 1)[1] for line in listed.splitlines()
               if "oifname" in line and "ip saddr {" in line and "# handle" in line]
    assert len(handles) == 1, listed
    sh("ip", "netns", "exec", ns, "nft", "delete", "rule", "ip", "neutrino_l3", "postrouting",
       "handle", handles[0])
    try:
        result = _live(env, CASES[7])
        live = result["live"]
        assert result["verdict"] == "allowed" and not live["agrees"], live
        snat = next(h for h in live["hops"] if h["kind"] == "snat")
        assert snat["translated_source"] == env.made["gateway_ip"]
        assert snat["live"]["verdict"] == "differs", snat
        assert "untranslated" in snat["live"]["detail"]
        assert any(d.startswith("snat:") for d in live["disagreements"]), live
    finally:
        script = tmp_path / "restore.nft"
        script.write_text("delete table ip neutrino_l3\n" + saved)
        sh("ip", "netns", "exec", ns, "nft", "-f", str(script))
    assert _live(env, CASES[7])["live"]["agrees"]
