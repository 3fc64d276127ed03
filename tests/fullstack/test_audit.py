"""Fullstack: ``neutrino audit`` finds what was changed on a host behind its
OVS agent's back, and ``--repair`` makes the agent put it back.

One emulated host with an OVS agent (``openvswitch`` firewall driver, so
br-int holds many flows), a DHCP agent and an L3 agent, two instances on a
VXLAN network and a router on it. The host is broken by hand (flows
deleted under the agent's cookie, a stray VIF port, a dnsmasq host entry
removed, a router's address, a port forwarding's DNAT or an extra route
removed) and audited with the server's own configuration file.
"""
from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.conftest import Client, Server
from tests.fullstack import cloud
from tests.fullstack.hosts import Fabric, Host, needs_ovs, ping, sh
from tests.waiting import wait_for

pytestmark = needs_ovs()
LOCAL_IP = "10.99.0.1"


@pytest.fixture(scope="module")
def env(fabric: Fabric, vhost: str, tmp_path_factory: pytest.TempPathFactory
        ) -> Iterator[tuple[Server, Client, Host, list[str], dict[str, Any]]]:
    server = cloud.start_server(tmp_path_factory.mktemp("fullstack-audit"), vhost,
                                "router,port_forwarding")
    try:
        admin = Client(server.url, project=uuid.uuid4().hex, roles="admin")
        host = fabric.host("1")
        cloud.add_phys_bridge(host)
        cloud.start_agent(fabric, host, cloud.agent_conf(host, vhost, LOCAL_IP,
                                                         firewall_driver="openvswitch"))
        for kind in ("dhcp", "l3"):
            cloud.start_agent(fabric, host, cloud.service_agent_conf(host, vhost, kind), kind)
        for agent_type in ("Open vSwitch agent", "DHCP agent", "L3 agent"):
            assert wait_for(lambda: cloud.agent_alive(admin, host.hostname, agent_type), 60)
        net = cloud.network(admin, "au-net", "10.140.0.0/24")
        vms = []
        for suffix in ("a1", "a2"):
            port = cloud.bound_port(admin, net, host.hostname)
            vms.append((host.instance(suffix, port), port))
            assert cloud.wait_active(admin, port["id"], 60)
        assert ping(vms[0][0], vms[1][1]["fixed_ips"][0]["ip_address"])
        status, router = admin.post("/v2.0/routers", {"router": {"name": "au-r"}})
        assert status == 201, router
        subnet = admin.get(f"/v2.0/subnets?network_id={net['id']}")[1]["subnets"][0]
        status, body = admin.put(f"/v2.0/routers/{router['router']['id']}/add_router_interface",
                                 {"subnet_id": subnet["id"]})
        assert status == 200, body
        net["router_id"] = router["router"]["id"]
        ext = cloud.external_network(admin, "au-ext", "172.24.9.0/24", "172.24.9.1")
        status, body = admin.put(f"/v2.0/routers/{net['router_id']}", {"router": {
            "external_gateway_info": {"network_id": ext["id"]}}})
        assert status == 200, body
        status, fip = admin.post("/v2.0/floatingips", {"floatingip": {
            "floating_network_id": ext["id"], "port_id": vms[0][1]["id"]}})
        assert status == 201, fip
        net["fip"] = fip["floatingip"]
        net["ext"], net["ports"] = ext, [port for _, port in vms]
        yield server, admin, host, [ns for ns, _ in vms], net
    finally:
        fabric.stop_processes()
        cloud.remove_agent_namespaces(server)
        server.stop()


def _agent_cookie_table(host: Host) -> tuple[str, str]:
    """A cookie and table of one of the agent's flows on br-int."""
    for line in host.flows("br-int"):
        fields = dict(part.split("=", 1) for part in line.replace(" ", ",").split(",")
                      if "=" in part and not part.startswith("actions"))
        if fields.get("cookie", "0x0") != "0x0" and "table" in fields:
            return fields["cookie"], fields["table"]
    raise AssertionError(host.flows("br-int"))


def _differences(server: Server) -> str:
    """The audit's lines, which must name differences (exit status 1)."""
    found = cloud.audit(server)
    assert found.returncode == 1, (found.stdout, found.stderr)
    return found.stdout


def _repair(server: Server) -> str:
    """What ``--repair`` said, which must end with no differences left."""
    repaired = cloud.audit(server, "--repair")
    assert repaired.returncode == 0, (repaired.stdout, repaired.stderr)
    return repaired.stdout


def _router_ns(net: dict[str, Any]) -> str:
    return f"qrouter-{net['router_id']}"


def _nft(ns: str, *args: str) -> str:
    return sh("ip", "netns", "exec", ns, "nft", *args, check=False).stdout


def _prerouting(ns: str) -> str:
    """The router's DNAT chain as nft lists it."""
    return _nft(ns, "list", "chain", "ip", "neutrino_l3", "prerouting")


def test_a_healthy_host_has_no_differences(env: Any) -> None:
    server, *_ = env  # the DHCP agent may still be writing the network's dnsmasq files
    cloud.wait_audit_clean(server)
    result = cloud.audit(server)
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert "no differences" in result.stdout


def test_deleted_flows_are_listed_and_repaired(env: Any) -> None:
    server, _, host, vms, _ = env
    cookie, table = _agent_cookie_table(host)
    before = len(host.flows("br-int"))
    host.ofctl("del-flows", "br-int", f"cookie={cookie}/-1,table={table}")
    assert len(host.flows("br-int")) < before
    found = _differences(server)
    assert f"{host.hostname}: br-int holds" in found and "it programmed" in found
    repaired = _repair(server)
    assert "resync asked" in repaired and "repaired: no differences" in repaired
    assert len(host.flows("br-int")) >= before
    assert cloud.audit(server).returncode == 0


def test_a_stray_port_on_br_int_is_listed(env: Any) -> None:
    server, _, host, _, _ = env
    stray = str(uuid.uuid4())
    host.vsctl("add-port", "br-int", "austray", "--", "set", "interface", "austray",
               "type=internal", f"external_ids:iface-id={stray}")
    try:
        assert f"br-int has a port for {stray}" in _differences(server)
    finally:
        host.vsctl("--if-exists", "del-port", "br-int", "austray")
    assert cloud.audit(server).returncode == 0


def test_a_removed_dnsmasq_host_entry_is_listed_and_rewritten(env: Any) -> None:
    server, _, host, _, net = env
    state = Path(f"/tmp/{host.fabric.prefix}-{host.name}-dhcp")  # cloud.service_agent_conf's
    hosts = state / "dhcp" / net["id"] / "host"
    lines = hosts.read_text().splitlines()
    assert lines, hosts
    mac = lines[0].split(",")[0]
    hosts.write_text("".join(line + "\n" for line in lines[1:]))
    assert f"dnsmasq of network {net['id']} has no host entry {mac}" in _differences(server)
    assert "resync asked of the DHCP agent" in _repair(server)
    assert mac in hosts.read_text()


def test_a_removed_router_address_is_listed_and_put_back(env: Any) -> None:
    server, _, _, _, net = env
    ns = _router_ns(net)
    assert wait_for(lambda: "10.140.0.1/24" in sh("ip", "-n", ns, "-o", "addr").stdout, 60)
    device = next(line.split()[1] for line in sh("ip", "-n", ns, "-o", "addr").stdout.splitlines()
                  if "10.140.0.1/24" in line)
    sh("ip", "-n", ns, "addr", "del", "10.140.0.1/24", "dev", device)
    assert f"router {net['router_id']} lacks address 10.140.0.1" in _differences(server)
    assert "resync asked of the L3 agent" in _repair(server)
    assert "10.140.0.1/24" in sh("ip", "-n", ns, "-o", "addr").stdout


def test_a_removed_floating_ip_translation_is_listed_and_put_back(env: Any) -> None:
    server, _, _, _, net = env
    ns = _router_ns(net)
    fip = net["fip"]
    dnat = f"dnat to {fip['fixed_ip_address']}"
    assert wait_for(lambda: dnat in _prerouting(ns), 60)
    sh("ip", "netns", "exec", ns, "nft", "flush", "chain", "ip", "neutrino_l3", "prerouting")
    assert (f"router {net['router_id']} lacks NAT dnat {fip['floating_ip_address']} "
            f"to {fip['fixed_ip_address']}") in _differences(server)
    assert "resync asked of the L3 agent" in _repair(server)
    assert dnat in _prerouting(ns)


def test_a_deleted_dhcp_namespace_is_listed_and_made_again(env: Any) -> None:
    """The host loses a network's ``qdhcp-`` namespace and its dnsmasq (as
    after an operator's ``ip netns delete``): the audit names both, and the
    repair has the agent build them again."""
    server, _, _, _, net = env
    ns = f"qdhcp-{net['id']}"
    cloud.delete_namespace(ns)
    found = _differences(server)
    assert f"namespace {ns} is missing" in found
    assert f"dnsmasq of network {net['id']} is not running" in found
    assert "resync asked of the DHCP agent" in _repair(server)
    assert ns in sh("ip", "netns", "list").stdout


def test_a_removed_port_forwarding_dnat_is_listed_and_put_back(env: Any) -> None:
    """A port forwarding reaches the agent as a DNAT with its ports; the
    rule deleted by hand is named by the audit and written again by the repair."""
    server, admin, _, _, net = env
    ns = _router_ns(net)
    status, fip = admin.post("/v2.0/floatingips", {"floatingip": {
        "floating_network_id": net["ext"]["id"]}})
    assert status == 201, fip
    fip = fip["floatingip"]
    port = net["ports"][1]
    internal = port["fixed_ips"][0]["ip_address"]
    status, body = admin.post(f"/v2.0/floatingips/{fip['id']}/port_forwardings", {
        "port_forwarding": {"protocol": "tcp", "internal_port_id": port["id"],
                            "internal_ip_address": internal, "internal_port": 22,
                            "external_port": 2222}})
    assert status == 201, body
    dnat = f"tcp dport 2222 dnat to {internal}:22"
    assert wait_for(lambda: dnat in _prerouting(ns), 60)
    cloud.wait_audit_clean(server)
    listed = _nft(ns, "-a", "list", "chain", "ip", "neutrino_l3", "prerouting")
    handle = next(line.rsplit("# handle ", 1)[1] for line in listed.splitlines()
                  if dnat in line)
    sh("ip", "netns", "exec", ns, "nft", "delete", "rule", "ip", "neutrino_l3", "prerouting",
       "handle", handle)
    assert (f"router {net['router_id']} lacks NAT dnat tcp {fip['floating_ip_address']}:2222 "
            f"to {internal}:22") in _differences(server)
    _repair(server)
    assert dnat in _prerouting(ns)


def test_a_removed_extra_route_is_listed_and_put_back(env: Any) -> None:
    server, admin, _, _, net = env
    ns = _router_ns(net)
    nexthop = net["ports"][1]["fixed_ips"][0]["ip_address"]
    status, body = admin.put(f"/v2.0/routers/{net['router_id']}", {"router": {
        "routes": [{"destination": "10.141.0.0/24", "nexthop": nexthop}]}})
    assert status == 200, body
    route = f"10.141.0.0/24 via {nexthop}"
    assert wait_for(lambda: route in sh("ip", "-n", ns, "route").stdout, 60)
    cloud.wait_audit_clean(server)
    sh("ip", "-n", ns, "route", "del", "10.141.0.0/24", "via", nexthop)
    assert f"router {net['router_id']} lacks route {route}" in _differences(server)
    _repair(server)
    assert route in sh("ip", "-n", ns, "route").stdout
