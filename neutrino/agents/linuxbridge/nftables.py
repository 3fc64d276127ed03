"""Security groups on Linux bridges as one nftables ruleset (pure core).

Bridged frames pass two hooks: the bridge family's forward hook, where the
bridge ports are known but conntrack is not (no nf_conntrack_bridge here),
and, through br_netfilter, the inet family's forward hook, where conntrack
works but the ports are not known (both devices read as the bridge). So the
rules mark, then filter:

- bridge ``forward`` (priority -200): a frame from a filtered tap first
  passes that port's anti-spoofing chain (only its MAC with its addresses,
  DHCP discovery, ND from ``::``; no DHCP or RA answers of its own), then
  gets the port's number in the mark's high 16 bits; a frame to a filtered
  tap gets that port's number in the low 16 bits.
- inet ``forward``: the high half picks the sender's egress chain, the low
  half the receiver's ingress chain; each returns what its rules (or
  conntrack: established, related) allow and drops the rest. A frame
  between two filtered ports of one host passes both.

Ports with port security off, and ports the server does not filter, get
no rule at all. The whole ruleset is replaced in one ``nft -f``
transaction.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import netaddr

from neutrino.agents.secgroup_facts import PROTOCOL_NUMBERS, PROTOCOLS, PortFacts

TABLE = "neutrino_lb"
MAX_PORTS = 0xffff


@dataclass(frozen=True)
class FilteredPort:
    tap: str
    facts: PortFacts


def _family(cidr: str) -> str:
    return "ip6" if netaddr.IPNetwork(cidr).version == 6 else "ip"


def rule_expr(rule: dict[str, Any]) -> str:
    """One security-group rule as an nftables match (inet family)."""
    v6 = rule.get("ethertype") == "IPv6"
    fam = "ip6" if v6 else "ip"
    parts = [f"meta nfproto {'ipv6' if v6 else 'ipv4'}"]
    if rule.get("source_ip_prefix"):
        parts.append(f"{fam} saddr {netaddr.IPNetwork(rule['source_ip_prefix']).cidr}")
    if rule.get("dest_ip_prefix"):
        parts.append(f"{fam} daddr {netaddr.IPNetwork(rule['dest_ip_prefix']).cidr}")
    proto = rule.get("protocol")
    proto = str(proto).lower() if proto not in (None, "any") else None
    low, high = rule.get("port_range_min"), rule.get("port_range_max")
    if proto in PROTOCOLS:
        name = PROTOCOLS[proto][0]
        if name.startswith("icmp"):
            icmp = "icmpv6" if v6 or name == "icmp6" else "icmp"
            parts.append(f"meta l4proto {'ipv6-icmp' if icmp == 'icmpv6' else 'icmp'}")
            if low is not None:
                parts.append(f"{icmp} type {int(low)}")
                if high is not None:
                    parts.append(f"{icmp} code {int(high)}")
        else:
            parts.append(f"meta l4proto {name}")
            if low is not None:
                ports = str(int(low)) if high in (None, low) else f"{int(low)}-{int(high)}"
                parts.append(f"{name} dport {ports}")
    elif proto is not None:
        parts.append(f"meta l4proto {PROTOCOL_NUMBERS.get(proto, proto)}")
    return " ".join(parts)


def _spoof_chain(n: int, facts: PortFacts) -> list[str]:
    mac = facts.mac
    lines = [f"chain p{n}_spoof {{",
             f"ether saddr {mac} ip saddr 0.0.0.0 udp sport 68 udp dport 67 return",
             "udp sport 67 udp dport 68 drop",
             "udp sport 547 udp dport 546 drop",
             "icmpv6 type nd-router-advert drop",
             f"ether saddr {mac} ip6 saddr :: icmpv6 type "
             "{ nd-neighbor-solicit, mld-listener-report, mld2-listener-report } return"]
    for pair_mac, cidr in facts.addresses:
        net = netaddr.IPNetwork(cidr).cidr
        if net.version == 4:
            lines.append(f"ether saddr {pair_mac} arp saddr ether {pair_mac} "
                         f"arp saddr ip {net} return")
        lines.append(f"ether saddr {pair_mac} {_family(cidr)} saddr {net} return")
    lines += ["counter drop", "}"]
    return lines


def _filter_chains(n: int, facts: PortFacts) -> list[str]:
    head = ["ct state established,related return", "ct state invalid drop"]
    egress = [f"chain p{n}_egress {{", *head,
              "udp sport 68 udp dport 67 return", "udp sport 546 udp dport 547 return",
              "icmpv6 type { nd-router-solicit, nd-neighbor-solicit, nd-neighbor-advert } "
              "return"]
    ingress = [f"chain p{n}_ingress {{", *head,
               "udp sport 67 udp dport 68 return", "udp sport 547 udp dport 546 return",
               "icmpv6 type { nd-router-advert, nd-neighbor-solicit, nd-neighbor-advert } "
               "return"]
    for rule in facts.rules:
        chain = egress if rule["direction"] == "egress" else ingress
        line = f"{rule_expr(rule)} return"
        if line not in chain:
            chain.append(line)
    return egress + ["counter drop", "}"] + ingress + ["counter drop", "}"]


def ruleset(ports: list[FilteredPort]) -> str:
    """The file for ``nft -f`` that replaces both tables with the filtering
    of ``ports`` (an empty list removes every rule)."""
    if len(ports) > MAX_PORTS:
        raise ValueError(f"at most {MAX_PORTS} filtered ports per host")
    out = [f"table bridge {TABLE}", f"delete table bridge {TABLE}",
           f"table inet {TABLE}", f"delete table inet {TABLE}"]
    if not ports:
        return "\n".join(out) + "\n"
    mark = ["chain forward {", "type filter hook forward priority -200; policy accept;",
            "meta mark set 0x0"]
    spoof: list[str] = []
    dispatch = ["chain forward {", "type filter hook forward priority 0; policy accept;"]
    chains: list[str] = []
    for n, port in enumerate(sorted(ports, key=lambda p: p.tap), start=1):
        mark += [f'iifname "{port.tap}" jump p{n}_spoof',
                 f'iifname "{port.tap}" meta mark set {n << 16:#010x}',
                 f'oifname "{port.tap}" meta mark set meta mark or {n:#06x}']
        spoof += _spoof_chain(n, port.facts)
        dispatch += [f"meta mark and 0xffff0000 == {n << 16:#010x} jump p{n}_egress",
                     f"meta mark and 0x0000ffff == {n:#06x} jump p{n}_ingress"]
        chains += _filter_chains(n, port.facts)
    out += [f"table bridge {TABLE} {{", *mark, "}", *spoof, "}",
            f"table inet {TABLE} {{", *dispatch, "}", *chains, "}"]
    return "\n".join(out) + "\n"
