"""The metadata agent's side of ``q-plugin`` (upstream's MetadataPluginAPI,
namespace None as upstream's neutron-lib has it)."""
from __future__ import annotations

from typing import Any

from neutrino.agents.server_client import ServerClient
from neutrino.rpc import topics


class MetadataPluginApi(ServerClient):
    def __init__(self, conf: Any) -> None:
        super().__init__(conf, topics.PLUGIN)

    def get_ports(self, filters: dict[str, Any]) -> list[dict[str, Any]]:
        return self.call("get_ports", filters=filters)
