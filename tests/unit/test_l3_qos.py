"""The L3 agent's QoS extensions, pure: limits from a router and its policies, tc lines."""
from __future__ import annotations

from neutrino.agents.l3 import model, qos
from tests.l3host.routers import fip, gateway, interface, router

BOTH = frozenset(qos.EXTENSIONS)


def _desired(fip_policy: str | None, gw_policy: str | None) -> model.DesiredRouter:
    f = fip("172.24.4.20", "10.0.1.5", "")
    f["qos_policy_id"] = fip_policy
    r = router([interface("10.0.1.0/24", "10.0.1.1", "fa:16:3e:00:00:01")],
               gateway("172.24.4.0/24", "172.24.4.10", "172.24.4.1", "fa:16:3e:00:00:02"),
               fips=[f])
    r["external_gateway_info"]["qos_policy_id"] = gw_policy
    return model.desired_router(r)


POLICY = {"id": "p", "rules": [
    {"type": "bandwidth_limit", "direction": "egress", "max_kbps": 1000, "max_burst_kbps": 0},
    {"type": "bandwidth_limit", "direction": "ingress", "max_kbps": 2000,
     "max_burst_kbps": 300},
    {"type": "dscp_marking", "dscp_mark": 8}]}


def test_rates_take_bandwidth_limits_with_upstreams_default_burst() -> None:
    assert qos.rates(POLICY) == {"egress": (1000, 800), "ingress": (2000, 300)}
    assert qos.rates(None) == {} and qos.rates({"rules": [{"type": "bandwidth_limit",
                                                           "max_kbps": 0}]}) == {}


def test_floating_and_gateway_addresses_are_limited_per_extension() -> None:
    desired = _desired("p", "p")
    plan = qos.shaping(desired, {"p": POLICY}, BOTH)
    assert plan is not None and plan.device == desired.gateway_device
    assert {(x.direction, x.address) for x in plan.limits} == {
        ("egress", "172.24.4.20"), ("ingress", "172.24.4.20"),
        ("egress", "172.24.4.10"), ("ingress", "172.24.4.10")}
    only_fips = qos.shaping(desired, {"p": POLICY}, frozenset({qos.FIP_QOS}))
    assert only_fips is not None
    assert {x.address for x in only_fips.limits} == {"172.24.4.20"}
    assert qos.used_policies(desired, frozenset({qos.GATEWAY_IP_QOS})) == {"p"}
    # a policy not known (yet) limits nothing
    assert qos.shaping(desired, {}, BOTH) == qos.Shaping(desired.gateway_device or "", ())


def test_tc_lines_shape_egress_on_the_gateway_and_ingress_on_its_ifb() -> None:
    plan = qos.shaping(_desired("p", None), {"p": POLICY}, BOTH)
    assert plan is not None
    dev, ifb = plan.device, plan.ifb
    assert ifb.startswith("qi-") and ifb[3:] == dev[3:] and len(ifb) <= 15
    assert qos.tc_batch(plan).splitlines() == [
        f"qdisc add dev {dev} root handle 1: htb",
        f"class add dev {dev} parent 1: classid 1:1 htb rate 1000kbit ceil 1000kbit "
        "burst 800kbit",
        f"filter add dev {dev} parent 1: protocol ip prio 1 u32 match ip src "
        "172.24.4.20/32 flowid 1:1",
        f"qdisc add dev {dev} ingress",
        f"filter add dev {dev} parent ffff: protocol ip prio 1 u32 match ip dst "
        f"172.24.4.20/32 action mirred egress redirect dev {ifb}",
        f"qdisc add dev {ifb} root handle 1: htb",
        f"class add dev {ifb} parent 1: classid 1:1 htb rate 2000kbit ceil 2000kbit "
        "burst 300kbit",
        f"filter add dev {ifb} parent 1: protocol ip prio 1 u32 match ip dst "
        "172.24.4.20/32 flowid 1:1"]


def test_router_without_gateway_has_nothing_to_shape() -> None:
    r = router([interface("10.0.1.0/24", "10.0.1.1", "fa:16:3e:00:00:01")])
    assert qos.shaping(model.desired_router(r), {}, BOTH) is None
    assert qos.policy_ids(r, BOTH) == set()
