"""The OVS agent's ``fwaas_v2`` extension, at the plan: a firewall group on an
instance port adds its own tables after the security groups' (a packet
must pass both), with the L3 side's rule semantics, and its status."""
from __future__ import annotations

from typing import Any, Sequence

from neutrino.agents.l3.fwaas import Rule
from neutrino.agents.ovs import fwaas, plan
from neutrino.agents.ovs.flows import Flow
from neutrino.agents.ovs.switch import VifPort

SETTINGS = plan.Settings(firewall=True, fwaas=True, cookie=0x7)
ZONE = fwaas.ZONE_BASE + 5


def _info(port_security: bool = True) -> dict[str, Any]:
    dev = {"id": "p1", "device": "p1", "mac_address": "fa:16:3e:00:00:01",
           "fixed_ips": ["10.0.0.5"], "port_security_enabled": port_security,
           "allowed_address_pairs": [], "security_groups": ["sg"],
           "security_group_source_groups": []}
    return {"devices": {"p1": dev}, "sg_member_ips": {},
            "security_groups": {"sg": [
                {"direction": "egress", "ethertype": "IPv4", "stateful": True},
                {"direction": "ingress", "ethertype": "IPv4", "protocol": "tcp",
                 "port_range_min": 22, "port_range_max": 22, "stateful": True}]}}


def _rule(action: str = "allow", **attrs: Any) -> dict[str, Any]:
    return {"ip_version": 4, "protocol": None, "source_ip_address": None,
            "destination_ip_address": None, "source_port": None, "destination_port": None,
            "enabled": True, "action": action, **attrs}


def _group(ingress: Sequence[dict[str, Any]] = (), egress: Sequence[dict[str, Any]] = (),
           **attrs: Any) -> dict[str, Any]:
    return {"id": "fwg", "ports": ["p1"], "admin_state_up": True,
            "ingress_rule_list": list(ingress), "egress_rule_list": list(egress), **attrs}


def _plan(groups: list[dict[str, Any]], settings: plan.Settings = SETTINGS,
          port_security: bool = True) -> plan.Plan:
    vif = VifPort("tap1", "p1", "fa:16:3e:00:00:01", 5, None, {})
    seen = plan.Observed({"p1": vif}, full=True, firewall_groups=fwaas.by_port(groups))
    details = {"device": "p1", "port_id": "p1", "network_id": "n", "network_type": "flat",
               "segmentation_id": None, "physical_network": "physnet1",
               "admin_state_up": True}
    return plan.plan(settings, plan.Known(), seen, plan.Answers(
        [details], security=_info(port_security)))


def _then(flow: Flow) -> str:
    """Where an accepting flow sends the packet: its last action."""
    at = flow.actions.rfind("resubmit(")
    return flow.actions[at:] if at >= 0 else flow.actions.rsplit(",", 1)[-1]


def _flows(p: plan.Plan, *tables: int) -> list[Flow]:
    return sorted(f for c in p.flows if c.bridge == "br-int" for f in c.add
                  if not tables or f.table in tables)


def test_a_grouped_ports_accepted_packets_go_on_to_the_groups_tables() -> None:
    flows = _flows(_plan([_group(egress=[_rule()])]), 72, 82)
    accepting = [f for f in flows if f.priority in (70, 100)]
    egress = {_then(f) for f in accepting if f.table == 72}
    ingress = {_then(f) for f in accepting if f.table == 82}
    assert egress == {"resubmit(,74)"} and ingress == {"resubmit(,84)"}


def test_a_port_in_no_group_is_switched_or_output_after_its_security_groups() -> None:
    p = _plan([])
    accepting = [f for f in _flows(p, 72, 82) if f.priority in (70, 100)]
    assert {_then(f) for f in accepting} == {"resubmit(,73)", "output:tap1"}
    assert not [f for f in _flows(p, 74, 75, 84, 85) if "tap1" in f.match]
    assert p.firewall_statuses == {}


def test_a_groups_rules_judge_each_initiators_packet_in_order_in_its_own_zone() -> None:
    rules = [_rule("deny", protocol="tcp", destination_port="22"),
             _rule("allow", protocol="tcp", source_ip_address="10.1.0.0/16"),
             _rule("allow", enabled=False), _rule("reject", protocol="udp")]
    p = _plan([_group(ingress=rules)])
    assert _flows(p, 84) == [
        Flow(84, 0, "", "drop"),
        Flow(84, 100, "reg5=5,ip", f"ct(table=85,zone={ZONE})"),
        Flow(84, 100, "reg5=5,ipv6", f"ct(table=85,zone={ZONE})")]
    judged = "ct_state=-rpl-inv+trk,reg5=5"
    assert _flows(p, 85) == sorted([
        Flow(85, 0, "", "drop"),
        Flow(85, 60000, f"{judged},tcp,tp_dst=22", "drop"),
        Flow(85, 59999, f"{judged},tcp,nw_src=10.1.0.0/16",
             f"ct(commit,zone={ZONE}),output:tap1"),
        Flow(85, 59998, f"{judged},udp", "drop"),  # the disabled rule is skipped
        Flow(85, 60001, "ct_state=+rel-inv+trk,reg5=5", "output:tap1"),
        Flow(85, 60002, "ct_state=+est+rpl-inv+trk,reg5=5", "output:tap1"),
        Flow(85, 60010, "ct_state=+inv+trk", "drop")])
    # no egress rule: what the instance sends is dropped after its security groups
    assert not [f for f in _flows(p, 75) if "ct(commit" in f.actions]
    assert p.firewall_statuses == {"fwg": "ACTIVE"}


def test_egress_rules_let_accepted_packets_on_to_switching() -> None:
    p = _plan([_group(egress=[_rule(ip_version=6, protocol="icmp")])])
    assert Flow(75, 60000, "ct_state=-rpl-inv+trk,in_port=tap1,icmp6",
                f"ct(commit,zone={ZONE}),resubmit(,73)") in _flows(p, 75)
    assert Flow(74, 100, "in_port=tap1,ip", f"ct(table=75,zone={ZONE})") in _flows(p, 74)


def test_port_ranges_of_both_ends_become_every_pair_of_masks() -> None:
    rule = Rule(4, "udp", None, "10.0.0.9", "80:81", "1024:2047", "allow")
    assert fwaas.rule_matches(rule) == [
        "udp,nw_dst=10.0.0.9/32,tp_src=0x0050/0xfffe,tp_dst=0x0400/0xfc00"]
    rule = Rule(6, "tcp", "2001:db8::/64", None, None, "80:82", "allow")
    assert fwaas.rule_matches(rule) == ["tcp6,ipv6_src=2001:db8::/64,tp_dst=0x0050/0xfffe",
                                        "tcp6,ipv6_src=2001:db8::/64,tp_dst=82"]
    assert fwaas.rule_matches(Rule(6, None, None, None, None, None, "deny")) == ["ipv6"]


def test_a_group_set_down_drops_its_ports_ip_and_reports_down() -> None:
    p = _plan([_group(ingress=[_rule()], egress=[_rule()], admin_state_up=False)])
    assert [f for f in _flows(p, 74, 84) if f.priority] == [
        Flow(74, 100, "in_port=tap1", "drop"), Flow(84, 100, "reg5=5", "drop")]
    assert p.firewall_statuses == {"fwg": "DOWN"}


def test_without_the_extension_or_port_security_a_group_changes_nothing() -> None:
    for p in (_plan([_group(egress=[_rule()])], plan.Settings(firewall=True, cookie=0x7)),
              _plan([_group(egress=[_rule()])], port_security=False)):
        assert not [f for f in _flows(p, 74, 75, 84, 85) if "tap1" in f.match + f.actions
                    or "reg5=5" in f.match]
        assert "resubmit(,74)" not in {f.actions for f in _flows(p)}
        assert p.firewall_statuses == {}
