"""The DHCP agent scheduler's routes (``dhcp_agent_scheduler``), as data.

``/v2.0/agents/{id}/dhcp-networks`` (list, add a network, remove one) and
``/v2.0/networks/{id}/dhcp-agents``. Not resources of their own: their
bodies are upstream's (``{"network_id": ...}`` in, ``null`` out on add) and
their policies are checked with an empty target (admin only by default),
so a refusal is 403, as upstream (``neutrino.api.custom_routes``). Lists
name the networks and agents; the API shows them as their own APIs show
them to the caller (``neutrino.plugins.routes.Listed``).
"""
from __future__ import annotations

from typing import Any

from neutrino import errors
from neutrino.context import Context
from neutrino.plugins.base import CustomRoute
from neutrino.plugins.routes import Announced, Listed


def routes(plugin: Any) -> list[CustomRoute]:
    def networks_on_agent(api: Any, ctx: Context, fields: dict[str, str], body: Any) -> Any:
        return Listed("networks", plugin.networks_on_agent(fields["rid"]))

    def add_network(api: Any, ctx: Context, fields: dict[str, str], body: Any) -> Any:
        network_id = body.get("network_id") if isinstance(body, dict) else None
        if not isinstance(network_id, str):
            raise errors.BadRequest(resource="dhcp-network",
                                    msg="Invalid input: 'network_id' is required")
        plugin.add_network(fields["rid"], network_id)
        return Announced("dhcp_agent.network.add",
                         {"network_id": network_id, "agent_id": fields["rid"]})

    def remove_network(api: Any, ctx: Context, fields: dict[str, str], body: Any) -> Any:
        plugin.remove_network(fields["rid"], fields["child_id"])
        return Announced("dhcp_agent.network.remove",
                         {"network_id": fields["child_id"], "agent_id": fields["rid"]})

    def agents_hosting(api: Any, ctx: Context, fields: dict[str, str], body: Any) -> Any:
        return Listed("agents", plugin.agents_hosting(fields["rid"]))

    return [
        CustomRoute("/agents/{rid}/dhcp-networks", {
            "GET": ("get_dhcp-networks", 200, networks_on_agent),
            "POST": ("create_dhcp-network", 201, add_network)}),
        CustomRoute("/agents/{rid}/dhcp-networks/{child_id}", {
            "DELETE": ("delete_dhcp-network", 204, remove_network)}),
        CustomRoute("/networks/{rid}/dhcp-agents", {
            "GET": ("get_dhcp-agents", 200, agents_hosting)}),
    ]
