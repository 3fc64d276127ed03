"""A packet run through a router's namespace, for ``neutrino trace --live``.

The server's tracer says from the API's facts where a router sends a packet
and how it translates it; only the namespace knows what its routes and its
NAT table (``nat.TABLE``) do now. ``decide`` is pure: the table as ``nft
-j`` lists it and a route lookup in, the router's hops out: the DNAT of
the ``prerouting`` chain, the kernel's route (``ip route get ... iif``) and
the SNAT of the ``postrouting`` chain, each naming the rule or route that
decided it. The chains are evaluated by their rules' semantics for the
expressions the agent writes (addresses, prefixes and sets, ports, device
names, the external mark, ``ct status dnat``); nft's own tracing needs a
real packet, which a question must not send. ``trace`` reads the host.

The server names the namespace a leg concerns (``packet["namespace"]``):
a router's ``qrouter-`` (entered by an interface ``qr-``, its gateway
``qg-`` or, distributed, from the host's ``fip-`` by ``rfp-``), a
distributed router's ``snat-`` (by a SNAT port ``sg-`` or ``qg-``), or
the host's ``fip-`` namespace of an external network (by its gateway
``fg-`` or from the router by ``fpr-``). ``entering`` says which
namespace and device that is; the names are the agent's own
(``model.namespace_name``), so they follow however it names them.
"""
from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass
from typing import Any, Callable

from neutrino.agents import iproute
from neutrino.agents.l3 import dvr, model, nat
from neutrino.agents.l3.model import GATEWAY_PREFIX, INTERNAL_PREFIX, device_name

# (destination, source, entering device) -> ``ip -j route get``'s answer; raises
# LookupError with the kernel's reason when it has no route
RouteLookup = Callable[[str, str, str], dict[str, Any]]
NO_MATCH = object()


@dataclass
class _State:
    src: str
    dst: str
    protocol: str
    dport: int | None
    iif: str
    oif: str | None = None
    mark: int = 0
    dnat: bool = False


def _address_in(address: str, right: Any) -> bool:
    if isinstance(right, dict) and "set" in right:
        return any(_address_in(address, item) for item in right["set"])
    if isinstance(right, dict) and "prefix" in right:
        net = ipaddress.ip_network(f"{right['prefix']['addr']}/{right['prefix']['len']}",
                                   strict=False)
        return ipaddress.ip_address(address) in net
    if isinstance(right, dict) and "range" in right:
        low, high = (ipaddress.ip_address(a) for a in right["range"])
        return low <= ipaddress.ip_address(address) <= high
    if isinstance(right, str):
        return ipaddress.ip_address(address) in ipaddress.ip_network(right, strict=False)
    return False


def _value_in(value: Any, right: Any) -> bool:
    if isinstance(right, dict) and "set" in right:
        return any(_value_in(value, item) for item in right["set"])
    if isinstance(right, dict) and "range" in right:
        return bool(right["range"][0] <= value <= right["range"][1])
    return bool(value == right)


def _holds(match: dict[str, Any], state: _State) -> bool | None:
    """Whether one ``match`` expression holds; None: an expression this
    evaluator does not know (the rule is then taken not to match)."""
    left, right, op = match["left"], match["right"], match.get("op", "==")
    result: bool
    if "payload" in left:
        field, proto = left["payload"].get("field"), left["payload"].get("protocol")
        if proto in ("ip", "ip6") and field in ("saddr", "daddr"):
            result = _address_in(state.src if field == "saddr" else state.dst, right)
        elif proto in ("tcp", "udp", "sctp") and field == "dport":
            result = state.protocol == proto and state.dport is not None and _value_in(
                state.dport, right)
        else:
            return None
    elif "meta" in left:
        key = left["meta"].get("key")
        if key in ("iifname", "oifname"):
            result = _value_in(state.iif if key == "iifname" else state.oif, right)
        elif key == "mark":
            result = state.mark == right
        elif key == "l4proto":
            result = _value_in(state.protocol, right)
        else:
            return None
    elif "ct" in left and left["ct"].get("key") == "status":
        result = state.dnat if right == "dnat" or right == ["dnat"] else False
    elif "rt" in left and left["rt"].get("key") == "ipsec":
        result = right is False  # what the kernel routes here is no IPsec tunnel
    else:
        return None
    return not result if op == "!=" else result


def render(expr: list[dict[str, Any]]) -> str:
    """A rule's expressions in a compact nft-like text (to name it)."""
    words = []
    for item in expr:
        if "match" in item:
            left, right = item["match"]["left"], item["match"]["right"]
            what = " ".join(str(v) for part in left.values() for v in part.values())
            op = item["match"].get("op", "==")
            words.append(f"{what}{'' if op in ('==', 'in') else ' ' + op} {_text(right)}")
        else:
            for stmt, args in item.items():
                if isinstance(args, dict) and "addr" in args:
                    port = f":{args['port']}" if "port" in args else ""
                    words.append(f"{stmt} to {args['addr']}{port}")
                elif stmt not in ("counter",):
                    words.append(stmt)
    return " ".join(words)


def _text(right: Any) -> str:
    if isinstance(right, dict) and "set" in right:
        return "{ " + ", ".join(_text(i) for i in right["set"]) + " }"
    if isinstance(right, dict) and "prefix" in right:
        return f"{right['prefix']['addr']}/{right['prefix']['len']}"
    if isinstance(right, dict) and "range" in right:
        return "-".join(str(i) for i in right["range"])
    return json.dumps(right) if isinstance(right, str) and " " in right else str(right)


def chains(ruleset: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Chain name -> its rules in order, from ``nft -j list table``'s answer."""
    out: dict[str, list[dict[str, Any]]] = {}
    for item in ruleset.get("nftables", ()):
        if "chain" in item:
            out.setdefault(item["chain"]["name"], [])
        elif "rule" in item:
            out.setdefault(item["rule"]["chain"], []).append(item["rule"])
    return out


def _run_chain(rules: list[dict[str, Any]], state: _State) -> tuple[dict[str, Any] | None, Any]:
    """The first rule ending the chain's evaluation and its verdict statement."""
    for rule in rules:
        for item in rule["expr"]:
            if "match" in item:
                if not _holds(item["match"], state):
                    break  # the next rule
                continue
            if "mangle" in item and item["mangle"]["key"].get("meta", {}).get("key") == "mark":
                state.mark = int(item["mangle"]["value"])
                continue
            for verdict in ("dnat", "snat", "masquerade", "accept", "drop", "return"):
                if verdict in item:
                    return rule, (verdict, item[verdict])
    return None, NO_MATCH


def decide(ruleset: dict[str, Any] | None, route: RouteLookup, packet: dict[str, Any],
           iif: str) -> dict[str, Any]:
    """The router's hops for ``packet`` entering by ``iif``: DNAT, route, SNAT."""
    state = _State(packet["nw_src"], packet["nw_dst"], packet["protocol"],
                   packet.get("destination_port"), iif)
    table = chains(ruleset or {})
    hops: list[dict[str, Any]] = []
    _run_chain(table.get("mangle_prerouting", []), state)
    rule, verdict = _run_chain(table.get("prerouting", []), state)
    if rule is not None and verdict[0] == "dnat":
        state.dst, state.dnat = str(verdict[1]["addr"]), True
        hops.append({"kind": "dnat", "detail": f"nft rule `{render(rule['expr'])}` translates "
                     f"the destination to {state.dst}", "translated_destination": state.dst,
                     "rule": render(rule["expr"])})
    else:
        hops.append({"kind": "dnat", "detail": "no rule of the prerouting chain translates "
                     f"the destination {state.dst}"})
    try:
        found = route(state.dst, state.src, iif)
    except LookupError as exc:
        hops.append({"kind": "route", "detail": f"no route to {state.dst}: {exc}"})
        return {"hops": hops, "verdict": "dropped",
                "dropped_at": {"stage": "route", "detail": str(exc)}}
    state.oif = found.get("dev")
    via = f" via {found['gateway']}" if found.get("gateway") else ""
    hops.append({"kind": "route", "detail": f"the kernel routes {state.dst} out of "
                 f"{state.oif}{via}", "device": state.oif, "gateway": found.get("gateway")})
    rule, verdict = _run_chain(table.get("postrouting", []), state)
    if rule is not None and verdict[0] in ("snat", "masquerade"):
        to = str((verdict[1] or {}).get("addr", "the device's address"))
        hops.append({"kind": "snat", "detail": f"nft rule `{render(rule['expr'])}` translates "
                     f"the source to {to}", "translated_source": to,
                     "rule": render(rule["expr"])})
        state.src = to
    else:
        hops.append({"kind": "snat", "detail": f"the source {state.src} leaves untranslated "
                     "(no rule of the postrouting chain translates it)"})
    if rule is not None and verdict[0] == "drop":
        return {"hops": hops, "verdict": "dropped",
                "dropped_at": {"stage": "nat", "detail": render(rule["expr"])}}
    return {"hops": hops, "verdict": "forwarded", "source": state.src,
            "destination": state.dst, "device": state.oif}


def _route_get(namespace: str) -> RouteLookup:
    def lookup(destination: str, source: str, iif: str) -> dict[str, Any]:
        try:
            text = iproute.ip("-j", "route", "get", destination, "from", source, "iif", iif,
                              namespace=namespace)
        except iproute.IpError as exc:
            raise LookupError(str(exc).rsplit(":", 1)[-1].strip()) from None
        answer = json.loads(text or "[]")
        if not answer:
            raise LookupError("the kernel gave no route")
        return dict(answer[0])
    return lookup


class Unknown(ValueError):
    """A question naming a namespace kind this agent does not build."""


def entering(packet: dict[str, Any]) -> tuple[str, str]:
    """The namespace ``packet`` is traced in and the device it enters by."""
    kind, router_id = packet.get("namespace") or "qrouter", packet["router_id"]
    port = str(packet.get("in_port_id") or "")
    if kind == "qrouter":
        if packet.get("from_fip"):
            return model.namespace_name(router_id), dvr.pair_names(router_id)[0]
        prefix = GATEWAY_PREFIX if packet.get("from_gateway") else INTERNAL_PREFIX
        return model.namespace_name(router_id), device_name(prefix, port)
    if kind == "snat":
        prefix = GATEWAY_PREFIX if packet.get("from_gateway") else dvr.SNAT_PREFIX
        return dvr.snat_namespace_name(router_id), device_name(prefix, port)
    if kind == "fip":
        namespace = dvr.fip_namespace_name(str(packet.get("external_network_id") or ""))
        if packet.get("from_gateway"):
            return namespace, device_name(dvr.FIP_GATEWAY_PREFIX, port)
        return namespace, dvr.pair_names(router_id)[1]
    raise Unknown(f"no router namespace of kind {kind!r}")


def trace(packet: dict[str, Any]) -> dict[str, Any]:
    """``packet`` through the namespace it names on this host, as it is now."""
    try:
        namespace, iif = entering(packet)
    except Unknown as exc:
        return {"error": str(exc)}
    if namespace not in iproute.namespaces():
        return {"error": f"namespace {namespace} is not on this host", "namespace": namespace}
    text = iproute.netns_exec(namespace, "nft", "-j", "list", "table", nat.FAMILY, nat.TABLE,
                              check=False)
    ruleset = json.loads(text) if text.strip() else None
    return {"namespace": namespace, "entered_at": iif,
            **decide(ruleset, _route_get(namespace), packet, iif)}
