"""The BGP DR agent's side of ``q-bgp-plugin`` (upstream's BgpDrPluginApi)."""
from __future__ import annotations

from typing import Any

from neutrino.agents.server_client import ServerClient
from neutrino.rpc import topics


class BgpDrPluginApi(ServerClient):
    def __init__(self, conf: Any, host: str) -> None:
        super().__init__(conf, topics.BGP_PLUGIN)
        self.host = host

    def get_bgp_speakers(self) -> list[dict[str, Any]]:
        """The speakers this host's agent hosts, each with its peers and routes."""
        return list(self.call("get_bgp_speakers", host=self.host) or [])

    def get_bgp_speaker_info(self, speaker_id: str) -> dict[str, Any]:
        """One speaker with its peers and routes; {} when it is gone."""
        return dict(self.call("get_bgp_speaker_info", bgp_speaker_id=speaker_id) or {})
