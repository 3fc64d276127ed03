"""The tracer's pure model: paths and verdicts from facts alone."""
from __future__ import annotations

from typing import Any

from neutrino.plugins.trace.model import Facts, Packet, trace

NET, SUB = "net-a", "sub-a"


def _port(pid: str, ip: str, groups: tuple[str, ...] = ("sg",), **attrs: Any) -> dict[str, Any]:
    return {"id": pid, "network_id": NET, "fixed_ips": [{"subnet_id": SUB, "ip_address": ip}],
            "security_groups": list(groups), "device_owner": "compute:nova", **attrs}


def _rule(rid: str, direction: str, **attrs: Any) -> dict[str, Any]:
    return {"id": rid, "security_group_id": "sg", "direction": direction,
            "ethertype": "IPv4", "protocol": None, "port_range_min": None,
            "port_range_max": None, "remote_ip_prefix": None, "remote_group_id": None,
            **attrs}


SUBNETS = [{"id": SUB, "network_id": NET, "cidr": "10.0.0.0/24", "gateway_ip": "10.0.0.1"}]
EGRESS = _rule("out", "egress")


def test_remote_ip_prefix_decides_which_sources_an_ingress_rule_admits() -> None:
    facts = Facts(ports=[_port("a", "10.0.0.5"), _port("b", "10.0.0.6")], subnets=SUBNETS,
                  rules=[EGRESS, _rule("in", "ingress", remote_ip_prefix="10.0.0.6/32")])
    assert trace(facts, Packet("10.0.0.5", "icmp", port_id="b")).verdict == "allowed"
    denied = trace(facts, Packet("10.0.0.6", "icmp", port_id="a"))
    assert denied.verdict == "denied" and denied.hops[-1]["port_id"] == "b"


def test_no_egress_rule_stops_the_packet_at_its_source() -> None:
    facts = Facts(ports=[_port("a", "10.0.0.5"), _port("b", "10.0.0.6")], subnets=SUBNETS,
                  rules=[_rule("in", "ingress")])
    result = trace(facts, Packet("10.0.0.6", "tcp", 80, port_id="a"))
    assert result.verdict == "denied" and "no egress rule" in result.reason
    assert result.hops[-1]["kind"] == "security_group_egress"


def test_port_security_off_skips_groups_on_both_ends() -> None:
    facts = Facts(ports=[_port("a", "10.0.0.5", (), port_security_enabled=False),
                         _port("b", "10.0.0.6", (), port_security_enabled=False)],
                  subnets=SUBNETS, rules=[])
    result = trace(facts, Packet("10.0.0.6", "udp", 53, port_id="a", source_ip="10.0.0.99"))
    assert result.verdict == "allowed"


def test_an_icmp_rule_for_another_type_does_not_admit_a_ping() -> None:
    facts = Facts(ports=[_port("a", "10.0.0.5"), _port("b", "10.0.0.6")], subnets=SUBNETS,
                  rules=[EGRESS, _rule("in", "ingress", protocol="icmp", port_range_min=0)])
    assert trace(facts, Packet("10.0.0.6", "icmp", port_id="a")).verdict == "denied"


def test_off_subnet_without_a_router_is_unreachable() -> None:
    facts = Facts(ports=[_port("a", "10.0.0.5")], subnets=SUBNETS, rules=[EGRESS])
    result = trace(facts, Packet("192.0.2.1", "icmp", port_id="a"))
    assert result.verdict == "unreachable" and "no router" in result.reason


def test_an_extra_route_hands_the_packet_to_its_next_hop() -> None:
    interface = {"id": "ri", "network_id": NET, "device_owner": "network:router_interface",
                 "device_id": "r", "fixed_ips": [{"subnet_id": SUB, "ip_address": "10.0.0.1"}]}
    router = {"id": "r", "routes": [{"destination": "192.0.2.0/24", "nexthop": "10.0.0.9"}],
              "external_gateway_info": None}
    facts = Facts(ports=[_port("a", "10.0.0.5"), interface], subnets=SUBNETS, rules=[EGRESS],
                  routers=[router])
    result = trace(facts, Packet("192.0.2.1", "icmp", port_id="a"))
    assert result.verdict == "allowed" and result.hops[-1]["nexthop"] == "10.0.0.9"
