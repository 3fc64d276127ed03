"""What an L3 agent reports it has, for ``neutrino audit``: this host's
``qrouter-`` namespaces, the addresses on their devices and the address
translations their NAT table does, read from the host (not from what the
agent last applied), so a namespace, an address or a NAT rule removed
behind its back shows."""
from __future__ import annotations

import json
from typing import Any

from neutrino.agents import iproute
from neutrino.agents.l3 import live_trace, nat
from neutrino.agents.l3.model import NS_PREFIX


def namespace_addresses(text: str) -> list[str]:
    """The addresses (without prefix length) of ``ip -o addr show`` lines."""
    found = []
    for line in text.splitlines():
        words = line.split()
        for i, word in enumerate(words[:-1]):
            if word in ("inet", "inet6"):
                found.append(words[i + 1].split("/", 1)[0])
    return sorted(found)


def _matched(rule: dict[str, Any], field: str) -> str | None:
    """The one address a rule matches as ``ip <field>`` (None: not one address)."""
    for item in rule.get("expr", ()):
        match = item.get("match")
        if match and match.get("left", {}).get("payload", {}).get("field") == field \
                and isinstance(match.get("right"), str):
            return str(match["right"])
    return None


def translations(ruleset: dict[str, Any] | None) -> list[str]:
    """The translations of a router's NAT table (``nft -j``'s answer), in
    the words audit compares: ``dnat A to B`` (a floating IP in),
    ``snat B to A`` (its instance out), ``snat to G`` (the gateway's SNAT of
    the rest); port forwardings (a port in the translation) are left out."""
    found = set()
    tables = live_trace.chains(ruleset or {})
    for rule in tables.get("prerouting", []):
        for item in rule.get("expr", ()):
            target = item.get("dnat")
            if isinstance(target, dict) and "port" not in target and _matched(rule, "daddr"):
                found.add(f"dnat {_matched(rule, 'daddr')} to {target['addr']}")
    for rule in tables.get("postrouting", []):
        for item in rule.get("expr", ()):
            target = item.get("snat")
            if isinstance(target, dict) and "addr" in target:
                source = _matched(rule, "saddr")
                found.add(f"snat {source} to {target['addr']}" if source
                          else f"snat to {target['addr']}")
    return sorted(found)


def realised(namespaces: list[str]) -> dict[str, Any]:
    """``namespaces``: the host's as the agent's host adapter sees them (on
    an emulated host, the ones its agent made)."""
    routers = {}
    for ns in namespaces:
        if ns.startswith(NS_PREFIX):
            text = iproute.ip("-o", "addr", "show", namespace=ns, check=False)
            listed = iproute.netns_exec(ns, "nft", "-j", "list", "table", nat.FAMILY,
                                        nat.TABLE, check=False)
            routers[ns[len(NS_PREFIX):]] = {
                "addresses": namespace_addresses(text),
                "nat": translations(json.loads(listed) if listed.strip() else None)}
    return {"routers": routers}
