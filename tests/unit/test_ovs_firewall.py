"""The openvswitch firewall driver's pure core: exactly which flows a port's
security facts ask for."""
from __future__ import annotations

from typing import Any

import pytest

from neutrino.agents.ovs import firewall
from neutrino.agents.ovs.flows import Flow

MAC = "fa:16:3e:00:00:01"
LL = "fe80::f816:3eff:fe00:1"
SG, REMOTE = "sg-1", "sg-2"


def _info(**device: Any) -> dict[str, Any]:
    dev = {"id": "p1", "device": "p1", "mac_address": MAC, "fixed_ips": ["10.0.0.5"],
           "port_security_enabled": True, "allowed_address_pairs": [],
           "security_groups": [SG], "security_group_source_groups": [], **device}
    return {"devices": {"p1": dev},
            "security_groups": {SG: [
                {"direction": "egress", "ethertype": "IPv4", "stateful": True},
                {"direction": "ingress", "ethertype": "IPv4", "protocol": "tcp",
                 "port_range_min": 22, "port_range_max": 22, "stateful": True},
                {"direction": "ingress", "ethertype": "IPv4", "remote_group_id": REMOTE,
                 "stateful": True}]},
            "sg_member_ips": {REMOTE: {"IPv4": [["10.0.0.7", None], ["10.0.0.9", None]]}}}


def _port(**device: Any) -> firewall.PortSecurity:
    port = firewall.from_info(_info(**device), "p1", "tap1", 5, 3)
    assert port is not None
    return port


def test_driver_names_include_upstreams_class_paths_and_reject_others() -> None:
    assert firewall.driver_name("openvswitch") == "openvswitch"
    assert firewall.driver_name(
        "neutron.agent.linux.openvswitch_firewall:OVSFirewallDriver") == "openvswitch"
    assert firewall.driver_name("noop") == "noop"
    assert firewall.driver_name(None) == "noop"
    with pytest.raises(ValueError):
        firewall.driver_name("iptables_hybrid")


def test_ports_without_port_security_or_unknown_to_the_server_are_not_filtered() -> None:
    assert firewall.from_info(_info(port_security_enabled=False), "p1", "tap1", 5, 3) is None
    assert firewall.from_info(_info(), "other", "tap1", 5, 3) is None


def test_remote_group_rules_become_one_rule_per_member_address() -> None:
    port = _port()
    assert {"direction": "ingress", "ethertype": "IPv4", "stateful": True,
            "source_ip_prefix": "10.0.0.7/32"} in port.rules
    assert {"direction": "ingress", "ethertype": "IPv4", "stateful": True,
            "source_ip_prefix": "10.0.0.9/32"} in port.rules
    assert not [r for r in port.rules if "remote_group_id" in r]


def test_allowed_addresses_are_fixed_ips_link_local_and_address_pairs() -> None:
    port = _port(allowed_address_pairs=[{"ip_address": "10.9.0.0/24", "mac_address": None},
                                        {"ip_address": "10.8.0.1",
                                         "mac_address": "fa:16:3e:99:99:99"}])
    assert port.addresses == ((MAC, "10.0.0.5"), (MAC, LL), (MAC, "10.9.0.0/24"),
                              ("fa:16:3e:99:99:99", "10.8.0.1"))


def test_port_ranges_are_covered_by_the_fewest_masks() -> None:
    assert firewall.port_masks(22, 22) == ["22"]
    assert firewall.port_masks(1024, 2047) == ["0x0400/0xfc00"]
    assert firewall.port_masks(80, 82) == ["0x0050/0xfffe", "82"]
    assert firewall.port_masks(0, 65535) == ["0x0000/0x0000"]


@pytest.mark.parametrize("rule,matches", [
    ({"ethertype": "IPv4"}, ["ip"]),
    ({"ethertype": "IPv6", "protocol": "tcp", "port_range_min": 80, "port_range_max": 81},
     ["tcp6,tp_dst=0x0050/0xfffe"]),
    ({"ethertype": "IPv4", "protocol": "icmp", "port_range_min": 8, "port_range_max": 0},
     ["icmp,icmp_type=8,icmp_code=0"]),
    ({"ethertype": "IPv6", "protocol": "ipv6-icmp"}, ["icmp6"]),
    ({"ethertype": "IPv4", "protocol": "udp", "source_ip_prefix": "10.1.2.3/16"},
     ["udp,nw_src=10.1.0.0/16"]),
    ({"ethertype": "IPv4", "protocol": "vrrp", "dest_ip_prefix": "10.0.0.0/8"},
     ["ip,nw_proto=112,nw_dst=10.0.0.0/8"]),
    ({"ethertype": "IPv4", "protocol": "47"}, ["ip,nw_proto=47"]),
])
def test_rule_matches(rule: dict[str, Any], matches: list[str]) -> None:
    assert firewall.rule_matches(rule) == matches


def test_a_filtered_port_gets_exactly_these_flows() -> None:
    got = firewall.firewall_flows([_port()], [("tap-dhcp", 3)])
    ct_new = "ct_state=+new-est-inv+trk"
    expected = {
        # defaults
        Flow(73, 0, "", "NORMAL"), Flow(72, 0, "", "drop"), Flow(82, 0, "", "drop"),
        Flow(72, 110, "ct_state=+inv+trk", "drop"), Flow(82, 110, "ct_state=+inv+trk", "drop"),
        Flow(71, 0, "", "drop"), Flow(81, 0, "", "drop"),
        # entry: egress from the port, ingress to its MAC (tagged or local)
        Flow(60, 100, "in_port=tap1", "load:3->NXM_NX_REG6[],resubmit(,71)"),
        Flow(60, 90, f"dl_vlan=3,dl_dst={MAC}",
             "strip_vlan,load:5->NXM_NX_REG5[],resubmit(,81)"),
        Flow(73, 90, f"reg6=3,dl_dst={MAC}", "load:5->NXM_NX_REG5[],resubmit(,81)"),
        # an unfiltered port on the host still reaches filtered ones through 73
        Flow(60, 100, "in_port=tap-dhcp", "load:3->NXM_NX_REG6[],resubmit(,73)"),
        # established and related
        Flow(72, 100, "ct_state=+est-rel-inv+trk,in_port=tap1", "resubmit(,73)"),
        Flow(72, 100, "ct_state=+rel-inv+trk,in_port=tap1", "resubmit(,73)"),
        Flow(82, 100, "ct_state=+est-rel-inv+trk,reg5=5", "output:tap1"),
        Flow(82, 100, "ct_state=+rel-inv+trk,reg5=5", "output:tap1"),
        # egress anti-spoofing
        Flow(71, 10, "in_port=tap1", "drop"),
        Flow(71, 95, f"in_port=tap1,dl_src={MAC},udp,nw_src=0.0.0.0,tp_src=68,tp_dst=67",
             "resubmit(,73)"),
        Flow(71, 94, "in_port=tap1,udp,tp_src=67,tp_dst=68", "drop"),
        Flow(71, 94, "in_port=tap1,udp6,tp_src=547,tp_dst=546", "drop"),
        Flow(71, 94, "in_port=tap1,icmp6,icmp_type=134", "drop"),
        Flow(71, 90, f"in_port=tap1,dl_src={MAC},arp,arp_spa=10.0.0.5/32", "resubmit(,73)"),
        Flow(71, 90, f"in_port=tap1,dl_src={MAC},ip,nw_src=10.0.0.5/32",
             "ct(table=72,zone=5)"),
        *[Flow(71, 95, f"in_port=tap1,dl_src={MAC},icmp6,ipv6_src={LL}/128,icmp_type={t}",
               "resubmit(,73)") for t in (133, 135, 136)],
        Flow(71, 90, f"in_port=tap1,dl_src={MAC},ipv6,ipv6_src={LL}/128",
             "ct(table=72,zone=5)"),
        # ingress base
        Flow(81, 10, "reg5=5", "drop"),
        Flow(81, 90, "reg5=5,arp", "output:tap1"),
        Flow(81, 95, "reg5=5,udp,tp_src=67,tp_dst=68", "output:tap1"),
        Flow(81, 95, "reg5=5,udp6,tp_src=547,tp_dst=546", "output:tap1"),
        *[Flow(81, 95, f"reg5=5,icmp6,icmp_type={t}", "output:tap1") for t in (134, 135, 136)],
        Flow(81, 80, "reg5=5,ip", "ct(table=82,zone=5)"),
        Flow(81, 80, "reg5=5,ipv6", "ct(table=82,zone=5)"),
        # the group's rules, committed to conntrack
        Flow(72, 70, f"{ct_new},in_port=tap1,ip", "ct(commit,zone=5),resubmit(,73)"),
        Flow(82, 70, f"{ct_new},reg5=5,tcp,tp_dst=22", "ct(commit,zone=5),output:tap1"),
        Flow(82, 70, f"{ct_new},reg5=5,ip,nw_src=10.0.0.7/32", "ct(commit,zone=5),output:tap1"),
        Flow(82, 70, f"{ct_new},reg5=5,ip,nw_src=10.0.0.9/32", "ct(commit,zone=5),output:tap1"),
    }
    assert set(got) == expected
    assert len({f.key() for f in got}) == len(got)  # no two flows fight over one key


def test_without_filtered_ports_only_defaults_and_entries_remain() -> None:
    got = firewall.firewall_flows([], [("tap9", 4)])
    assert Flow(60, 100, "in_port=tap9", "load:4->NXM_NX_REG6[],resubmit(,73)") in got
    assert not [f for f in got if f.table in (81, 82) and "reg5" in f.match]


def test_a_stateless_groups_port_is_filtered_without_conntrack() -> None:
    info = _info()
    for rule in info["security_groups"][SG]:
        rule["stateful"] = False
    port = firewall.from_info(info, "p1", "tap1", 5, 3)
    assert port is not None and not port.stateful
    got = firewall.port_flows(port)
    assert not [f for f in got if "ct(" in f.actions or "ct_state" in f.match]
    assert Flow(71, 90, f"in_port=tap1,dl_src={MAC},ip,nw_src=10.0.0.5/32",
                "resubmit(,72)") in got
    assert Flow(81, 80, "reg5=5,ip", "resubmit(,82)") in got
    # each rule accepts single packets of its own direction
    assert Flow(82, 70, "reg5=5,tcp,tp_dst=22", "output:tap1") in got
    assert Flow(72, 70, "in_port=tap1,ip", "resubmit(,73)") in got
    assert firewall.from_info(_info(), "p1", "tap1", 5, 3).stateful  # type: ignore[union-attr]
