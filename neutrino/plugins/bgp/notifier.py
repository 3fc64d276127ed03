"""Telling BGP DR agents what changed (upstream's BgpDrAgentNotifyApi), after commit.

Casts on topic ``bgp_dragent`` to the host of each agent hosting the
speaker, with upstream's methods and payloads: a speaker hosted or dropped,
a peer associated or disassociated, routes to advertise or withdraw. They
are casts: an agent that misses one catches up on its next full sync.
"""
from __future__ import annotations

from typing import Any

from neutrino.rpc import topics
from neutrino.rpc.casts import Casts


class DrAgentNotifier:
    def __init__(self, casts: Casts) -> None:
        self.casts = casts

    def _cast(self, host: str, method: str, payload: dict[str, Any]) -> None:
        self.casts.cast(topics.BGP_DRAGENT, method, server=host, payload=payload)

    def speaker_created(self, speaker_id: str, host: str) -> None:
        self._cast(host, "bgp_speaker_create_end", {"bgp_speaker": {"id": speaker_id}})

    def speaker_removed(self, speaker_id: str, host: str) -> None:
        self._cast(host, "bgp_speaker_remove_end", {"bgp_speaker": {"id": speaker_id}})

    def peer_associated(self, speaker_id: str, peer_id: str, host: str) -> None:
        self._cast(host, "bgp_peer_association_end",
                   {"bgp_peer": {"speaker_id": speaker_id, "peer_id": peer_id}})

    def peer_disassociated(self, speaker_id: str, peer_ip: str, host: str) -> None:
        self._cast(host, "bgp_peer_disassociation_end",
                   {"bgp_peer": {"speaker_id": speaker_id, "peer_ip": peer_ip}})

    def routes_advertised(self, speaker_id: str, routes: list[dict[str, Any]],
                          host: str) -> None:
        self._cast(host, "bgp_routes_advertisement_end",
                   {"advertise_routes": {"speaker_id": speaker_id, "routes": routes}})

    def routes_withdrawn(self, speaker_id: str, routes: list[dict[str, Any]],
                         host: str) -> None:
        self._cast(host, "bgp_routes_withdrawal_end",
                   {"withdraw_routes": {"speaker_id": speaker_id, "routes": routes}})

    def agent_updated(self, admin_state_up: bool, host: str) -> None:
        self._cast(host, "agent_updated", {"admin_state_up": admin_state_up})
