"""The ``trace`` service plugin: ``POST /v2.0/trace`` (``neutrino-trace``).

Admin only (``create_trace``): the answer names security groups, rules,
routers and ports of every project on the path. The facts are read
through the API's own plugins (as an admin sees them), then handed to the
pure model (``neutrino.plugins.trace.model``); nothing is written. With
``live``, the agents of the hosts on the path are asked over RPC to run
the same packet through their switch and router (``live.py``).
"""
from __future__ import annotations

import ipaddress
from typing import Any

from oslo_policy import policy

from neutrino import errors
from neutrino.context import Context
from neutrino.db.query import ListQuery
from neutrino.plugins.base import ApiExtension, CustomRoute, ServicePlugin
from neutrino.plugins.trace import live, model, placement
from neutrino.plugins.trace.agent_calls import AgentCalls
from neutrino.resources import trace as res
from neutrino.resources import validators as v

POLICIES = {"create_trace": "rule:admin_only"}


def parse(body: Any) -> tuple[model.Packet, bool]:
    """The packet a request body describes, or a Neutron 400 saying what is wrong."""
    def bad(msg: str) -> errors.BadRequest:
        return errors.BadRequest(resource="trace", msg=msg)
    item = body.get("trace") if isinstance(body, dict) else None
    if not isinstance(item, dict):
        raise bad("Resource body required")
    unknown = sorted(set(item) - set(res.ATTRIBUTES))
    if unknown:
        raise bad(f"Unrecognized attribute(s) '{', '.join(unknown)}'")
    values: dict[str, Any] = {}
    for name, (check, required) in res.ATTRIBUTES.items():
        if item.get(name) is None:
            if required:
                raise bad(f"Failed to parse request. Required attribute '{name}' not specified")
            continue
        try:
            values[name] = check(item[name])
        except v.Invalid as exc:
            raise bad(f"Invalid input for {name}. Reason: {exc}.") from None
    if "port_id" not in values and "source_ip" not in values:
        raise bad("One of 'port_id' and 'source_ip' must be given")
    source = values.get("source_ip")
    if source is not None and (ipaddress.ip_address(source).version
                               != ipaddress.ip_address(values["destination_ip"]).version):
        raise bad("'source_ip' and 'destination_ip' are of different IP versions")
    live = bool(values.pop("live", False))
    return model.Packet(**values), live


def _listed(api: Any, ctx: Context, plural: str) -> list[dict[str, Any]]:
    items, _ = api.plugin_for(plural).list(ctx, plural, ListQuery())
    api.extend(ctx, plural, items)
    return list(items)


def gather(api: Any, ctx: Context) -> model.Facts:
    routed = "routers" in getattr(api, "owners", {})
    return model.Facts(
        ports=_listed(api, ctx, "ports"), rules=_listed(api, ctx, "security_group_rules"),
        subnets=_listed(api, ctx, "subnets"),
        routers=_listed(api, ctx, "routers") if routed else [],
        floatingips=_listed(api, ctx, "floatingips") if routed else [])


def tunnel_ips(api: Any, ctx: Context) -> dict[str, str]:
    """Host -> its OVS agent's tunnel address (its ``tunneling_ip``)."""
    found = {}
    for agent in _listed(api, ctx, "agents"):
        address = (agent.get("configurations") or {}).get("tunneling_ip")
        if agent.get("agent_type") == "Open vSwitch agent" and address:
            found[agent["host"]] = str(address)
    return found


def placements(db: Any, traced: model.Trace) -> dict[str, placement.Placement]:
    """Where the routers on the traced path are (their agents' hosts and HA states)."""
    ids = sorted({str(h["router_id"]) for h in traced.hops if h.get("router_id")})
    if not ids:
        return {}
    with db.reader() as conn:
        return placement.read(conn, ids)


def run(api: Any, ctx: Context, packet: model.Packet,
        ask: live.Ask | None = None, db: Any = None) -> dict[str, Any]:
    """The model's answer; with ``ask`` (``live``), the hosts' beside it
    (``db``: where the routers' agents are read)."""
    facts = gather(api, ctx)
    if packet.port_id is not None and not any(p["id"] == packet.port_id for p in facts.ports):
        raise errors.PortNotFound(port_id=packet.port_id)
    traced = model.trace(facts, packet)
    answer = traced.as_dict()
    if ask is not None:
        answer["live"] = live.run(facts, packet, traced, ask, tunnel_ips(api, ctx),
                                  placements(db, traced) if db is not None else None)
    return {"trace": answer}


class TracePlugin(ServicePlugin):
    """Answers where a packet goes and what decides it; reads only."""

    service_type = "NEUTRINO_TRACE"
    supported_extension_aliases = (res.ALIAS,)

    def __init__(self, conf: Any, db: Any) -> None:
        super().__init__(conf, db)
        self.agents = AgentCalls(conf)

    def extensions(self) -> list[ApiExtension]:
        def post(api: Any, ctx: Context, fields: dict[str, str], body: Any) -> Any:
            packet, wanted = parse(body)
            return run(api, ctx, packet, self.agents.ask if wanted else None, self.db)
        rules = [policy.RuleDefault(name, check) for name, check in POLICIES.items()]
        return [ApiExtension(descriptor=res.TRACE_EXT, policies=rules,
                             routes=[CustomRoute("/trace", {"POST": ("create_trace", 200, post)})])]
