"""The OVS agent's ``fwaas_v2`` extension, pure: firewall groups on instance
ports as br-int flows after the security-group tables, and their statuses.

Upstream's L2 FWaaS on OVS (``[fwaas] firewall_l2_driver = ovs``) filters a
port's packets in tables of its own once the security groups accepted them,
so a packet passes only if both let it. Here the security-group driver
(``firewall``) hands a port in a group its accepted packets: egress ones
into ``EGRESS`` instead of on to switching, ingress ones into ``INGRESS``
instead of out to the port. Each goes through the port's own conntrack
zone for the firewall (apart from its security-group zone, so either
side's decisions do not leak into the other's) and is judged as the L3
side judges it (``agents.l3.fwaas``'s rule model): a reply (or a related
packet, ICMP errors) of a connection the firewall committed passes; every
packet the connection's initiator sends is judged by the policy's enabled
rules in order (``allow`` commits it and lets it on, ``deny`` and
``reject`` drop it: OpenFlow cannot answer ICMP itself), and what no rule
matches is dropped; invalid packets are dropped. Judging the initiator's
every packet keeps an established connection the new policy still allows
and stops the others at once, without a conntrack flush.

The ingress policy applies to what enters the instance, the egress policy
to what it sends. A group set administratively down drops all IP traffic
of its ports. Ports the security groups do not filter (port security off,
or the ``noop`` driver) are not filtered by a group either.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import netaddr

from neutrino.agents.l3.fwaas import Rule, policy_rules
from neutrino.agents.ovs.firewall import ACCEPT_OR_INGRESS as ACCEPTED_EGRESS
from neutrino.agents.ovs.firewall import FWAAS_EGRESS as EGRESS
from neutrino.agents.ovs.firewall import FWAAS_INGRESS as INGRESS
from neutrino.agents.ovs.firewall import port_masks
from neutrino.agents.ovs.flows import Flow

EXTENSION = "fwaas_v2"  # upstream's L2 agent extension name
L2_DRIVERS = ("ovs",)  # ``[fwaas] firewall_l2_driver`` values served
EGRESS_RULES, INGRESS_RULES = EGRESS + 1, INGRESS + 1
ZONE_BASE = 0x8000  # firewall zones: above the security groups' (ofport), below local IP's
TOP = 60000  # the first rule's priority; later ones count down
ACTIVE, DOWN = "ACTIVE", "DOWN"
_PROTOCOLS = {("tcp", 4): "tcp", ("tcp", 6): "tcp6", ("udp", 4): "udp", ("udp", 6): "udp6",
              ("icmp", 4): "icmp", ("icmp", 6): "icmp6", ("ipv6-icmp", 6): "icmp6",
              ("sctp", 4): "sctp", ("sctp", 6): "sctp6"}
_NUMBERS = {"dccp": 33, "icmp": 1, "ipv6-icmp": 58}


@dataclass(frozen=True)
class PortFirewall:
    """One instance port's group, as wired here."""
    name: str  # OVS port name
    ofport: int
    group_id: str
    admin_state_up: bool
    ingress: tuple[Rule, ...]
    egress: tuple[Rule, ...]

    @property
    def zone(self) -> int:
        return ZONE_BASE + self.ofport


def by_port(groups: Iterable[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """port id -> its group, from ``get_firewall_groups_for_ports``'s answer."""
    return {str(p): g for g in groups for p in g.get("ports", ())}


def port_firewall(group: Mapping[str, Any], name: str, ofport: int) -> PortFirewall:
    return PortFirewall(name, ofport, str(group["id"]), bool(group.get("admin_state_up", True)),
                        policy_rules(group.get("ingress_rule_list", ())),
                        policy_rules(group.get("egress_rule_list", ())))


def rule_matches(rule: Rule) -> list[str]:
    """A rule's OpenFlow matches (several when port ranges need masks)."""
    v6 = rule.ip_version == 6
    proto = rule.protocol
    if proto is None:
        parts = ["ipv6" if v6 else "ip"]
    elif (proto, rule.ip_version) in _PROTOCOLS:
        parts = [_PROTOCOLS[(proto, rule.ip_version)]]
    else:
        parts = [f"{'ipv6' if v6 else 'ip'},nw_proto={_NUMBERS.get(proto, proto)}"]
    nw = "ipv6" if v6 else "nw"
    if rule.source:
        parts.append(f"{nw}_src={netaddr.IPNetwork(rule.source).cidr}")
    if rule.destination:
        parts.append(f"{nw}_dst={netaddr.IPNetwork(rule.destination).cidr}")
    base = ",".join(parts)
    ported = proto in ("tcp", "udp", "sctp")
    sources = _masks(rule.source_port) if ported else [None]
    dests = _masks(rule.destination_port) if ported else [None]
    out = []
    for src in sources:
        for dst in dests:
            out.append(base + (f",tp_src={src}" if src else "") + (f",tp_dst={dst}" if dst else ""))
    return out


def _masks(text: str | None) -> list[str | None]:
    if not text:
        return [None]
    low, _, high = text.partition(":")
    return list(port_masks(int(low), int(high or low)))


def _direction(fw: PortFirewall, entry: int, table: int, who: str, rules: tuple[Rule, ...],
               then: str) -> list[Flow]:
    if not fw.admin_state_up:
        return [Flow(entry, 100, who, "drop")]
    out = [Flow(entry, 100, f"{who},ip", f"ct(table={table},zone={fw.zone})"),
           Flow(entry, 100, f"{who},ipv6", f"ct(table={table},zone={fw.zone})"),
           Flow(table, TOP + 2, f"ct_state=+est+rpl-inv+trk,{who}", then),
           Flow(table, TOP + 1, f"ct_state=+rel-inv+trk,{who}", then)]
    for i, rule in enumerate(rules):
        verdict = f"ct(commit,zone={fw.zone}),{then}" if rule.action == "allow" else "drop"
        for match in rule_matches(rule):
            out.append(Flow(table, TOP - i, f"ct_state=-rpl-inv+trk,{who},{match}", verdict))
    return out


def port_flows(fw: PortFirewall) -> list[Flow]:
    """One port's firewall flows, both directions."""
    egress = _direction(fw, EGRESS, EGRESS_RULES, f"in_port={fw.name}", fw.egress,
                        f"resubmit(,{ACCEPTED_EGRESS})")
    ingress = _direction(fw, INGRESS, INGRESS_RULES, f"reg5={fw.ofport}", fw.ingress,
                         f"output:{fw.name}")
    return egress + ingress


def firewall_flows(firewalls: Iterable[PortFirewall]) -> list[Flow]:
    """The tables' defaults (drop what no flow takes, invalid packets) and
    every port's flows."""
    flows = [Flow(table, 0, "", "drop") for table in (EGRESS, EGRESS_RULES, INGRESS,
                                                      INGRESS_RULES)]
    flows += [Flow(table, TOP + 10, "ct_state=+inv+trk", "drop")
              for table in (EGRESS_RULES, INGRESS_RULES)]
    for fw in firewalls:
        flows += port_flows(fw)
    return sorted(set(flows))


def statuses(firewalls: Iterable[PortFirewall]) -> dict[str, str]:
    """group id -> what to report for the groups applied here."""
    return {fw.group_id: ACTIVE if fw.admin_state_up else DOWN for fw in firewalls}
