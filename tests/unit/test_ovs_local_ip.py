"""The OVS agent's local-IP flows (``local_ip``), read from the pure model
and the plan: who reaches a local IP, how it is answered per ``ip_mode``."""
from __future__ import annotations

from neutrino.agents.ovs import local_ip, plan
from neutrino.agents.ovs.flows import Flow
from neutrino.agents.ovs.switch import VifPort

LIP, FIXED, MAC = "10.0.0.200", "10.0.0.5", "fa:16:3e:00:00:05"


def _assoc(port: str = "p-a", mode: str = local_ip.TRANSLATE, lip: str = LIP,
           fixed: str = FIXED) -> local_ip.Association:
    return local_ip.Association(port, "lip-1", lip, fixed, mode)


def _flows(table: int, out: list[Flow]) -> dict[str, str]:
    return {f.match: f.actions for f in out if f.table == table}


def test_every_port_of_the_network_here_is_sent_to_the_local_ip_table() -> None:
    out = local_ip.local_ip_flows([local_ip.Answering(_assoc(), "tap-a", MAC, 3)],
                                  [("tap-a", 3), ("tap-c", 3), ("tap-other", 4)])
    entries = _flows(60, out)
    for port in ("tap-a", "tap-c"):
        assert entries[f"in_port={port},arp,arp_op=1,arp_tpa={LIP}"] == (
            "load:3->NXM_NX_REG6[],resubmit(,31)")
        assert entries[f"in_port={port},ip,nw_dst={LIP}"] == "load:3->NXM_NX_REG6[],resubmit(,31)"
    assert not any("tap-other" in m for m in entries)  # another network's port


def test_translate_answers_arp_with_the_ports_mac_and_nats_to_its_fixed_ip() -> None:
    out = local_ip.local_ip_flows([local_ip.Answering(_assoc(), "tap-a", MAC, 3)],
                                  [("tap-a", 3)])
    table = _flows(31, out)
    arp = table[f"reg6=3,arp,arp_op=1,arp_tpa={LIP}"]
    assert f"mod_dl_src:{MAC}" in arp and arp.endswith("in_port")
    assert table[f"reg6=3,ip,nw_dst={LIP}"] == (
        f"mod_dl_dst:{MAC},ct(commit,table=60,zone=3,nat(dst={FIXED}))")
    assert table[f"reg6=3,ip,nw_src={FIXED},nw_dst={LIP}"] == "NORMAL"  # itself: untouched
    assert table[""] == "resubmit(,60)"
    assert _flows(60, out)[f"ct_state=-trk,in_port=tap-a,ip,nw_src={FIXED}"] == (
        "ct(table=60,zone=3,nat)")


def test_passthrough_sends_the_packet_unchanged_to_the_port() -> None:
    out = local_ip.local_ip_flows(
        [local_ip.Answering(_assoc(mode=local_ip.PASSTHROUGH), "tap-a", MAC, 3)],
        [("tap-a", 3)])
    assert _flows(31, out)[f"reg6=3,ip,nw_dst={LIP}"] == f"mod_dl_dst:{MAC},NORMAL"
    assert not any("ct(" in f.actions for f in out)


def test_no_association_here_means_no_flow() -> None:
    assert local_ip.local_ip_flows([], [("tap-a", 3)]) == []


def _known(*ports: tuple[str, str, bool]) -> plan.Known:
    wired = {pid: plan.Wired(VifPort(f"tap-{pid}", pid, MAC, i + 1, 3), "net", up)
             for i, (pid, _, up) in enumerate(ports)}
    return plan.Known(vlans={"net": 3}, wired=wired)


def test_the_plan_answers_only_for_associated_ports_wired_here_and_up() -> None:
    associations = {"a": (_assoc("a"),), "gone": (_assoc("gone", lip="10.0.0.201"),)}
    out = plan.local_ip_flows(_known(("a", "", True), ("c", "", True)), associations)
    assert _flows(31, out)[f"reg6=3,ip,nw_dst={LIP}"].startswith(f"mod_dl_dst:{MAC}")
    assert not any("10.0.0.201" in f.match for f in out)
    assert plan.local_ip_flows(_known(("a", "", False), ("c", "", True)), associations) == []
    settings = plan.Settings(local_ips=True)
    observed = plan.Observed({}, local_ips=associations)
    desired, _ = plan.desired_flows(settings, _known(("a", "", True)), observed)
    assert any(f.table == 31 for f in desired["br-int"])
    desired, _ = plan.desired_flows(plan.Settings(), _known(("a", "", True)), observed)
    assert not any(f.table == 31 for f in desired["br-int"])


def test_arp_from_elsewhere_claiming_the_local_ip_is_dropped_unless_it_asks_for_the_port(
        ) -> None:
    out = local_ip.local_ip_flows([local_ip.Answering(_assoc(), "tap-a", MAC, 3)],
                                  [("tap-a", 3)])
    entries = _flows(60, out)
    assert entries[f"dl_vlan=3,arp,arp_spa={LIP}"] == "drop"
    assert entries[f"dl_vlan=3,arp,arp_spa={LIP},arp_tpa={FIXED}"] == "NORMAL"
