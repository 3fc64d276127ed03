"""Local IPs on br-int (upstream's OVS agent extension ``local_ip``), as a pure model.

A port associated with a local IP answers for it to the instances of its
own host on its network: another host's instances reach their own host's
associated port at the same address. The agent keeps every association the
server pushed or it pulled (``Association``); this turns those whose port
is wired here into flows. They see a packet once its local VLAN is in reg6:

- without the openvswitch firewall, table 60 (priority 105) sends a wired
  port's ARP for, or IP to, a local IP of its network to table 31 (upstream's
  LOCAL_IP_TABLE) with its VLAN noted;
- with it, table 73, where every local port's packets arrive once its
  egress rules accepted them (reg6 set), holds the same flows (priority 95),
  so the source's rules see the local IP and the associated port's
  ingress rules its fixed IP, each tracked in its own zone.

There, ARP for the local IP is answered with the associated port's MAC; IP
to it goes to that MAC, translated to the port's fixed IP (``translate``:
``ct(commit,nat(dst=...))`` in a zone of the VLAN's own, then the table
again) or unchanged (``passthrough``). The associated port's own IP
packets go once through that zone's NAT (reg7 notes it), so answers to
translated connections leave from the local IP. The associated port
reaching the local IP itself is left alone, as upstream lets it reach the
address's true owner. ARP from elsewhere (tagged: a tunnel, a provider
bridge) claiming the local IP is dropped in table 60 unless it asks for the
associated port's address (upstream's GARP blocker).

Upstream's agent needs ``[LOCAL_IP] static_nat`` (learnt stateless NAT)
beside its openvswitch firewall; here the NAT runs after the firewall's
egress, in zones apart from the ports' own, so conntrack does both.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from neutrino.agents.ovs.firewall import ACCEPT_OR_INGRESS
from neutrino.agents.ovs.flows import INT_SWITCH, Flow
from neutrino.agents.ovs.l2pop import arp_answer_actions

LOCAL_IP_TABLE = 31
ENTRY, REPLY = 105, 104  # table 60
TRANSLATE, PASSTHROUGH = "translate", "passthrough"
REG_NET, REG_NATTED = "NXM_NX_REG6[]", "NXM_NX_REG7[0]"
ZONE_BASE = 0xF000  # local IP NAT zones: above the firewall's (ports' ofport numbers)


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


def zone(vlan: int) -> int:
    return ZONE_BASE | vlan


def local_ip_flows(answering: Iterable[Answering], sources: Iterable[tuple[str, int]],
                   firewall: bool = False) -> list[Flow]:
    """br-int's local-IP flows for ``answering`` ports, reached from every
    wired port (name, local VLAN) of ``sources``; ``firewall``: after the
    openvswitch firewall's egress (table 73). Where two ports of one VLAN
    here answer for one address, the first by port id does."""
    chosen: dict[tuple[int, str], Answering] = {}
    for a in sorted(answering, key=lambda a: a.association):
        chosen.setdefault((a.vlan, a.association.local_ip_address), a)
    if not chosen:
        return []
    out = [] if firewall else [Flow(LOCAL_IP_TABLE, 0, "", f"resubmit(,{INT_SWITCH})")]
    if not firewall:
        lips: dict[int, set[str]] = {}
        for vlan, lip in chosen:
            lips.setdefault(vlan, set()).add(lip)
        for name, vlan in sorted(set(sources)):
            to_table = f"load:{vlan}->{REG_NET},resubmit(,{LOCAL_IP_TABLE})"
            for lip in sorted(lips.get(vlan, ())):
                out += [Flow(INT_SWITCH, ENTRY,
                             f"reg7=0/0x1,in_port={name},arp,arp_op=1,arp_tpa={lip}", to_table),
                        Flow(INT_SWITCH, ENTRY, f"reg7=0/0x1,in_port={name},ip,nw_dst={lip}",
                             to_table)]
    for a in chosen.values():
        out += _answer(a, firewall)
    return sorted(set(out))


def _answer(a: Answering, firewall: bool) -> list[Flow]:
    lip, fixed, vlan = a.association.local_ip_address, a.association.fixed_ip, a.vlan
    # without the firewall: table 31, back to 60 (whose entries the packet,
    # its destination changed or its flag set, no longer matches); with it: 73
    table, again, base = ((ACCEPT_OR_INGRESS, ACCEPT_OR_INGRESS, 90) if firewall
                          else (LOCAL_IP_TABLE, INT_SWITCH, 5))
    fresh = f"reg6={vlan},reg7=0/0x1"
    out = [Flow(table, base + 5, f"{fresh},arp,arp_op=1,arp_tpa={lip}",
                arp_answer_actions(a.mac, lip)),
           Flow(table, base + 6, f"{fresh},ip,nw_src={fixed},nw_dst={lip}",
                f"load:1->{REG_NATTED},resubmit(,{again})"),
           Flow(INT_SWITCH, ENTRY, f"dl_vlan={vlan},arp,arp_spa={lip}", "drop"),
           Flow(INT_SWITCH, ENTRY + 1, f"dl_vlan={vlan},arp,arp_spa={lip},arp_tpa={fixed}",
                "NORMAL")]
    if a.association.ip_mode == PASSTHROUGH:
        return out + [Flow(table, base + 5, f"{fresh},ip,nw_dst={lip}",
                           f"mod_dl_dst:{a.mac},load:1->{REG_NATTED},resubmit(,{again})")]
    nat_zone = zone(vlan)
    out.append(Flow(table, base + 5, f"{fresh},ip,nw_dst={lip}",
                    f"mod_dl_dst:{a.mac},load:1->{REG_NATTED},"
                    f"ct(commit,table={again},zone={nat_zone},nat(dst={fixed}))"))
    reply = f"load:1->{REG_NATTED},ct(table={again},zone={nat_zone},nat)"
    if firewall:
        out.append(Flow(table, base + 4, f"{fresh},ip,dl_src={a.mac},nw_src={fixed}", reply))
    else:
        out.append(Flow(INT_SWITCH, REPLY, f"reg7=0/0x1,in_port={a.port},ip,nw_src={fixed}",
                        reply))
    return out
