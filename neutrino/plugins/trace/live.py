"""``trace --live``: the same packet run through the hosts, next to the model.

The model (``model.py``) says from the API's facts what should happen; a
flow or a NAT rule changed behind an agent's back makes the host do
something else. ``legs`` turns the model's path into questions for the
agents concerned: the source port's OVS agent (the packet leaving the
port, through br-int's flows), the router's L3 agent (its namespace's
NAT and route) and the destination port's OVS agent (the packet arriving
from the network or the router). ``compare`` puts each answer against the
model's hops: every hop gets the host's verdict beside the model's, and
the answer names each place where they disagree.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from neutrino.plugins.trace import model
from neutrino.rpc import topics

HOST_ID = "binding:host_id"
OVS, L3 = topics.AUDIT_OVS, topics.AUDIT_L3
# (topic, host, packet) -> the agent's answer (``error`` when it could not be asked)
Ask = Callable[[str, str, dict[str, Any]], dict[str, Any]]
# the OVS agent's stages in the order a packet meets them
STAGES = ("port_security", "security_group_egress", "firewall_group_egress", "switching",
          "security_group_ingress", "firewall_group_ingress")
OVS_STAGE = {"source": "port_security", "port_security": "port_security",
             "security_group_egress": "security_group_egress", "network": "switching",
             "router_interface": "switching", "destination_port": "switching",
             "security_group_ingress": "security_group_ingress"}
ROUTER_HOPS = ("route", "snat", "floating_ip", "gateway", "external_gateway")
BROADCAST = "ff:ff:ff:ff:ff:ff"


@dataclass
class Leg:
    """One question to one host's agent, and which of the model's hops it answers."""
    name: str  # "source", "router", "destination"
    topic: str
    host: str
    packet: dict[str, Any]
    answer: dict[str, Any] = field(default_factory=dict)


def _by_id(facts: model.Facts) -> dict[str, dict[str, Any]]:
    return {p["id"]: p for p in facts.ports}


def _router_port(facts: model.Facts, router_id: str, network_id: str,
                 owners: tuple[str, ...]) -> dict[str, Any] | None:
    for port in facts.ports:
        if (port.get("device_id") == router_id and port.get("device_owner") in owners
                and port["network_id"] == network_id):
            return port
    return None


def _router_host(facts: model.Facts, router_id: str) -> str | None:
    for port in facts.ports:
        if port.get("device_id") == router_id and port.get(HOST_ID):
            return str(port[HOST_ID])
    return None


def _first(hops: list[dict[str, Any]], kind: str) -> dict[str, Any] | None:
    return next((h for h in hops if h["kind"] == kind), None)


def legs(facts: model.Facts, packet: model.Packet, traced: model.Trace,
         tunnel_ips: dict[str, str] | None = None) -> list[Leg]:
    """The questions that put the model's path to the hosts it crosses
    (``tunnel_ips``: host -> its OVS agent's tunnel address, so a packet
    arriving from another host is traced from that host's tunnel)."""
    ports, hops = _by_id(facts), traced.hops
    proto = {"protocol": packet.protocol, "destination_port": packet.destination_port}
    found: list[Leg] = []
    source_hop = _first(hops, "source") or {}
    sender = ports.get(source_hop.get("port_id") or "")
    src = str(source_hop.get("source_ip") or packet.source_ip or "")
    destination = _first(hops, "destination_port")
    target = ports.get(destination["port_id"]) if destination else None
    interface = _first(hops, "router_interface")
    inbound = sender is None and _first(hops, "floating_ip")
    if sender is not None:
        next_mac = (target["mac_address"] if target is not None and interface is None
                    else ports[interface["port_id"]]["mac_address"] if interface is not None
                    and interface["port_id"] in ports else BROADCAST)
        found.append(Leg("source", OVS, sender.get(HOST_ID) or "", {
            "direction": "egress", "port_id": sender["id"], "network_id": sender["network_id"],
            "dl_src": sender["mac_address"], "dl_dst": next_mac, "nw_src": src,
            "nw_dst": packet.destination_ip, **proto}))
    router_id = (interface or {}).get("router_id") or (inbound or {}).get("router_id")
    if router_id:
        gateway = None
        if inbound:
            gateway = next((p for p in facts.ports if p.get("device_id") == router_id
                            and p.get("device_owner") == model.GATEWAY_OWNER), None)
        entry = gateway if inbound else ports.get((interface or {}).get("port_id") or "")
        if entry is not None:
            found.append(Leg("router", L3, _router_host(facts, router_id) or "", {
                "router_id": router_id, "in_port_id": entry["id"],
                "from_gateway": bool(inbound), "nw_src": src,
                "nw_dst": packet.destination_ip, **proto}))
    if target is not None and destination is not None:
        # through a floating IP (from outside, or back in from the router's
        # gateway: the hairpin), its router delivers from the translated source
        fip = next((h for h in hops if h.get("translated_destination")), {})
        address = str(fip.get("translated_destination") or packet.destination_ip)
        delivering = fip.get("router_id") or router_id or ""
        if _first(hops, "external_gateway"):
            src = next((str(h["translated_source"]) for h in reversed(hops)
                        if h.get("translated_source")), src)
        seen_from = sender if interface is None and sender is not None else _router_port(
            facts, delivering, target["network_id"], model.ROUTER_INTERFACE_OWNERS)
        if seen_from is not None:
            arriving: dict[str, Any] = {
                "direction": "ingress", "port_id": target["id"],
                "network_id": target["network_id"], "from_port_id": seen_from["id"],
                "dl_src": seen_from["mac_address"], "dl_dst": target["mac_address"],
                "nw_src": src, "nw_dst": address, **proto}
            sent_by = seen_from.get(HOST_ID)
            if sent_by and sent_by != target.get(HOST_ID) and sent_by in (tunnel_ips or {}):
                arriving["from_tunnel_ip"] = (tunnel_ips or {})[sent_by]
            found.append(Leg("destination", OVS, target.get(HOST_ID) or "", arriving))
    return found


def _ovs_status(leg: Leg, kind: str) -> tuple[str, str]:
    answer = leg.answer
    if "error" in answer:
        return "unknown", f"host {leg.host}: {answer['error']}"
    where = f"host {leg.host}"
    if answer.get("verdict") != "dropped":
        return "passed", f"{where} forwards it (datapath actions: {answer.get('datapath_actions')})"
    drop = answer.get("dropped_at") or {}
    stage, wanted = drop.get("stage", "switching"), OVS_STAGE.get(kind, "switching")
    text = (f"{where} drops it at {drop.get('bridge')} table {drop.get('table')} "
            f"(flow: {drop.get('flow') or 'none'})")
    if stage == wanted:
        return "dropped", text
    if STAGES.index(wanted) < STAGES.index(stage):
        return "passed", f"{where} passes this step, then drops it at table {drop.get('table')}"
    return "not reached", text


def _router_status(leg: Leg, hop: dict[str, Any]) -> tuple[str, str]:
    answer = leg.answer
    if "error" in answer:
        return "unknown", f"host {leg.host}: {answer['error']}"
    kinds = {h["kind"]: h for h in answer.get("hops", ())}
    dnat, route, snat = kinds.get("dnat", {}), kinds.get("route", {}), kinds.get("snat", {})
    where = f"host {leg.host}"
    if hop["kind"] == "route":
        if answer.get("verdict") == "dropped" and route:
            return "dropped", f"{where}: {route['detail']}"
        return "passed", f"{where}: {route.get('detail', '')}"
    if hop["kind"] == "external_gateway":
        device = str(route.get("device") or "")
        if device.startswith("qg-"):
            return "passed", f"{where}: {route['detail']}"
        return "differs", f"{where}: {route.get('detail', 'no route')}, not its gateway"
    for key, host_hop in (("translated_destination", dnat), ("translated_source", snat)):
        if hop.get(key) is not None:
            if host_hop.get(key) == hop[key]:
                return "passed", f"{where}: {host_hop['detail']}"
            return "differs", f"{where}: {host_hop.get('detail', 'no NAT')}"
    if hop["kind"] == "gateway":
        if snat.get("translated_source"):
            return "differs", f"{where}: {snat['detail']}"
        return "passed", f"{where}: {snat.get('detail', '')}"
    return "passed", f"{where}: {answer.get('hops', [])}"


def _model_verdict(traced: model.Trace, index: int) -> str:
    last = index == len(traced.hops) - 1
    return traced.verdict if last and traced.verdict != model.ALLOWED else "passed"


def compare(traced: model.Trace, answered: list[Leg]) -> dict[str, Any]:
    """The model's hops, each with the host's verdict beside its own, the
    host's overall verdict and each disagreement in a sentence."""
    by_name = {leg.name: leg for leg in answered}
    hops, disagreements = [], []
    live_verdict = model.ALLOWED
    for index, hop in enumerate(traced.hops):
        kind = hop["kind"]
        leg = (by_name.get("router") if kind in ROUTER_HOPS
               else by_name.get("destination") if kind in ("destination_port",
                                                          "security_group_ingress")
               and "destination" in by_name else by_name.get("source"))
        if leg is None:
            hops.append({**hop, "model": _model_verdict(traced, index)})
            continue
        status, detail = (_router_status(leg, hop) if leg.topic == L3
                          else _ovs_status(leg, kind))
        mine = _model_verdict(traced, index)
        hops.append({**hop, "model": mine, "live": {"host": leg.host, "verdict": status,
                                                   "detail": detail}})
        if status == "dropped":
            live_verdict = (model.UNREACHABLE if kind in ("route", "network", "router_interface",
                                                          "destination_port")
                            else model.DENIED)
        if mine == "passed" and status in ("dropped", "differs"):
            disagreements.append(f"{kind}: the model passes it ({hop['detail']}); {detail}")
        elif mine != "passed" and status == "passed":
            disagreements.append(f"{kind}: the model says {mine} ({hop['detail']}); {detail}")
    for leg in answered:
        if "error" in leg.answer:
            disagreements.append(f"{leg.name}: {leg.answer['error']}")
    if traced.verdict != model.ALLOWED and live_verdict == model.ALLOWED and not any(
            h.get("live", {}).get("verdict") == "passed" for h in hops[-1:]):
        live_verdict = traced.verdict  # the host was not asked about the step that stops it
    return {"verdict": live_verdict, "agrees": not disagreements and live_verdict == (
        traced.verdict), "disagreements": disagreements, "hops": hops,
        "hosts": [{"leg": leg.name, "host": leg.host, "topic": leg.topic, **leg.answer}
                  for leg in answered]}


def run(facts: model.Facts, packet: model.Packet, traced: model.Trace, ask: Ask,
        tunnel_ips: dict[str, str] | None = None) -> dict[str, Any]:
    """Ask each leg's agent, then compare."""
    answered = []
    for leg in legs(facts, packet, traced, tunnel_ips):
        if not leg.host:
            leg.answer = {"error": f"the {leg.name} port is bound to no host"}
        else:
            leg.answer = ask(leg.topic, leg.host, leg.packet)
        answered.append(leg)
    return compare(traced, answered)
