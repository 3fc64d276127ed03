"""The L3 agent's ``fwaas_v2`` extension, pure: a router's firewall groups as
one nftables table, and the statuses to report for them.

As upstream's iptables driver, a group applies on the router's interfaces
(``qr-`` devices) in the forward path: its ingress policy to what leaves
the router through the port (towards the port's network), its egress
policy to what enters the router from it. Each direction is stateful:
packets the kernel tracks as invalid are dropped; replies (and related
packets, ICMP errors) of a tracked connection pass, as their connection's
first packets were judged by the other direction's policy; every packet a
connection's initiator sends is judged by the policy's enabled rules in
order (a rule matches its IP version, protocol, addresses and port ranges;
``allow`` accepts, ``deny`` drops, ``reject`` answers ICMP port
unreachable), and what no rule matches is dropped. So a policy change
keeps the established connections the new policy still allows, untouched,
and stops the others at their next packet, with no conntrack flush (which
upstream's driver needs, its rules passing any established packet). A
group set administratively down drops everything on its ports. Traffic on ports in no group is not filtered.

The table is ``inet`` (both IP versions) and separate from the NAT table:
forward comes after DNAT, so rules see instances' fixed addresses.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Any, Iterable

from neutrino.agents.l3 import model

EXTENSION = "fwaas_v2"  # upstream's L3 agent extension name
FAMILY = "inet"
TABLE = "neutrino_fwaas"
ACTIVE, DOWN, ERROR = "ACTIVE", "DOWN", "ERROR"
_VERDICTS = {"allow": "accept", "deny": "drop", "reject": "reject"}
# protocol numbers: nft would read names from /etc/protocols, which a host may lack
_NUMBERS = {"tcp": 6, "udp": 17, "icmp": 1, "ipv6-icmp": 58, "sctp": 132, "dccp": 33}


@dataclasses.dataclass(frozen=True)
class Rule:
    ip_version: int
    protocol: str | None
    source: str | None
    destination: str | None
    source_port: str | None
    destination_port: str | None
    action: str


@dataclasses.dataclass(frozen=True)
class PortFirewall:
    """One router interface's group: its device and the rules of each direction."""

    device: str
    group_id: str
    admin_state_up: bool
    ingress: tuple[Rule, ...]
    egress: tuple[Rule, ...]


def policy_rules(listed: Iterable[dict[str, Any]]) -> tuple[Rule, ...]:
    """A policy's enabled rules, in order (a disabled one is skipped)."""
    return tuple(Rule(int(r.get("ip_version") or 4), r.get("protocol"),
                      r.get("source_ip_address"), r.get("destination_ip_address"),
                      r.get("source_port"), r.get("destination_port"), str(r["action"]))
                 for r in listed if r.get("enabled", True))


def port_firewalls(router: dict[str, Any]) -> tuple[PortFirewall, ...]:
    """``_firewall_groups`` (the groups on the router's interfaces, each with
    its ``ports`` among them and upstream's ``ingress_rule_list``/
    ``egress_rule_list``) as one entry per interface device."""
    interfaces = {p["id"] for p in router.get("_interfaces", ())}
    out = []
    for group in router.get("_firewall_groups", ()):
        for port_id in group.get("ports", ()):
            if port_id not in interfaces:
                continue
            out.append(PortFirewall(
                model.device_name(model.INTERNAL_PREFIX, port_id), str(group["id"]),
                bool(group.get("admin_state_up", True)),
                policy_rules(group.get("ingress_rule_list", ())),
                policy_rules(group.get("egress_rule_list", ()))))
    return tuple(sorted(out, key=lambda p: p.device))


def _ports(keyword: str, text: str) -> str:
    low, _, high = text.partition(":")
    return f"th {keyword} {low}-{high}" if high and high != low else f"th {keyword} {low}"


def rule_text(rule: Rule) -> str:
    """One rule as an nft statement."""
    ip = "ip" if rule.ip_version == 4 else "ip6"
    parts = [f"meta nfproto {'ipv4' if rule.ip_version == 4 else 'ipv6'}"]
    if rule.protocol:
        proto = rule.protocol
        if proto == "icmp" and rule.ip_version == 6:
            proto = "ipv6-icmp"
        parts.append(f"meta l4proto {_NUMBERS[proto]}")
    if rule.source:
        parts.append(f"{ip} saddr {rule.source}")
    if rule.destination:
        parts.append(f"{ip} daddr {rule.destination}")
    if rule.source_port:
        parts.append(_ports("sport", rule.source_port))
    if rule.destination_port:
        parts.append(_ports("dport", rule.destination_port))
    parts.append(_VERDICTS[rule.action])
    return " ".join(parts)


def _chain_name(direction: str, device: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_-]", "_", f"{direction}-{device}")


def _chain(name: str, fw: PortFirewall, rules: tuple[Rule, ...]) -> list[str]:
    lines = [f"  chain {name} {{", "    ct state invalid drop"]
    if fw.admin_state_up:
        lines.append("    ct direction reply accept")
        lines.append("    ct state related accept")
        lines.extend(f"    {rule_text(r)}" for r in rules)
    lines.append("    drop")
    lines.append("  }")
    return lines


def table(firewalls: tuple[PortFirewall, ...]) -> str:
    lines = [f"table {FAMILY} {TABLE} {{"]
    jumps = []
    for fw in firewalls:
        ingress, egress = _chain_name("i", fw.device), _chain_name("o", fw.device)
        lines += _chain(ingress, fw, fw.ingress) + _chain(egress, fw, fw.egress)
        jumps += [f'    oifname "{fw.device}" jump {ingress}',
                  f'    iifname "{fw.device}" jump {egress}']
    lines.append("  chain forward {")
    lines.append("    type filter hook forward priority filter; policy accept;")
    lines.extend(jumps)
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def delete_script() -> str:
    """Declare (so delete cannot fail), delete: nothing filtered."""
    return f"table {FAMILY} {TABLE}\ndelete table {FAMILY} {TABLE}\n"


def replace_script(firewalls: tuple[PortFirewall, ...]) -> str:
    """The whole table replaced in one nft transaction; conntrack is left
    as it is, so connections the new rules allow go on."""
    if not firewalls:
        return delete_script()
    return delete_script() + table(firewalls)


def statuses(firewalls: tuple[PortFirewall, ...], ok: bool) -> dict[str, str]:
    """group id -> the status to report for the groups applied here."""
    out: dict[str, str] = {}
    for fw in firewalls:
        status = (ACTIVE if fw.admin_state_up else DOWN) if ok else ERROR
        if out.get(fw.group_id) != ERROR:
            out[fw.group_id] = status
    return out
