"""``neutrino audit``'s L3 comparison for HA and distributed routers, extra
routes and port forwardings, without hosts: what an agent reports next to
what the database says its host should hold (``cmd/audit_l3``)."""
from __future__ import annotations

from typing import Any

from neutrino.agents.l3.audit import next_hop_routes, own_id
from neutrino.cmd.audit_l3 import l3_differences

VIPS = {"10.0.0.1", "172.24.4.2", "172.24.4.9"}


def _router(addresses: set[str], role: str = "", **more: Any) -> dict[str, Any]:
    wanted: dict[str, Any] = {"addresses": addresses, "nat": {"snat to 172.24.4.2"},
                              "routes": None, "absent": set(), "keepalived": False,
                              "role": role}
    wanted.update(more)
    return wanted


def _found(addresses: set[str], **more: Any) -> dict[str, Any]:
    return {"addresses": sorted(addresses), "nat": ["snat to 172.24.4.2"], "routes": [],
            "keepalived": True, **more}


def test_an_ha_router_in_its_place_on_both_hosts_has_no_differences() -> None:
    active = {"routers": {"r1": _router(VIPS | {"169.254.192.1"}, "active", keepalived=True)}}
    standby = {"routers": {"r1": _router({"169.254.192.2"}, "standby", absent=VIPS,
                                         keepalived=True)}}
    assert l3_differences("a", active, {"routers": {
        "r1": _found(VIPS | {"169.254.192.1", "169.254.0.1"})}}) == []
    assert l3_differences("b", standby, {"routers": {"r1": _found({"169.254.192.2"})}}) == []


def test_an_active_without_a_vip_and_a_standby_holding_one_are_differences() -> None:
    active = {"routers": {"r1": _router(VIPS | {"169.254.192.1"}, "active", keepalived=True)}}
    assert l3_differences("a", active, {"routers": {
        "r1": _found({"169.254.192.1", "172.24.4.2", "172.24.4.9"})}}) == [
        "a: router r1 (active here) lacks address 10.0.0.1"]
    standby = {"routers": {"r1": _router({"169.254.192.2"}, "standby", absent=VIPS,
                                         keepalived=True)}}
    assert l3_differences("b", standby, {"routers": {
        "r1": _found({"169.254.192.2", "10.0.0.1"}, keepalived=False)}}) == [
        "b: router r1 (standby here) holds address 10.0.0.1, which only the active host "
        "may (split brain)",
        "b: router r1 (standby here): keepalived is not running"]


def test_extra_routes_missing_and_stray_are_differences_the_default_route_is_not() -> None:
    wanted = {"routers": {"r1": _router({"10.0.0.1"}, routes={"10.9.0.0/24 via 10.0.0.7"})}}
    report = {"routers": {"r1": _found({"10.0.0.1"}, routes=[
        "default via 172.24.4.1", "10.8.0.0/24 via 10.0.0.5"])}}
    assert l3_differences("h", wanted, report) == [
        "h: router r1 lacks route 10.9.0.0/24 via 10.0.0.7",
        "h: router r1 has route 10.8.0.0/24 via 10.0.0.5 it should not"]


def test_a_port_forwarding_s_missing_dnat_is_named_with_its_ports() -> None:
    rule = "dnat tcp 172.24.4.9:2222 to 10.0.0.5:22"
    wanted = {"routers": {"r1": _router({"10.0.0.1"}, nat={rule, "snat to 172.24.4.2"})}}
    assert l3_differences("h", wanted, {"routers": {"r1": _found({"10.0.0.1"})}}) == [
        f"h: router r1 lacks NAT {rule}"]


def test_a_distributed_router_s_namespaces_each_have_their_lines() -> None:
    """A compute host without its qrouter-, a network node whose snat- lost
    its SNAT, a fip- without a floating IP's route and one nobody needs."""
    compute = {"routers": {"r1": _router({"10.0.0.1"}, nat=set(), routes=set())},
               "fip": {"ext": _router({"172.24.4.20"}, nat=None,
                                      routes={"172.24.4.9/32 via 169.254.64.2"})}}
    assert l3_differences("c", compute, {"routers": {}, "snat": {}, "fip": {
        "ext": _found({"172.24.4.20"}, routes=["default via 172.24.4.1"]),
        "old": _found(set())}}) == [
        "c: namespace qrouter-r1 is missing",
        "c: fip-ext lacks route 172.24.4.9/32 via 169.254.64.2",
        "c: namespace fip-old is here but no floating IP of this host needs it"]
    node = {"routers": {"r1": _router({"10.0.0.1"}, nat=set())},
            "snat": {"r1": _router({"172.24.4.2", "10.0.0.9"})}}
    assert l3_differences("n", node, {"routers": {"r1": _found({"10.0.0.1"}, nat=[])},
                                      "snat": {"r1": _found({"172.24.4.2", "10.0.0.9"},
                                                            nat=[])}}) == [
        "n: snat-r1 lacks NAT snat to 172.24.4.2"]
    assert l3_differences("n", node, {"routers": {"r1": _found({"10.0.0.1"}, nat=[])}}) == [
        "n: namespace snat-r1 is missing"]


def test_routes_through_a_next_hop_in_audit_s_words() -> None:
    listed = [{"dst": "default", "gateway": "172.24.4.1", "dev": "qg-1"},
              {"dst": "10.0.0.0/24", "dev": "qr-1", "protocol": "kernel"},
              {"dst": "172.24.4.9", "gateway": "169.254.64.2", "dev": "fpr-1"},
              {"dst": "default", "gateway": "fe80::1", "dev": "qg-1", "protocol": "ra"}]
    assert next_hop_routes(listed) == ["172.24.4.9/32 via 169.254.64.2",
                                       "default via 172.24.4.1"]


def test_only_this_agent_s_namespaces_name_a_router() -> None:
    assert own_id("qrouter-r1", "qrouter-") == "r1"
    assert own_id("snat-r1", "snat-") == "r1"
    assert own_id("snat-r1", "qrouter-") is None
    assert own_id("qrouter-", "qrouter-") is None
