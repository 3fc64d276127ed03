"""Local IPs on br-int (upstream's OVS agent extension ``local_ip``), as a pure model.

A port associated with a local IP answers for it to the instances of its
own host on its network: another host's instances reach their own host's
associated port at the same address. The agent keeps every association the
server pushed or it pulled (``Association``); this turns those whose port
is wired here into flows:

60  (priority 105, above the firewall's per-port entries) a wired port's
    ARP for, or IP to, a local IP of its network -> 31, its local VLAN
    noted in reg6. The associated port's own packets, not yet through
    conntrack, go through conntrack's NAT in the VLAN's zone (priority
    104) so answers to translated connections leave from the local IP.
    ARP from elsewhere (tagged: a tunnel, a provider bridge) claiming the
    local IP is dropped unless it asks for the associated port's address
    (upstream's GARP blocker).
31  (upstream's LOCAL_IP_TABLE) ARP for the local IP is answered with the
    associated port's MAC; IP to it is sent to that MAC: translated to the
    port's fixed IP (``ct(commit,nat(dst=...))``, back into 60) in
    ``translate`` mode, unchanged in ``passthrough`` mode. The associated
    port reaching the local IP itself is left alone, as upstream lets it
    reach the address's true owner.

Upstream's NAT in the VLAN's zone would clash with the openvswitch
firewall's conntrack (upstream then needs its static NAT); the agent
refuses that pairing, as upstream does by default.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from neutrino.agents.ovs.flows import INT_SWITCH, Flow
from neutrino.agents.ovs.l2pop import arp_answer_actions

LOCAL_IP_TABLE = 31
ENTRY, REPLY = 105, 104  # table 60
TRANSLATE, PASSTHROUGH = "translate", "passthrough"
REG_NET = "NXM_NX_REG6[]"


@dataclass(frozen=True, order=True)
class Association:
    fixed_port_id: str
    local_ip_id: str
    local_ip_address: str
    fixed_ip: str
    ip_mode: str = TRANSLATE


def from_pushed(data: dict[str, Any]) -> Association:
    return Association(data["fixed_port_id"], data["local_ip_id"], data["local_ip_address"],
                       data["fixed_ip"], data.get("ip_mode") or TRANSLATE)


@dataclass(frozen=True)
class Answering:
    """An association whose port is wired here: its OVS port, MAC and VLAN."""
    association: Association
    port: str
    mac: str
    vlan: int


def local_ip_flows(answering: Iterable[Answering],
                   sources: Iterable[tuple[str, int]]) -> list[Flow]:
    """br-int's local-IP flows for ``answering`` ports, reached from every
    wired port (name, local VLAN) of ``sources``. Where two ports of one
    VLAN here answer for one address, the first by port id does."""
    chosen: dict[tuple[int, str], Answering] = {}
    for a in sorted(answering, key=lambda a: a.association):
        chosen.setdefault((a.vlan, a.association.local_ip_address), a)
    if not chosen:
        return []
    out = [Flow(LOCAL_IP_TABLE, 0, "", f"resubmit(,{INT_SWITCH})")]
    by_vlan: dict[int, list[Answering]] = {}
    for (vlan, _), a in sorted(chosen.items()):
        by_vlan.setdefault(vlan, []).append(a)
    for name, vlan in sorted(set(sources)):
        for a in by_vlan.get(vlan, []):
            lip = a.association.local_ip_address
            to_table = f"load:{vlan}->{REG_NET},resubmit(,{LOCAL_IP_TABLE})"
            out += [Flow(INT_SWITCH, ENTRY, f"in_port={name},arp,arp_op=1,arp_tpa={lip}",
                         to_table),
                    Flow(INT_SWITCH, ENTRY, f"in_port={name},ip,nw_dst={lip}", to_table)]
    for a in chosen.values():
        out += _answer(a)
    return sorted(set(out))


def _answer(a: Answering) -> list[Flow]:
    lip, fixed, vlan = a.association.local_ip_address, a.association.fixed_ip, a.vlan
    out = [Flow(LOCAL_IP_TABLE, 10, f"reg6={vlan},arp,arp_op=1,arp_tpa={lip}",
                arp_answer_actions(a.mac, lip)),
           # the address's true owner elsewhere may not claim it here, unless
           # it asks for the associated port's own address
           Flow(INT_SWITCH, ENTRY, f"dl_vlan={vlan},arp,arp_spa={lip}", "drop"),
           Flow(INT_SWITCH, ENTRY + 1, f"dl_vlan={vlan},arp,arp_spa={lip},arp_tpa={fixed}",
                "NORMAL"),
           Flow(LOCAL_IP_TABLE, 11, f"reg6={vlan},ip,nw_src={fixed},nw_dst={lip}", "NORMAL")]
    if a.association.ip_mode == PASSTHROUGH:
        return out + [Flow(LOCAL_IP_TABLE, 10, f"reg6={vlan},ip,nw_dst={lip}",
                           f"mod_dl_dst:{a.mac},NORMAL")]
    return out + [
        Flow(LOCAL_IP_TABLE, 10, f"reg6={vlan},ip,nw_dst={lip}",
             f"mod_dl_dst:{a.mac},ct(commit,table={INT_SWITCH},zone={vlan},"
             f"nat(dst={fixed}))"),
        Flow(INT_SWITCH, REPLY, f"ct_state=-trk,in_port={a.port},ip,nw_src={fixed}",
             f"ct(table={INT_SWITCH},zone={vlan},nat)")]
