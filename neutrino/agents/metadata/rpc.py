"""The metadata agent's side of ``q-plugin`` namespace ``metadata`` (upstream's MetadataPluginAPI)."""
from __future__ import annotations

from typing import Any

from neutrino.rpc import topics
from neutrino.rpc.transport import rpc_transport


class MetadataPluginApi:
    def __init__(self, conf: Any) -> None:
        import oslo_messaging
        self.transport = rpc_transport(conf)
        self.client = oslo_messaging.get_rpc_client(self.transport, oslo_messaging.Target(
            topic=topics.PLUGIN, namespace="metadata", version="1.0"))

    def get_ports(self, filters: dict[str, Any]) -> list[dict[str, Any]]:
        return self.client.prepare().call({}, "get_ports", filters=filters)

    def close(self) -> None:
        self.transport.cleanup()
