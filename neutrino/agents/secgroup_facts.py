"""A port's security-group facts, read from the server's answer, for any
firewall driver (OpenFlow on br-int, nftables on Linux bridges).

The server answers ``security_group_info_for_devices`` with the groups'
rules once and the member addresses of remote groups once; a driver needs,
per port, its MAC, the (MAC, address) pairs it may send from and its rules
with every remote group turned into plain address prefixes. Those facts are
the same whatever enforces them, so they are computed here once.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import netaddr

# protocol names and numbers -> (IPv4 name, IPv6 name) as OpenFlow spells them
PROTOCOLS = {"tcp": ("tcp", "tcp6"), "6": ("tcp", "tcp6"),
             "udp": ("udp", "udp6"), "17": ("udp", "udp6"),
             "sctp": ("sctp", "sctp6"), "132": ("sctp", "sctp6"),
             "icmp": ("icmp", "icmp6"), "1": ("icmp", "icmp6"),
             "ipv6-icmp": ("icmp6", "icmp6"), "icmpv6": ("icmp6", "icmp6"),
             "58": ("icmp6", "icmp6")}
PROTOCOL_NUMBERS = {"ah": 51, "dccp": 33, "egp": 8, "esp": 50, "gre": 47, "igmp": 2,
                    "ipv6-encap": 41, "ipv6-frag": 44, "ipv6-nonxt": 59,
                    "ipv6-opts": 60, "ipv6-route": 43, "ospf": 89, "pgm": 113,
                    "rsvp": 46, "udplite": 136, "vrrp": 112}
ICMP6_ND = (133, 134, 135, 136)  # RS, RA, NS, NA


@dataclass(frozen=True)
class PortFacts:
    mac: str
    addresses: tuple[tuple[str, str], ...]  # (mac, ip or cidr) allowed as source
    rules: tuple[dict[str, Any], ...] = field(default=())  # remote groups expanded
    stateful: bool = True  # False: the port's groups are stateless (no conntrack)
    # the groups each rule (same position) comes from; one rule may be in several
    rule_groups: tuple[frozenset[str], ...] = field(default=())


def link_local(mac: str) -> str:
    """The IPv6 link-local address the port derives from its MAC (EUI-64)."""
    return str(netaddr.EUI(mac).ipv6_link_local())


def port_facts(info: dict[str, Any], port_id: str) -> PortFacts | None:
    """A port's facts from a ``security_group_info_for_devices`` answer, or
    None when the port is not to be filtered (unknown, trusted, or port
    security off)."""
    device = (info.get("devices") or {}).get(port_id)
    if not device or device.get("port_security_enabled") is False:
        return None
    mac = device["mac_address"]
    addresses = [(mac, ip) for ip in device.get("fixed_ips") or []]
    addresses.append((mac, link_local(mac)))
    for pair in device.get("allowed_address_pairs") or []:
        addresses.append((pair.get("mac_address") or mac, pair["ip_address"]))
    groups = info.get("security_groups") or {}
    members = info.get("sg_member_ips") or {}
    rules: list[dict[str, Any]] = []
    sources: list[set[str]] = []
    stateful = True
    for group in device.get("security_groups") or []:
        for rule in groups.get(group, []):
            # a port's groups are all stateful or all stateless (the API refuses a mix)
            stateful = stateful and rule.get("stateful", True) is not False
            for expanded in expand_remote(rule, members):
                if expanded not in rules:
                    rules.append(expanded)
                    sources.append(set())
                sources[rules.index(expanded)].add(group)
    return PortFacts(mac, tuple(dict.fromkeys(addresses)), tuple(rules), stateful,
                     tuple(frozenset(s) for s in sources))


def port_groups(info: dict[str, Any], port_id: str) -> tuple[set[str], set[str]]:
    """The groups a port uses: its own, and those its rules name as remote
    (whose member changes change its filtering)."""
    device = (info.get("devices") or {}).get(port_id) or {}
    return (set(device.get("security_groups") or []),
            set(device.get("security_group_source_groups") or [])
            | set(device.get("security_group_remote_address_groups") or []))


def expand_remote(rule: dict[str, Any], members: dict[str, Any]) -> list[dict[str, Any]]:
    """A rule naming a remote group (or address group) as one rule per
    member address of the rule's ethertype; other rules unchanged."""
    remote = rule.get("remote_group_id") or rule.get("remote_address_group_id")
    base = {k: v for k, v in rule.items()
            if k not in ("remote_group_id", "remote_address_group_id")}
    if not remote:
        return [base]
    key = "source_ip_prefix" if rule["direction"] == "ingress" else "dest_ip_prefix"
    ips = sorted({m[0] for m in (members.get(remote) or {}).get(rule["ethertype"], [])})
    return [{**base, key: str(netaddr.IPNetwork(ip).cidr)} for ip in ips]
