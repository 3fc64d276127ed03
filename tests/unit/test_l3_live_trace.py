"""The L3 agent's side of ``trace --live`` (``agents/l3/live_trace.py``): a
router's NAT table as ``nft -j`` lists it and a route lookup in, the
router's DNAT, route and SNAT for one packet out, each naming what
decided it."""
from __future__ import annotations

from typing import Any

import pytest

from neutrino.agents.l3 import live_trace, model

# a router's table as the agent writes it with a floating IP, a port forwarding
# and SNAT:
#
#   table ip neutrino_l3 {
#     chain mangle_prerouting {
#       type filter hook prerouting priority mangle; policy accept;
#       iifname "qg-gw" meta mark set 0x2
#     }
#     chain prerouting {
#       type nat hook prerouting priority dstnat; policy accept;
#       ip daddr 172.30.0.20 tcp dport 80 dnat to 10.5.0.9:8080
#       ip daddr 172.30.0.21 dnat to 10.5.0.9
#     }
#     chain postrouting {
#       type nat hook postrouting priority srcnat; policy accept;
#       rt ipsec exists accept
#       ip saddr 10.5.0.9 oifname "qg-gw" snat to 172.30.0.21
#       oifname "qg-gw" ip saddr { 10.5.0.0/24, 10.7.0.0/24 } snat to 172.30.0.5
#       meta mark != 0x2 ct status dnat snat to 172.30.0.5
#     }
#   }
#
# and ``nft -j list table ip neutrino_l3``'s answer for it (handles left out),
# built from the pieces nft's JSON repeats.


def _match(left: dict[str, Any], right: Any, op: str = "==") -> dict[str, Any]:
    return {"match": {"op": op, "left": left, "right": right}}


def _payload(protocol: str, name: str) -> dict[str, Any]:
    return {"payload": {"protocol": protocol, "field": name}}


def _meta(key: str) -> dict[str, Any]:
    return {"meta": {"key": key}}


def _prefix(addr: str, length: int) -> dict[str, Any]:
    return {"prefix": {"addr": addr, "len": length}}


def _chain(name: str, kind: str, hook: str, prio: int) -> dict[str, Any]:
    return {"chain": {"family": "ip", "table": "neutrino_l3", "name": name, "type": kind,
                      "hook": hook, "prio": prio, "policy": "accept"}}


def _rule(chain: str, *expr: dict[str, Any]) -> dict[str, Any]:
    return {"rule": {"family": "ip", "table": "neutrino_l3", "chain": chain,
                     "expr": list(expr)}}


RULESET = {"nftables": [
    {"table": {"family": "ip", "name": "neutrino_l3"}},
    _chain("mangle_prerouting", "filter", "prerouting", -150),
    _chain("prerouting", "nat", "prerouting", -100),
    _chain("postrouting", "nat", "postrouting", 100),
    _rule("mangle_prerouting", _match(_meta("iifname"), "qg-gw"),
          {"mangle": {"key": _meta("mark"), "value": 2}}),
    _rule("prerouting", _match(_payload("ip", "daddr"), "172.30.0.20"),
          _match(_payload("tcp", "dport"), 80), {"dnat": {"addr": "10.5.0.9", "port": 8080}}),
    _rule("prerouting", _match(_payload("ip", "daddr"), "172.30.0.21"),
          {"dnat": {"addr": "10.5.0.9"}}),
    _rule("postrouting", _match({"rt": {"key": "ipsec"}}, True), {"accept": None}),
    _rule("postrouting", _match(_payload("ip", "saddr"), "10.5.0.9"),
          _match(_meta("oifname"), "qg-gw"), {"snat": {"addr": "172.30.0.21"}}),
    _rule("postrouting", _match(_meta("oifname"), "qg-gw"),
          _match(_payload("ip", "saddr"), {"set": [_prefix("10.5.0.0", 24),
                                                   _prefix("10.7.0.0", 24)]}),
          {"snat": {"addr": "172.30.0.5"}}),
    _rule("postrouting", _match(_meta("mark"), 2, "!="),
          _match({"ct": {"key": "status"}}, "dnat", "in"), {"snat": {"addr": "172.30.0.5"}}),
]}
ROUTES = {"10.5.0.9": {"dev": "qr-in"}, "default": {"dev": "qg-gw", "gateway": "172.30.0.1"}}


def route(destination: str, source: str, iif: str) -> dict[str, Any]:
    if destination.startswith("10.5."):
        return ROUTES["10.5.0.9"]
    if destination.startswith("10."):
        raise LookupError("Network is unreachable")
    return ROUTES["default"]


def _decide(src: str, dst: str, iif: str, protocol: str = "icmp", dport: int | None = None,
            ruleset: dict[str, Any] | None = RULESET) -> dict[str, Any]:
    packet = {"nw_src": src, "nw_dst": dst, "protocol": protocol, "destination_port": dport}
    return live_trace.decide(ruleset, route, packet, iif)


def _kinds(answer: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {h["kind"]: h for h in answer["hops"]}


def test_an_instance_leaving_by_the_gateway_is_snated_by_the_subnets_rule() -> None:
    answer = _decide("10.5.0.7", "8.8.8.8", "qr-in")
    assert answer["verdict"] == "forwarded" and answer["device"] == "qg-gw"
    kinds = _kinds(answer)
    assert "translated_destination" not in kinds["dnat"]
    assert kinds["route"]["gateway"] == "172.30.0.1"
    assert kinds["snat"]["translated_source"] == "172.30.0.5"
    assert kinds["snat"]["rule"] == ('oifname qg-gw ip saddr { 10.5.0.0/24, 10.7.0.0/24 } '
                                     'snat to 172.30.0.5')


def test_a_floating_ip_s_port_leaves_as_its_floating_ip() -> None:
    assert _decide("10.5.0.9", "8.8.8.8", "qr-in")["source"] == "172.30.0.21"


def test_an_outside_packet_to_a_floating_ip_is_dnated_and_keeps_its_source() -> None:
    answer = _decide("198.51.100.7", "172.30.0.21", "qg-gw")
    kinds = _kinds(answer)
    assert kinds["dnat"]["translated_destination"] == "10.5.0.9"
    assert kinds["route"]["device"] == "qr-in"
    # marked as come from outside: the hairpin SNAT does not apply
    assert "translated_source" not in kinds["snat"]
    assert answer["source"] == "198.51.100.7"


@pytest.mark.parametrize(("dport", "expected"), [(80, "10.5.0.9"), (22, None)])
def test_a_port_forwarding_matches_its_protocol_and_port_only(
        dport: int, expected: str | None) -> None:
    answer = _decide("198.51.100.7", "172.30.0.20", "qg-gw", "tcp", dport)
    assert answer["hops"][0].get("translated_destination") == expected


def test_an_instance_reaching_a_floating_ip_is_hairpinned_through_the_gateway_ip() -> None:
    answer = _decide("10.7.0.4", "172.30.0.21", "qr-in")
    assert answer["destination"] == "10.5.0.9" and answer["source"] == "172.30.0.5"


def test_no_route_is_a_drop_at_the_route_step() -> None:
    answer = _decide("10.5.0.7", "10.9.0.1", "qr-in")
    assert answer["verdict"] == "dropped"
    assert answer["dropped_at"] == {"stage": "route", "detail": "Network is unreachable"}


def test_a_router_without_a_nat_table_translates_nothing() -> None:
    answer = _decide("10.5.0.7", "8.8.8.8", "qr-in", ruleset=None)
    assert answer["source"] == "10.5.0.7" and answer["verdict"] == "forwarded"


# -- which namespace and device a question concerns ---------------------------------

ROUTER_ID = "7f3c1a2b-0000-4000-8000-000000000001"
PORT_ID = "2d4e6f80-0000-4000-8000-000000000002"


@pytest.mark.parametrize(("asked", "namespace", "device"), [
    ({}, f"qrouter-{ROUTER_ID}", "qr-2d4e6f80-00"),
    ({"from_gateway": True}, f"qrouter-{ROUTER_ID}", "qg-2d4e6f80-00"),
    ({"namespace": "qrouter", "from_fip": True}, f"qrouter-{ROUTER_ID}", "rfp-7f3c1a2b-0"),
    ({"namespace": "snat"}, f"snat-{ROUTER_ID}", "sg-2d4e6f80-00"),
    ({"namespace": "snat", "from_gateway": True}, f"snat-{ROUTER_ID}", "qg-2d4e6f80-00"),
    ({"namespace": "fip", "external_network_id": "ext-net", "from_gateway": True},
     "fip-ext-net", "fg-2d4e6f80-00"),
    ({"namespace": "fip", "external_network_id": "ext-net"}, "fip-ext-net", "fpr-7f3c1a2b-0"),
])
def test_a_question_is_traced_in_the_namespace_and_device_it_names(
        asked: dict[str, Any], namespace: str, device: str) -> None:
    packet = {"router_id": ROUTER_ID, "in_port_id": PORT_ID, **asked}
    assert live_trace.entering(packet) == (namespace, device)


def test_the_namespace_names_are_the_agent_s_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """An agent naming its namespaces otherwise (the fullstack suite's
    ``@host``) is asked about its own."""
    plain = model.namespace_name
    monkeypatch.setattr(model, "namespace_name",
                        lambda rid, prefix=model.NS_PREFIX: f"{plain(rid, prefix)}@node-2")
    assert live_trace.entering({"router_id": ROUTER_ID, "namespace": "snat",
                                "in_port_id": PORT_ID})[0] == f"snat-{ROUTER_ID}@node-2"


def test_an_unknown_namespace_kind_is_an_error_not_a_trace() -> None:
    answer = live_trace.trace({"router_id": ROUTER_ID, "namespace": "qlbaas", "in_port_id": "p"})
    assert answer == {"error": "no router namespace of kind 'qlbaas'"}
