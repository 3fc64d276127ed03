"""Security groups as OpenFlow rules on br-int (the ``openvswitch`` firewall driver).

A pure core like ``flows``: a port's security facts in, flows out. It hooks
into br-int's table 60, where every packet arrives after VLAN translation,
and is stateful through the switch's conntrack (``ct``): a connection is
allowed if its first packet matched a rule (``ct(commit)``), its later
packets and related ICMP errors pass as ``+est`` / ``+rel``, and whatever
conntrack calls ``+inv`` is dropped.

Each filtered port has its own conntrack zone (its OpenFlow port number),
so a connection between two ports of the same host is tracked once leaving
one and once entering the other, and each side's rules are applied.

Tables (upstream's numbers, so traces read alike):

60  entry: from a filtered port -> 71 (egress); from another wired port -> 73;
    a tagged packet (tunnel, provider bridge) to a filtered port's MAC ->
    VLAN stripped, that port noted in reg5 -> 81 (ingress). reg6 holds the
    packet's local VLAN.
71  egress anti-spoofing: only the port's MAC with its addresses (fixed IPs,
    allowed address pairs) passes, IP through conntrack into 72; ARP for its
    own addresses and DHCP discovery go on to 73; the rest is dropped.
72  egress rules; accepted -> 73.
73  to a filtered port on this host (local VLAN in reg6 + its MAC) -> 81;
    otherwise NORMAL switching.
81  ingress: IP through conntrack into 82; ARP and DHCP/RA answers to the port
    pass; the rest is dropped.
82  ingress rules; accepted -> output to the port (reg5).

A port in a firewall group (``fwaas``) has its accepted packets go on to
the group's tables (74 egress, 84 ingress) instead, which then switch or
output them as above.

A port of a stateless group (``stateful = False``) is filtered without
conntrack: its IP packets go straight to the rule tables, a rule accepts
single packets and commits nothing, so an answer passes only if a rule of
its own direction allows it (as upstream's OVS firewall does).

A port with port security off, a port the network owns (DHCP, router) and
a port the server knows no security facts of are not filtered at all.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import netaddr

from neutrino.agents.ovs.flows import INT_SWITCH, Flow
from neutrino.agents.secgroup_facts import (  # noqa: F401 - expand_remote, link_local: API
    ICMP6_ND,
    PROTOCOL_NUMBERS,
    PROTOCOLS,
    expand_remote,
    link_local,
    port_facts,
)

BASE_EGRESS, RULES_EGRESS, ACCEPT_OR_INGRESS = 71, 72, 73
BASE_INGRESS, RULES_INGRESS = 81, 82
FWAAS_EGRESS, FWAAS_INGRESS = 74, 84  # a firewall group's entry tables (``fwaas``)
REG_PORT, REG_NET = "NXM_NX_REG5[]", "NXM_NX_REG6[]"

DRIVERS = {  # [securitygroup] firewall_driver values -> our driver name
    "noop": "noop", "": "noop",
    "neutron.agent.firewall.NoopFirewallDriver": "noop",
    "openvswitch": "openvswitch",
    "neutron.agent.linux.openvswitch_firewall:OVSFirewallDriver": "openvswitch",
    "neutron.agent.linux.openvswitch_firewall.OVSFirewallDriver": "openvswitch",
}


def driver_name(configured: str | None) -> str:
    """The driver a ``firewall_driver`` value names; ValueError if none."""
    try:
        return DRIVERS[(configured or "").strip()]
    except KeyError:
        raise ValueError(f"firewall_driver {configured!r} is not supported "
                         f"(use noop or openvswitch)") from None


@dataclass(frozen=True)
class PortSecurity:
    """What filtering one port needs; built by ``from_info``."""
    name: str  # OVS port name
    ofport: int
    vlan: int
    mac: str
    addresses: tuple[tuple[str, str], ...]  # (mac, ip or cidr) allowed as source
    rules: tuple[dict[str, Any], ...] = field(default=())  # remote groups expanded
    stateful: bool = True
    rule_groups: tuple[frozenset[str], ...] = field(default=())  # each rule's groups
    fwaas: bool = False  # in a firewall group: accepted packets go on to its tables

    @property
    def zone(self) -> int:
        return self.ofport

    @property
    def egress_accepted(self) -> str:
        """Where an accepted egress packet goes: switching, or the group's table."""
        return f"resubmit(,{FWAAS_EGRESS if self.fwaas else ACCEPT_OR_INGRESS})"

    @property
    def ingress_accepted(self) -> str:
        return f"resubmit(,{FWAAS_INGRESS})" if self.fwaas else f"output:{self.name}"


def from_info(info: dict[str, Any], port_id: str, name: str, ofport: int,
              vlan: int) -> PortSecurity | None:
    """A port's filtering on br-int from the server's answer, or None when
    the port is not to be filtered."""
    facts = port_facts(info, port_id)
    if facts is None:
        return None
    return PortSecurity(name, ofport, vlan, facts.mac, facts.addresses, facts.rules,
                        facts.stateful, facts.rule_groups)


def port_masks(low: int, high: int) -> list[str]:
    """The fewest value/mask matches covering the ports ``low``..``high``."""
    if low == high:
        return [str(low)]
    out = []
    while low <= high:
        size = 1
        while low % (size * 2) == 0 and low + size * 2 - 1 <= high:
            size *= 2
        out.append(str(low) if size == 1 else f"{low:#06x}/{0xffff & ~(size - 1):#06x}")
        low += size
    return out


def rule_matches(rule: dict[str, Any]) -> list[str]:
    """A rule's OpenFlow matches (several when a port range needs masks)."""
    v6 = rule.get("ethertype") == "IPv6"
    proto = rule.get("protocol")
    proto = str(proto).lower() if proto not in (None, "any") else None
    parts: list[str] = []
    if proto is None:
        parts.append("ipv6" if v6 else "ip")
    elif proto in PROTOCOLS:
        parts.append(PROTOCOLS[proto][1 if v6 else 0])
    else:
        number = PROTOCOL_NUMBERS.get(proto, proto)
        parts.append(f"{'ipv6' if v6 else 'ip'},nw_proto={number}")
    nw = "ipv6" if v6 else "nw"
    if rule.get("source_ip_prefix"):
        parts.append(f"{nw}_src={netaddr.IPNetwork(rule['source_ip_prefix']).cidr}")
    if rule.get("dest_ip_prefix"):
        parts.append(f"{nw}_dst={netaddr.IPNetwork(rule['dest_ip_prefix']).cidr}")
    low, high = rule.get("port_range_min"), rule.get("port_range_max")
    base = ",".join(parts)
    if proto in PROTOCOLS and PROTOCOLS[proto][0] in ("icmp", "icmp6"):
        if low is not None:
            base += f",icmp_type={low}"
            if high is not None:
                base += f",icmp_code={high}"
        return [base]
    if low is None or proto not in PROTOCOLS:
        return [base]
    return [f"{base},tp_dst={m}" for m in port_masks(int(low), int(high or low))]


def _to_rules(p: PortSecurity, table: int) -> str:
    """Into a rule table: through the port's conntrack zone, or straight when stateless."""
    return f"ct(table={table},zone={p.zone})" if p.stateful else f"resubmit(,{table})"


def _egress_base(p: PortSecurity) -> list[Flow]:
    port = f"in_port={p.name}"
    out = [Flow(BASE_EGRESS, 10, port, "drop"),
           # DHCP discovery before the port has an address; no DHCP server in a VM
           Flow(BASE_EGRESS, 95, f"{port},dl_src={p.mac},udp,nw_src=0.0.0.0,tp_src=68,"
                                 "tp_dst=67", f"resubmit(,{ACCEPT_OR_INGRESS})"),
           Flow(BASE_EGRESS, 94, f"{port},udp,tp_src=67,tp_dst=68", "drop"),
           Flow(BASE_EGRESS, 94, f"{port},udp6,tp_src=547,tp_dst=546", "drop"),
           Flow(BASE_EGRESS, 94, f"{port},icmp6,icmp_type=134", "drop")]  # no RAs
    for mac, ip in p.addresses:
        net = netaddr.IPNetwork(ip)
        if net.version == 4:
            out.append(Flow(BASE_EGRESS, 90, f"{port},dl_src={mac},arp,arp_spa={net.cidr}",
                            f"resubmit(,{ACCEPT_OR_INGRESS})"))
            out.append(Flow(BASE_EGRESS, 90, f"{port},dl_src={mac},ip,nw_src={net.cidr}",
                            _to_rules(p, RULES_EGRESS)))
        else:
            for kind in ICMP6_ND[0:1] + ICMP6_ND[2:]:
                out.append(Flow(BASE_EGRESS, 95, f"{port},dl_src={mac},icmp6,"
                                f"ipv6_src={net.cidr},icmp_type={kind}",
                                f"resubmit(,{ACCEPT_OR_INGRESS})"))
            out.append(Flow(BASE_EGRESS, 90, f"{port},dl_src={mac},ipv6,ipv6_src={net.cidr}",
                            _to_rules(p, RULES_EGRESS)))
    return out


def _ingress_base(p: PortSecurity) -> list[Flow]:
    port = f"reg5={p.ofport}"
    out = [Flow(BASE_INGRESS, 10, port, "drop"),
           Flow(BASE_INGRESS, 90, f"{port},arp", f"output:{p.name}"),
           Flow(BASE_INGRESS, 95, f"{port},udp,tp_src=67,tp_dst=68", f"output:{p.name}"),
           Flow(BASE_INGRESS, 95, f"{port},udp6,tp_src=547,tp_dst=546", f"output:{p.name}"),
           Flow(BASE_INGRESS, 80, f"{port},ip", _to_rules(p, RULES_INGRESS)),
           Flow(BASE_INGRESS, 80, f"{port},ipv6", _to_rules(p, RULES_INGRESS))]
    out += [Flow(BASE_INGRESS, 95, f"{port},icmp6,icmp_type={kind}", f"output:{p.name}")
            for kind in ICMP6_ND[1:]]
    return out


@dataclass(frozen=True)
class Logged:
    """A port's log flows (``netlog``): the cookie of its accepted packets'
    (0: not logged) and of the rest's, and the groups whose rules' accepted
    packets are logged (None: every group's)."""
    accept_cookie: int = 0
    drop_cookie: int = 0
    accept_groups: frozenset[str] | None = None

    def logs_rule(self, groups: frozenset[str] | None) -> bool:
        return bool(self.accept_cookie) and (
            self.accept_groups is None or groups is None or bool(groups & self.accept_groups))


NOT_LOGGED = Logged()


def _rule_flows(p: PortSecurity, logged: Logged = NOT_LOGGED) -> list[Flow]:
    """The port's rules; a rule whose accepted packets are logged also copies
    them to the controller, under the port's accept cookie."""
    out = []
    for i, rule in enumerate(p.rules):
        groups = p.rule_groups[i] if i < len(p.rule_groups) else None
        accept_cookie = logged.accept_cookie if logged.logs_rule(groups) else 0
        log = "controller," if accept_cookie else ""
        egress = rule["direction"] == "egress"
        table = RULES_EGRESS if egress else RULES_INGRESS
        who = f"in_port={p.name}" if egress else f"reg5={p.ofport}"
        then = p.egress_accepted if egress else p.ingress_accepted
        for match in rule_matches(rule):
            if p.stateful:
                out.append(Flow(table, 70, f"ct_state=+new-est-inv+trk,{who},{match}",
                                f"ct(commit,zone={p.zone}),{log}{then}", accept_cookie))
            else:
                out.append(Flow(table, 70, f"{who},{match}", f"{log}{then}", accept_cookie))
    return out


def drop_log_flows(p: PortSecurity, drop_cookie: int) -> list[Flow]:
    """A packet of the port no rule accepts goes to the controller (and no
    further) under ``drop_cookie``, instead of the tables' silent drop."""
    return [Flow(RULES_EGRESS, 1, f"in_port={p.name}", "controller", drop_cookie),
            Flow(RULES_INGRESS, 1, f"reg5={p.ofport}", "controller", drop_cookie)]


def port_flows(p: PortSecurity, logged: Logged = NOT_LOGGED) -> list[Flow]:
    """Every flow one filtered port needs, with its log flows."""
    extra = drop_log_flows(p, logged.drop_cookie) if logged.drop_cookie else []
    flows = [Flow(INT_SWITCH, 100, f"in_port={p.name}",
                  f"load:{p.vlan}->{REG_NET},resubmit(,{BASE_EGRESS})"),
             Flow(INT_SWITCH, 90, f"dl_vlan={p.vlan},dl_dst={p.mac}",
                  f"strip_vlan,load:{p.ofport}->{REG_PORT},resubmit(,{BASE_INGRESS})"),
             Flow(ACCEPT_OR_INGRESS, 90, f"reg6={p.vlan},dl_dst={p.mac}",
                  f"load:{p.ofport}->{REG_PORT},resubmit(,{BASE_INGRESS})")]
    if not p.stateful:
        return flows + _egress_base(p) + _ingress_base(p) + _rule_flows(p, logged) + extra
    flows += [Flow(RULES_EGRESS, 100, f"ct_state=+est-rel-inv+trk,in_port={p.name}",
                  p.egress_accepted),
             Flow(RULES_EGRESS, 100, f"ct_state=+rel-inv+trk,in_port={p.name}",
                  p.egress_accepted),
             Flow(RULES_INGRESS, 100, f"ct_state=+est-rel-inv+trk,reg5={p.ofport}",
                  p.ingress_accepted),
             Flow(RULES_INGRESS, 100, f"ct_state=+rel-inv+trk,reg5={p.ofport}",
                  p.ingress_accepted)]
    return flows + _egress_base(p) + _ingress_base(p) + _rule_flows(p, logged) + extra


def unfiltered_flow(name: str, vlan: int) -> Flow:
    """A wired port nobody filters: its packets may still be for a filtered
    port of this host, so they pass table 73 with their local VLAN noted."""
    return Flow(INT_SWITCH, 100, f"in_port={name}",
                f"load:{vlan}->{REG_NET},resubmit(,{ACCEPT_OR_INGRESS})")


def firewall_flows(filtered: list[PortSecurity], unfiltered: list[tuple[str, int]],
                   logged: dict[str, Logged] | None = None) -> list[Flow]:
    """br-int's firewall flows for this host: the filtered ports' own, the
    entry of every other wired port (name, local VLAN), and the tables'
    defaults (invalid connections and unmatched packets dropped).
    ``logged``: the log flows of ports (by name) whose packets are logged."""
    flows = [Flow(ACCEPT_OR_INGRESS, 0, "", "NORMAL"),
             Flow(RULES_EGRESS, 0, "", "drop"), Flow(RULES_INGRESS, 0, "", "drop"),
             Flow(RULES_EGRESS, 110, "ct_state=+inv+trk", "drop"),
             Flow(RULES_INGRESS, 110, "ct_state=+inv+trk", "drop"),
             Flow(BASE_EGRESS, 0, "", "drop"), Flow(BASE_INGRESS, 0, "", "drop")]
    for port in filtered:
        flows += port_flows(port, (logged or {}).get(port.name, NOT_LOGGED))
    flows += [unfiltered_flow(name, vlan) for name, vlan in unfiltered]
    return sorted(set(flows))
