"""``POST /v2.0/trace`` (``neutrino-trace``): the traced path and verdict of a
packet, over real HTTP against resources made through the API."""
from __future__ import annotations

import json
import subprocess
import sys
import uuid
from typing import Any, Iterator

import pytest

from tests.conftest import Client, Server

EXTRA = ("service_plugins = router,trace\n"
         "[ml2]\nextension_drivers = port_security\nmechanism_drivers = openvswitch\n")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("trace"), extra=EXTRA).start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def admin(server: Server) -> Client:
    return Client(server.url, project=uuid.uuid4().hex, roles="admin")


def _made(client: Client, plural: str, singular: str, **attrs: Any) -> dict[str, Any]:
    status, body = client.post(f"/v2.0/{plural}", {singular: attrs})
    assert status == 201, body
    return dict(body[singular])


def _net(admin: Client, cidr: str, **attrs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    net = _made(admin, "networks", "network", name=f"tr-{cidr}", **attrs)
    sub = _made(admin, "subnets", "subnet", network_id=net["id"], ip_version=4, cidr=cidr)
    return net, sub


def _port(admin: Client, net: dict[str, Any], **attrs: Any) -> dict[str, Any]:
    return _made(admin, "ports", "port", network_id=net["id"], **attrs)


def _ip(port: dict[str, Any]) -> str:
    return str(port["fixed_ips"][0]["ip_address"])


def _trace(admin: Client, **packet: Any) -> dict[str, Any]:
    status, body = admin.post("/v2.0/trace", {"trace": packet})
    assert status == 200, body
    return dict(body["trace"])


@pytest.fixture(scope="module")
def lan(admin: Client) -> dict[str, Any]:
    net, sub = _net(admin, "10.120.0.0/24")
    return net


def test_extension_is_listed(admin: Client) -> None:
    status, body = admin.get("/v2.0/extensions/neutrino-trace")
    assert status == 200, body


def test_default_group_allows_ping_between_its_members_naming_both_rules(
        admin: Client, lan: dict[str, Any]) -> None:
    a, b = _port(admin, lan), _port(admin, lan)
    result = _trace(admin, port_id=a["id"], destination_ip=_ip(b), protocol="icmp")
    assert result["verdict"] == "allowed", result
    kinds = [h["kind"] for h in result["hops"]]
    assert kinds == ["source", "port_security", "security_group_egress", "network",
                     "destination_port", "security_group_ingress"]
    assert result["hops"][-1]["security_group_rule_id"]
    assert result["hops"][-2]["port_id"] == b["id"]


def test_group_without_ingress_rule_denies_tcp_and_says_so(
        admin: Client, lan: dict[str, Any]) -> None:
    web = _made(admin, "security-groups", "security_group", name="tr-web")
    server = _port(admin, lan, security_groups=[web["id"]])
    client = _port(admin, lan)
    result = _trace(admin, port_id=client["id"], destination_ip=_ip(server), protocol="tcp",
                    destination_port=5001)
    assert result["verdict"] == "denied"
    assert "no ingress rule" in result["reason"] and web["id"] in result["reason"]
    rule = _made(admin, "security-group-rules", "security_group_rule",
                 security_group_id=web["id"], direction="ingress", protocol="tcp",
                 port_range_min=5001, port_range_max=5001)
    result = _trace(admin, port_id=client["id"], destination_ip=_ip(server), protocol="tcp",
                    destination_port=5001)
    assert result["verdict"] == "allowed"
    assert result["hops"][-1]["security_group_rule_id"] == rule["id"]
    other = _trace(admin, port_id=client["id"], destination_ip=_ip(server), protocol="tcp",
                   destination_port=22)
    assert other["verdict"] == "denied"


def test_port_security_drops_a_spoofed_source_unless_an_address_pair_allows_it(
        admin: Client, lan: dict[str, Any]) -> None:
    target = _port(admin, lan)
    plain = _port(admin, lan)
    paired = _port(admin, lan, allowed_address_pairs=[{"ip_address": "10.120.0.250"}])
    spoofed = _trace(admin, port_id=plain["id"], source_ip="10.120.0.250",
                     destination_ip=_ip(target), protocol="icmp")
    assert spoofed["verdict"] == "denied" and "spoofed" in spoofed["reason"]
    allowed = _trace(admin, port_id=paired["id"], source_ip="10.120.0.250",
                     destination_ip=_ip(target), protocol="icmp")
    assert allowed["hops"][1]["kind"] == "port_security"
    assert "address pair" in allowed["hops"][1]["detail"]


def test_routed_packet_crosses_the_router_and_leaves_by_snat_or_floating_ip(
        admin: Client) -> None:
    ext, ext_sub = _net(admin, "172.30.9.0/24", **{"router:external": True})
    inner, inner_sub = _net(admin, "10.121.0.0/24")
    other, other_sub = _net(admin, "10.122.0.0/24")
    router = _made(admin, "routers", "router", name="tr-r",
                   external_gateway_info={"network_id": ext["id"]})
    for sub in (inner_sub, other_sub):
        status, body = admin.put(f"/v2.0/routers/{router['id']}/add_router_interface",
                                 {"subnet_id": sub["id"]})
        assert status == 200, body
    gateway = router["external_gateway_info"]["external_fixed_ips"][0]["ip_address"]
    vm = _port(admin, inner)
    peer = _port(admin, other)
    across = _trace(admin, port_id=vm["id"], destination_ip=_ip(peer), protocol="icmp")
    assert across["verdict"] == "allowed", across
    assert [h["kind"] for h in across["hops"]][3:5] == ["router_interface", "route"]
    out = _trace(admin, port_id=vm["id"], destination_ip="172.30.9.200", protocol="tcp",
                 destination_port=80)
    assert out["verdict"] == "allowed"
    snat = [h for h in out["hops"] if h["kind"] == "snat"]
    assert snat and snat[0]["translated_source"] == gateway
    fip = _made(admin, "floatingips", "floatingip", floating_network_id=ext["id"],
                port_id=vm["id"])
    out = _trace(admin, port_id=vm["id"], destination_ip="172.30.9.200", protocol="icmp")
    nat = [h for h in out["hops"] if h["kind"] == "floating_ip"]
    assert nat and nat[0]["translated_source"] == fip["floating_ip_address"]
    from_fip = _trace(admin, source_ip=fip["floating_ip_address"],
                      destination_ip="172.30.9.200", protocol="icmp")
    assert from_fip["hops"][0]["port_id"] == vm["id"]  # the floating IP's port sends
    assert [h["translated_source"] for h in from_fip["hops"] if h["kind"] == "floating_ip"] == [
        fip["floating_ip_address"]]
    inbound = _trace(admin, source_ip="172.30.9.200",
                     destination_ip=fip["floating_ip_address"], protocol="tcp",
                     destination_port=22)
    assert inbound["hops"][1]["translated_destination"] == _ip(vm)
    assert inbound["verdict"] == "denied"  # the default group admits only its members
    assert "no ingress rule" in inbound["reason"]


def test_refusals_are_neutron_errors(server: Server, admin: Client,
                                     lan: dict[str, Any]) -> None:
    port = _port(admin, lan)
    member = Client(server.url, project=uuid.uuid4().hex, roles="member")
    status, body = member.post("/v2.0/trace", {"trace": {
        "port_id": port["id"], "destination_ip": "10.120.0.9", "protocol": "icmp"}})
    assert status == 403, body
    cases = [
        ({"port_id": port["id"], "destination_ip": "10.120.0.9", "protocol": "gre"}, 400),
        ({"port_id": port["id"], "destination_ip": "nope", "protocol": "icmp"}, 400),
        ({"destination_ip": "10.120.0.9", "protocol": "icmp"}, 400),
        ({"port_id": port["id"], "source_ip": "fd00::1", "destination_ip": "10.120.0.9",
          "protocol": "icmp"}, 400),
        ({"port_id": port["id"], "destination_ip": "10.120.0.9", "protocol": "tcp",
          "destination_port": 70000}, 400),
        ({"port_id": str(uuid.uuid4()), "destination_ip": "10.120.0.9", "protocol": "icmp"},
         404),
        ({"source_ip": "10.0.0.1", "destination_ip": "10.120.0.9", "protocol": "icmp",
          "color": "red"}, 400),
        ({"port_id": port["id"], "destination_ip": "10.120.0.9", "protocol": "icmp",
          "live": "maybe"}, 400),
    ]
    for packet, code in cases:
        status, body = admin.post("/v2.0/trace", {"trace": packet})
        assert status == code, (packet, body)
        assert set(body["NeutronError"]) == {"type", "message", "detail"}
    status, body = admin.post("/v2.0/trace", [1])
    assert status == 400, body


def _cli(server: Server, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "neutrino.cmd.main", "trace", "--url",
                           server.url, *args], capture_output=True, text=True, timeout=60)


def test_cli_prints_the_hops_and_exits_with_the_verdict(
        server: Server, admin: Client, lan: dict[str, Any]) -> None:
    guarded = _made(admin, "security-groups", "security_group", name="tr-cli")
    target = _port(admin, lan, security_groups=[guarded["id"]])
    source = _port(admin, lan)
    denied = _cli(server, "--port", source["id"], "--to", _ip(target), "--protocol", "tcp",
                  "--dport", "443")
    assert denied.returncode == 1, denied.stderr
    assert "verdict: denied" in denied.stdout and "no ingress rule" in denied.stdout
    assert "security_group_egress" in denied.stdout
    _made(admin, "security-group-rules", "security_group_rule",
          security_group_id=guarded["id"], direction="ingress", protocol="tcp",
          port_range_min=443, port_range_max=443)
    allowed = _cli(server, "--port", source["id"], "--to", _ip(target), "--protocol", "tcp",
                   "--dport", "443", "--json")
    assert allowed.returncode == 0, allowed.stderr
    assert json.loads(allowed.stdout)["trace"]["verdict"] == "allowed"
    refused = _cli(server, "--port", source["id"], "--to", "not-an-address")
    assert refused.returncode == 2 and "400" in refused.stderr


def test_live_without_hosts_to_ask_says_why_beside_each_hop(
        server: Server, admin: Client, lan: dict[str, Any]) -> None:
    """Ports bound to no host: the model answers, and the live part names
    the hosts it could not ask instead of claiming they agree."""
    a, b = _port(admin, lan), _port(admin, lan)
    result = _trace(admin, port_id=a["id"], destination_ip=_ip(b), protocol="icmp", live=True)
    assert result["verdict"] == "allowed"
    live = result["live"]
    assert not live["agrees"]
    assert [h["kind"] for h in live["hops"]] == [h["kind"] for h in result["hops"]]
    assert all(h["model"] == "passed" and h["live"]["verdict"] == "unknown"
               for h in live["hops"])
    assert {d for d in live["disagreements"]} == {
        "source: the source port is bound to no host",
        "destination: the destination port is bound to no host"}
    assert live["by_host"] == {"no host": live["disagreements"]}
    assert "live" not in _trace(admin, port_id=a["id"], destination_ip=_ip(b), protocol="icmp",
                                live=False)


def test_cli_live_shows_both_verdicts_per_hop_and_exits_3_on_disagreement(
        server: Server, admin: Client, lan: dict[str, Any]) -> None:
    a, b = _port(admin, lan), _port(admin, lan)
    done = _cli(server, "--port", a["id"], "--to", _ip(b), "--live")
    assert done.returncode == 3, (done.stdout, done.stderr)
    assert "model: passed" in done.stdout and "host: unknown" in done.stdout
    assert "DISAGREES (no host): source: the source port is bound to no host" in done.stdout
