"""One router's metering labels as one nftables table (pure).

The server's router dict (``get_sync_data_metering``: ``gw_port_id``,
``_metering_labels`` with their ``rules``) becomes a table in the router's
namespace, beside the L3 agent's NAT table and never touching it. Semantics
are upstream's iptables metering driver's, in nft:

- counting happens in the ``forward`` hook, on the gateway (``qg-``) device:
  ``egress`` leaves by it, ``ingress`` enters by it; forwarding sees tenant
  addresses (after DNAT, before SNAT), so prefixes name tenant-side addresses
  as upstream's rules do;
- ``remote_ip_prefix`` (deprecated upstream) is the source of egress and the
  destination of ingress traffic; ``source_ip_prefix`` /
  ``destination_ip_prefix`` match what they say;
- each label has a chain: its ``excluded`` rules first (they return
  uncounted), then its counting rules; a packet is counted once per label
  (upstream's chains count a packet again for each further rule it
  matches, which only overlapping rules can do);
- each label has a named counter, read and zeroed atomically
  (``nft reset counters``) at every measurement.

A router without a gateway keeps its labels' counters (reading zero), as
upstream keeps their chains.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import netaddr

from neutrino.agents.l3.model import GATEWAY_PREFIX, device_name, namespace_name

FAMILY = "inet"
TABLE = "neutrino_meter"
LABELS_KEY = "_metering_labels"  # upstream's METERING_LABEL_KEY
COUNTER_PREFIX = "label-"


@dataclasses.dataclass(frozen=True)
class Rule:
    direction: str  # ingress / egress
    excluded: bool
    remote_ip_prefix: str | None = None
    source_ip_prefix: str | None = None
    destination_ip_prefix: str | None = None


@dataclasses.dataclass(frozen=True)
class Label:
    id: str
    name: str
    shared: bool
    rules: tuple[Rule, ...]


@dataclasses.dataclass(frozen=True)
class MeteredRouter:
    router_id: str
    project_id: str | None
    namespace: str
    gateway_device: str | None
    labels: tuple[Label, ...]


def _rule(data: dict[str, Any]) -> Rule:
    return Rule(direction=data["direction"], excluded=bool(data.get("excluded")),
                remote_ip_prefix=data.get("remote_ip_prefix"),
                source_ip_prefix=data.get("source_ip_prefix"),
                destination_ip_prefix=data.get("destination_ip_prefix"))


def metered_router(router: dict[str, Any]) -> MeteredRouter:
    """What to install for one router of the server's sync data."""
    gw = router.get("gw_port_id")
    labels = tuple(Label(id=label["id"], name=label.get("name") or "",
                         shared=bool(label.get("shared")),
                         rules=tuple(_rule(r) for r in label.get("rules") or ()))
                   for label in router.get(LABELS_KEY) or ())
    return MeteredRouter(router_id=router["id"],
                         project_id=router.get("project_id") or router.get("tenant_id"),
                         namespace=namespace_name(router["id"]),
                         gateway_device=device_name(GATEWAY_PREFIX, gw) if gw else None,
                         labels=labels)


def counter_name(label_id: str) -> str:
    return COUNTER_PREFIX + label_id


def label_of_counter(name: str) -> str | None:
    return name[len(COUNTER_PREFIX):] if name.startswith(COUNTER_PREFIX) else None


def _address(direction: str, prefix: str) -> str:
    family = "ip6" if netaddr.IPNetwork(prefix).version == 6 else "ip"
    return f"{family} {direction} {netaddr.IPNetwork(prefix).cidr}"


def match(rule: Rule, device: str) -> str | None:
    """The nft match of one rule on the gateway ``device``; None when it can
    match nothing (an IPv4 source with an IPv6 destination)."""
    egress = rule.direction == "egress"
    parts = [f'oifname "{device}"' if egress else f'iifname "{device}"']
    if rule.remote_ip_prefix:
        parts.append(_address("saddr" if egress else "daddr", rule.remote_ip_prefix))
    else:
        prefixes = [p for p in (rule.source_ip_prefix, rule.destination_ip_prefix) if p]
        if len({netaddr.IPNetwork(p).version for p in prefixes}) > 1:
            return None
        if rule.source_ip_prefix:
            parts.append(_address("saddr", rule.source_ip_prefix))
        if rule.destination_ip_prefix:
            parts.append(_address("daddr", rule.destination_ip_prefix))
    return " ".join(parts)


def label_rules(label: Label, device: str | None) -> list[str]:
    """The label chain's rules: exclusions first, then the counting rules."""
    if device is None:
        return []
    out = []
    for excluded in (True, False):
        for rule in label.rules:
            if rule.excluded != excluded:
                continue
            m = match(rule, device)
            if m is None:
                continue
            out.append(f"{m} return" if excluded
                       else f'{m} counter name "{counter_name(label.id)}" return')
    return out


def table(router: MeteredRouter) -> str:
    """The table definition (one statement per line: nft rejects ``}`` after a rule)."""
    lines = [f"table {FAMILY} {TABLE} {{"]
    for label in router.labels:
        lines += [f"  counter {counter_name(label.id)} {{", "  }"]
    lines += ["  chain forward {", "    type filter hook forward priority filter; policy accept;"]
    lines += [f"    jump {counter_name(label.id)}" for label in router.labels]
    lines.append("  }")
    for label in router.labels:
        lines.append(f"  chain {counter_name(label.id)} {{")
        lines += [f"    {rule}" for rule in label_rules(label, router.gateway_device)]
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def replace_script(router: MeteredRouter) -> str:
    """Declare (so delete cannot fail), delete, redefine: one nft transaction."""
    return f"table {FAMILY} {TABLE}\ndelete table {FAMILY} {TABLE}\n" + table(router)


def delete_script() -> str:
    return f"table {FAMILY} {TABLE}\ndelete table {FAMILY} {TABLE}\n"


def read_counters(nft_json: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """``nft -j reset counters`` output -> {label id: (packets, bytes)}."""
    out = {}
    for item in nft_json.get("nftables", ()):
        counter = item.get("counter")
        if not counter or counter.get("table") != TABLE:
            continue
        label_id = label_of_counter(counter.get("name", ""))
        if label_id is not None:
            out[label_id] = (int(counter.get("packets", 0)), int(counter.get("bytes", 0)))
    return out
