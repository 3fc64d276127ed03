"""The BGP DR agent scheduler's routes (``bgp_dragent_scheduler``), as data.

``/v2.0/agents/{id}/bgp-drinstances`` (list the speakers an agent hosts,
add one, remove one) and ``/v2.0/bgp-speakers/{id}/bgp-dragents`` (the
agents hosting a speaker). Their policies are checked with an empty target
(admin only by default); lists are shown as the speakers' and agents' own
APIs show them.
"""
from __future__ import annotations

from typing import Any

from neutrino import errors
from neutrino.context import Context
from neutrino.plugins.base import CustomRoute
from neutrino.plugins.routes import Listed


def routes(plugin: Any) -> list[CustomRoute]:
    def speakers_on_agent(api: Any, ctx: Context, fields: dict[str, str], body: Any) -> Any:
        return Listed("bgp_speakers", plugin.speakers_on_agent(fields["rid"]))

    def add_speaker(api: Any, ctx: Context, fields: dict[str, str], body: Any) -> Any:
        speaker_id = body.get("bgp_speaker_id") if isinstance(body, dict) else None
        if not isinstance(speaker_id, str):
            raise errors.BadRequest(resource="bgp-drinstance",
                                    msg="Invalid input: 'bgp_speaker_id' is required")
        plugin.add_speaker_to_agent(fields["rid"], speaker_id)
        return None

    def remove_speaker(api: Any, ctx: Context, fields: dict[str, str], body: Any) -> Any:
        plugin.remove_speaker_from_agent(fields["rid"], fields["child_id"])
        return None

    def agents_hosting(api: Any, ctx: Context, fields: dict[str, str], body: Any) -> Any:
        return Listed("agents", plugin.agents_hosting(fields["rid"]))

    return [
        CustomRoute("/agents/{rid}/bgp-drinstances", {
            "GET": ("list_bgp_speaker_on_dragent", 200, speakers_on_agent),
            "POST": ("add_bgp_speaker_to_dragent", 201, add_speaker)}),
        CustomRoute("/agents/{rid}/bgp-drinstances/{child_id}", {
            "DELETE": ("remove_bgp_speaker_from_dragent", 204, remove_speaker)}),
        CustomRoute("/bgp-speakers/{rid}/bgp-dragents", {
            "GET": ("list_dragent_hosting_bgp_speaker", 200, agents_hosting)}),
    ]
