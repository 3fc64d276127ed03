"""The DHCP agent scheduler's routes (``dhcp_agent_scheduler``).

``/v2.0/agents/{id}/dhcp-networks`` (list, add a network, remove one) and
``/v2.0/networks/{id}/dhcp-agents``. Not resources of their own: their
bodies are upstream's (``{"network_id": ...}`` in, ``null`` out on add) and
their policies are checked with an empty target (admin only by default),
so a refusal is 403, as upstream. Lists show the networks and agents as
their own APIs show them to the caller.
"""
from __future__ import annotations

from typing import Any

import falcon

from neutrino import errors
from neutrino.api.controller import Api, send
from neutrino.api.hooks import body as body_mod
from neutrino.api.hooks.policy import Shaper, Targets
from neutrino.context import Context
from neutrino.plugins import store


def _listed(api: Api, ctx: Context, plural: str, ids: list[str]) -> list[dict[str, Any]]:
    if not ids:
        return []
    rdef = api.resources[plural]
    items, _ = api.plugin_for(plural).list(ctx, plural, store.ListQuery(filters={"id": ids}))
    api.extend(ctx, plural, items)
    shaper = Shaper(api, rdef, ctx, Targets(api.plugin, ctx))
    return [shaper.shape(i, None) for i in items]


class AgentNetworks:
    """``/v2.0/agents/{id}/dhcp-networks``"""

    def __init__(self, api: Api, plugin: Any) -> None:
        self.api, self.plugin = api, plugin

    def on_get(self, req: falcon.Request, resp: falcon.Response, rid: str) -> None:
        ctx: Context = req.context.neutron
        self.api.policy.enforce(ctx, "get_dhcp-networks", {})
        ids = self.plugin.networks_on_agent(rid)
        send(resp, 200, {"networks": _listed(self.api, ctx, "networks", ids)})

    def on_post(self, req: falcon.Request, resp: falcon.Response, rid: str) -> None:
        ctx: Context = req.context.neutron
        raw = body_mod.parse_json(req.bounded_stream.read())
        self.api.policy.enforce(ctx, "create_dhcp-network", {})
        network_id = raw.get("network_id") if isinstance(raw, dict) else None
        if not isinstance(network_id, str):
            raise errors.BadRequest(resource="dhcp-network",
                                    msg="Invalid input: 'network_id' is required")
        self.plugin.add_network(rid, network_id)
        self.api.notifier.event(ctx, "dhcp_agent.network.add",
                                {"network_id": network_id, "agent_id": rid})
        resp.status = 201
        resp.content_type = "application/json"
        resp.data = b"null"


class AgentNetwork:
    """``/v2.0/agents/{id}/dhcp-networks/{network_id}``"""

    def __init__(self, api: Api, plugin: Any) -> None:
        self.api, self.plugin = api, plugin

    def on_delete(self, req: falcon.Request, resp: falcon.Response, rid: str,
                  child_id: str) -> None:
        ctx: Context = req.context.neutron
        self.api.policy.enforce(ctx, "delete_dhcp-network", {})
        self.plugin.remove_network(rid, child_id)
        self.api.notifier.event(ctx, "dhcp_agent.network.remove",
                                {"network_id": child_id, "agent_id": rid})
        send(resp, 204)


class NetworkAgents:
    """``/v2.0/networks/{id}/dhcp-agents``"""

    def __init__(self, api: Api, plugin: Any) -> None:
        self.api, self.plugin = api, plugin

    def on_get(self, req: falcon.Request, resp: falcon.Response, rid: str) -> None:
        ctx: Context = req.context.neutron
        self.api.policy.enforce(ctx, "get_dhcp-agents", {})
        ids = self.plugin.agents_hosting(rid)
        send(resp, 200, {"agents": _listed(self.api, ctx, "agents", ids)})


def routes(plugin: Any) -> dict[str, Any]:
    """The extension's routes; path fields named as the generic routes name
    them at the same depth (Falcon requires it)."""
    return {
        "/v2.0/agents/{rid}/dhcp-networks": lambda api: AgentNetworks(api, plugin),
        "/v2.0/agents/{rid}/dhcp-networks/{child_id}": lambda api: AgentNetwork(api, plugin),
        "/v2.0/networks/{rid}/dhcp-agents": lambda api: NetworkAgents(api, plugin),
    }
