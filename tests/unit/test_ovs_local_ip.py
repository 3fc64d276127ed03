"""The OVS agent's local-IP flows (``local_ip``), read from the pure model
and the plan: who reaches a local IP, how it is answered per ``ip_mode``,
with and without the openvswitch firewall."""
from __future__ import annotations

from neutrino.agents.ovs import local_ip, plan
from neutrino.agents.ovs.flows import Flow
from neutrino.agents.ovs.switch import VifPort

LIP, FIXED, MAC = "10.0.0.200", "10.0.0.5", "fa:16:3e:00:00:05"
FRESH = "reg6=3,reg7=0/0x1"
ZONE = 0xF003


def _assoc(port: str = "p-a", mode: str = local_ip.TRANSLATE, lip: str = LIP,
           fixed: str = FIXED) -> local_ip.Association:
    return local_ip.Association(port, "lip-1", lip, fixed, mode)


def _answering(mode: str = local_ip.TRANSLATE) -> list[local_ip.Answering]:
    return [local_ip.Answering(_assoc(mode=mode), "tap-a", MAC, 3)]


def _flows(table: int, out: list[Flow]) -> dict[str, str]:
    return {f.match: f.actions for f in out if f.table == table}


def test_every_port_of_the_network_here_is_sent_to_the_local_ip_table() -> None:
    out = local_ip.local_ip_flows(_answering(), [("tap-a", 3), ("tap-c", 3), ("tap-o", 4)])
    entries = _flows(60, out)
    for port in ("tap-a", "tap-c"):
        assert entries[f"reg7=0/0x1,in_port={port},arp,arp_op=1,arp_tpa={LIP}"] == (
            "load:3->NXM_NX_REG6[],resubmit(,31)")
        assert entries[f"reg7=0/0x1,in_port={port},ip,nw_dst={LIP}"] == (
            "load:3->NXM_NX_REG6[],resubmit(,31)")
    assert not any("tap-o" in m for m in entries)  # another network's port


def test_translate_answers_arp_with_the_ports_mac_and_nats_to_its_fixed_ip() -> None:
    out = local_ip.local_ip_flows(_answering(), [("tap-a", 3)])
    table = _flows(31, out)
    arp = table[f"{FRESH},arp,arp_op=1,arp_tpa={LIP}"]
    assert f"mod_dl_src:{MAC}" in arp and arp.endswith("in_port")
    assert table[f"{FRESH},ip,nw_dst={LIP}"] == (
        f"mod_dl_dst:{MAC},load:1->NXM_NX_REG7[0],"
        f"ct(commit,table=60,zone={ZONE},nat(dst={FIXED}))")
    # itself: untouched
    assert table[f"{FRESH},ip,nw_src={FIXED},nw_dst={LIP}"] == (
        "load:1->NXM_NX_REG7[0],resubmit(,60)")
    assert table[""] == "resubmit(,60)"
    assert _flows(60, out)[f"reg7=0/0x1,in_port=tap-a,ip,nw_src={FIXED}"] == (
        f"load:1->NXM_NX_REG7[0],ct(table=60,zone={ZONE},nat)")


def test_passthrough_sends_the_packet_unchanged_to_the_port() -> None:
    out = local_ip.local_ip_flows(_answering(local_ip.PASSTHROUGH), [("tap-a", 3)])
    assert _flows(31, out)[f"{FRESH},ip,nw_dst={LIP}"] == (
        f"mod_dl_dst:{MAC},load:1->NXM_NX_REG7[0],resubmit(,60)")
    assert not any("ct(" in f.actions for f in out)


def test_with_the_firewall_the_local_ip_is_answered_after_the_egress_rules() -> None:
    out = local_ip.local_ip_flows(_answering(), [("tap-a", 3), ("tap-c", 3)], firewall=True)
    assert not _flows(31, out)
    assert not [m for m in _flows(60, out) if "in_port" in m]  # 73 sees every local port
    table = _flows(73, out)
    assert f"mod_dl_src:{MAC}" in table[f"{FRESH},arp,arp_op=1,arp_tpa={LIP}"]
    assert table[f"{FRESH},ip,nw_dst={LIP}"] == (
        f"mod_dl_dst:{MAC},load:1->NXM_NX_REG7[0],"
        f"ct(commit,table=73,zone={ZONE},nat(dst={FIXED}))")
    assert table[f"{FRESH},ip,dl_src={MAC},nw_src={FIXED}"] == (
        f"load:1->NXM_NX_REG7[0],ct(table=73,zone={ZONE},nat)")
    priorities = {f.match: f.priority for f in out if f.table == 73}
    # above the firewall's "to a filtered port of this host" (90)
    assert min(priorities.values()) > 90


def test_arp_from_elsewhere_claiming_the_local_ip_is_dropped_unless_it_asks_for_the_port(
        ) -> None:
    for firewall in (False, True):
        entries = _flows(60, local_ip.local_ip_flows(_answering(), [("tap-a", 3)], firewall))
        assert entries[f"dl_vlan=3,arp,arp_spa={LIP}"] == "drop"
        assert entries[f"dl_vlan=3,arp,arp_spa={LIP},arp_tpa={FIXED}"] == "NORMAL"


def test_no_association_here_means_no_flow() -> None:
    assert local_ip.local_ip_flows([], [("tap-a", 3)]) == []


def _known(*ports: tuple[str, bool]) -> plan.Known:
    wired = {pid: plan.Wired(VifPort(f"tap-{pid}", pid, MAC, i + 1, 3), "net", up)
             for i, (pid, up) in enumerate(ports)}
    return plan.Known(vlans={"net": 3}, wired=wired)


def test_the_plan_answers_only_for_associated_ports_wired_here_and_up() -> None:
    associations = {"a": (_assoc("a"),), "gone": (_assoc("gone", lip="10.0.0.201"),)}
    out = plan.local_ip_flows(_known(("a", True), ("c", True)), associations)
    assert _flows(31, out)[f"{FRESH},ip,nw_dst={LIP}"].startswith(f"mod_dl_dst:{MAC}")
    assert not any("10.0.0.201" in f.match for f in out)
    assert plan.local_ip_flows(_known(("a", False), ("c", True)), associations) == []
    observed = plan.Observed({}, local_ips=associations)
    desired, _ = plan.desired_flows(plan.Settings(local_ips=True), _known(("a", True)), observed)
    assert any(f.table == 31 for f in desired["br-int"])
    desired, _ = plan.desired_flows(plan.Settings(local_ips=True, firewall=True),
                                    _known(("a", True)), observed)
    assert any(f.table == 73 and LIP in f.match for f in desired["br-int"])
    desired, _ = plan.desired_flows(plan.Settings(), _known(("a", True)), observed)
    assert not any(LIP in f.match for f in desired["br-int"])
