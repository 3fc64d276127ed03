"""``trace --live``: the same packet run through the hosts, next to the model.

The model (``model.py``) says from the API's facts what should happen; a
flow or a NAT rule changed behind an agent's back makes the host do
something else. ``legs.py`` turns the model's path into questions for the
agents concerned (which host and, for a router, which namespace);
``compare`` puts each answer against the model's hops: every hop gets the
host's verdict beside the model's, and the answer names each place where
they disagree, also grouped by the host that disagrees.
"""
from __future__ import annotations

from typing import Any, Callable

from neutrino.plugins.trace import model
from neutrino.plugins.trace.legs import L3, Leg, legs
from neutrino.plugins.trace.placement import Placement

# (topic, host, packet) -> the agent's answer (``error`` when it could not be asked)
Ask = Callable[[str, str, dict[str, Any]], dict[str, Any]]
# the OVS agent's stages in the order a packet meets them
STAGES = ("port_security", "security_group_egress", "firewall_group_egress", "switching",
          "security_group_ingress", "firewall_group_ingress")
OVS_STAGE = {"source": "port_security", "port_security": "port_security",
             "security_group_egress": "security_group_egress", "network": "switching",
             "router_interface": "switching", "destination_port": "switching",
             "security_group_ingress": "security_group_ingress"}
# a router's devices on the external network: its gateway (legacy, HA, a distributed
# router's snat- namespace) or the host's floating IP gateway (fip-)
EXTERNAL_DEVICES = ("qg-", "fg-")
NO_HOST = "no host"


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
        if device.startswith(EXTERNAL_DEVICES):
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


def _where(leg: Leg) -> str:
    return leg.host or NO_HOST


def compare(traced: model.Trace, answered: list[Leg]) -> dict[str, Any]:
    """The model's hops, each with the host's verdict beside its own, the
    host's overall verdict and each disagreement in a sentence (``by_host``:
    the same sentences under the host that disagrees)."""
    owner = {index: leg for leg in answered for index in leg.hops}
    hops: list[dict[str, Any]] = []
    found: list[tuple[str, str]] = []  # (host, disagreement)
    live_verdict = model.ALLOWED
    for index, hop in enumerate(traced.hops):
        kind = hop["kind"]
        leg = owner.get(index)
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
            found.append((_where(leg), f"{kind}: the model passes it ({hop['detail']}); "
                                       f"{detail}"))
        elif mine != "passed" and status == "passed":
            found.append((_where(leg), f"{kind}: the model says {mine} ({hop['detail']}); "
                                       f"{detail}"))
    for leg in answered:
        if "error" in leg.answer:
            found.append((_where(leg), f"{leg.name}: {leg.answer['error']}"))
        elif not leg.hops and leg.answer.get("verdict") == "dropped":
            # a step between the model's hops (a distributed router's copy
            # sending to its SNAT node, a floating IP's way in through fip-)
            route = next((h for h in leg.answer.get("hops", ()) if h["kind"] == "route"), {})
            found.append((_where(leg), f"{leg.name}: the model passes it; host {leg.host} "
                                       f"drops it in {leg.answer.get('namespace')}: "
                                       f"{route.get('detail') or leg.answer.get('dropped_at')}"))
            live_verdict = model.UNREACHABLE
    if traced.verdict != model.ALLOWED and live_verdict == model.ALLOWED and not any(
            h.get("live", {}).get("verdict") == "passed" for h in hops[-1:]):
        live_verdict = traced.verdict  # the host was not asked about the step that stops it
    by_host: dict[str, list[str]] = {}
    for host, text in found:
        by_host.setdefault(host, []).append(text)
    disagreements = [text for _, text in found]
    return {"verdict": live_verdict, "agrees": not disagreements and live_verdict == (
        traced.verdict), "disagreements": disagreements, "by_host": by_host, "hops": hops,
        "hosts": [{"leg": leg.name, "host": leg.host, "topic": leg.topic,
                   **({"asked": leg.packet["namespace"]} if "namespace" in leg.packet else {}),
                   **leg.answer} for leg in answered]}


def run(facts: model.Facts, packet: model.Packet, traced: model.Trace, ask: Ask,
        tunnel_ips: dict[str, str] | None = None,
        placements: dict[str, Placement] | None = None) -> dict[str, Any]:
    """Ask each leg's agent, then compare; a leg no host can answer (an
    HA router with no active agent, an unbound port) says why instead."""
    answered = []
    for leg in legs(facts, packet, traced, tunnel_ips, placements):
        if leg.unplaced or not leg.host:
            leg.answer = {"error": leg.unplaced or f"the {leg.name} port is bound to no host"}
        else:
            leg.answer = ask(leg.topic, leg.host, leg.packet)
        answered.append(leg)
    return compare(traced, answered)
