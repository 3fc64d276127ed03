"""What an L3 agent reports it has, for ``neutrino audit``: this host's
router namespaces (``qrouter-``, a distributed router's ``snat-`` and the
host's ``fip-`` ones), the addresses on their devices, the routes with a
next hop in their main table, the address translations their NAT table
does and whether an HA router's keepalived runs, read from the host (not
from what the agent last applied), so a namespace, an address, a route or
a NAT rule removed behind its back shows.
"""
from __future__ import annotations

import json
from typing import Any, Callable

import netaddr

from neutrino.agents import iproute
from neutrino.agents.l3 import live_trace, model, nat

SNAT_PREFIX, FIP_PREFIX = "snat-", "fip-"
# report key -> namespace prefix
KINDS = {"routers": model.NS_PREFIX, "snat": SNAT_PREFIX, "fip": FIP_PREFIX}


def namespace_addresses(text: str) -> list[str]:
    """The addresses (without prefix length) of ``ip -o addr show`` lines."""
    found = []
    for line in text.splitlines():
        words = line.split()
        for i, word in enumerate(words[:-1]):
            if word in ("inet", "inet6"):
                found.append(words[i + 1].split("/", 1)[0])
    return sorted(found)


def next_hop_routes(listed: list[dict[str, Any]]) -> list[str]:
    """``ip -j route show``'s routes through a next hop, as ``D via N`` (a
    host route's destination with its ``/32``): the routes the agent or
    keepalived add, not the kernel's connected ones nor the IPv6 default
    routes it learns from router advertisements."""
    found = set()
    for route in listed:
        if not route.get("gateway") or route.get("protocol") == "ra":
            continue
        dst = route.get("dst", "default")
        if dst != "default":
            dst = str(netaddr.IPNetwork(dst).cidr)
        found.add(f"{dst} via {route['gateway']}")
    return sorted(found)


def _matched(rule: dict[str, Any], protocols: tuple[str, ...], field: str) -> Any:
    """What a rule matches as ``<protocol> <field>`` (None: it does not)."""
    for item in rule.get("expr", ()):
        match = item.get("match")
        payload = (match or {}).get("left", {}).get("payload", {})
        if match and payload.get("protocol") in protocols and payload.get("field") == field:
            return match.get("right")
    return None


def _address(rule: dict[str, Any], field: str) -> str | None:
    """The one address a rule matches as ``ip <field>`` (None: not one address)."""
    right = _matched(rule, ("ip",), field)
    return right if isinstance(right, str) else None


def _ports(value: Any) -> str:
    """A port (80) or a range (``{"range": [8000, 8010]}``) as ``80`` or ``8000-8010``."""
    if isinstance(value, dict) and "range" in value:
        low, high = value["range"]
        return f"{low}-{high}" if low != high else str(low)
    return str(value)


def _forwarding(rule: dict[str, Any], target: dict[str, Any]) -> str | None:
    """A port forwarding's DNAT in audit's words (None: not one)."""
    for protocol in ("tcp", "udp"):
        dport = _matched(rule, (protocol,), "dport")
        if dport is not None:
            return (f"dnat {protocol} {_address(rule, 'daddr')}:{_ports(dport)} to "
                    f"{target['addr']}:{_ports(target['port'])}")
    return None


def translations(ruleset: dict[str, Any] | None) -> list[str]:
    """The translations of a router's NAT table (``nft -j``'s answer), in
    the words audit compares: ``dnat A to B`` (a floating IP in),
    ``snat B to A`` (its instance out), ``snat to G`` (the gateway's SNAT of
    the rest), ``dnat tcp A:80 to B:8080`` (a port forwarding)."""
    found = set()
    tables = live_trace.chains(ruleset or {})
    for rule in tables.get("prerouting", []):
        for item in rule.get("expr", ()):
            target = item.get("dnat")
            if not isinstance(target, dict) or not _address(rule, "daddr"):
                continue
            if "port" in target:
                forwarding = _forwarding(rule, target)
                if forwarding:
                    found.add(forwarding)
            else:
                found.add(f"dnat {_address(rule, 'daddr')} to {target['addr']}")
    for rule in tables.get("postrouting", []):
        for item in rule.get("expr", ()):
            target = item.get("snat")
            if isinstance(target, dict) and "addr" in target:
                source = _address(rule, "saddr")
                found.add(f"snat {source} to {target['addr']}" if source
                          else f"snat to {target['addr']}")
    return sorted(found)


def own_id(ns: str, prefix: str) -> str | None:
    """The router (or, for ``fip-``, external network) id of one of this
    agent's namespaces, None for another's: the agent names them through
    ``model.namespace_name``, which may add a suffix (emulated hosts
    sharing one kernel)."""
    tail = model.namespace_name("", prefix)[len(prefix):]
    if not ns.startswith(prefix) or not ns.endswith(tail):
        return None
    return ns[len(prefix):len(ns) - len(tail)] or None


def _namespace(ns: str, with_nat: bool) -> dict[str, Any]:
    text = iproute.ip("-o", "addr", "show", namespace=ns, check=False)
    routes = [route for version in ("-4", "-6") for route in json.loads(
        iproute.ip("-j", version, "route", "show", namespace=ns, check=False) or "[]")]
    found: dict[str, Any] = {"addresses": namespace_addresses(text),
                             "routes": next_hop_routes(routes)}
    if with_nat:
        listed = iproute.netns_exec(ns, "nft", "-j", "list", "table", nat.FAMILY,
                                    nat.TABLE, check=False)
        found["nat"] = translations(json.loads(listed) if listed.strip() else None)
    return found


def realised(namespaces: list[str],
             keepalived_running: Callable[[str], bool] = lambda router_id: False
             ) -> dict[str, Any]:
    """``namespaces``: the host's as the agent's host adapter sees them (on
    an emulated host, the ones its agent made); ``keepalived_running``:
    whether a router's keepalived runs (told for every ``qrouter-``)."""
    out: dict[str, dict[str, Any]] = {kind: {} for kind in KINDS}
    for ns in namespaces:
        for kind, prefix in KINDS.items():
            found_id = own_id(ns, prefix)
            if found_id is None:
                continue
            found = _namespace(ns, with_nat=kind != "fip")
            if kind == "routers":
                found["keepalived"] = keepalived_running(found_id)
            out[kind][found_id] = found
    return out
