"""The metering agent's side of ``metering_plugin`` (upstream's MeteringPluginRpc)."""
from __future__ import annotations

from typing import Any

from neutrino.rpc import topics
from neutrino.rpc.transport import rpc_transport


class MeteringPluginApi:
    def __init__(self, conf: Any, host: str) -> None:
        import oslo_messaging
        self.host = host
        self.transport = rpc_transport(conf)
        self.client = oslo_messaging.get_rpc_client(
            self.transport, oslo_messaging.Target(topic=topics.METERING_PLUGIN, version="1.0"))

    def get_sync_data_metering(self) -> list[dict[str, Any]]:
        """This host's routers with their labels and rules (None from upstream
        servers when there are none)."""
        return self.client.prepare().call({}, "get_sync_data_metering", host=self.host) or []

    def close(self) -> None:
        self.transport.cleanup()
