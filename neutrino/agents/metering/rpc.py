"""The metering agent's side of ``metering_plugin`` (upstream's MeteringPluginRpc)."""
from __future__ import annotations

from typing import Any

from neutrino.agents.server_client import ServerClient
from neutrino.rpc import topics


class MeteringPluginApi(ServerClient):
    def __init__(self, conf: Any, host: str) -> None:
        super().__init__(conf, topics.METERING_PLUGIN)
        self.host = host

    def get_sync_data_metering(self) -> list[dict[str, Any]]:
        """This host's routers with their labels and rules (None from upstream
        servers when there are none)."""
        return self.call("get_sync_data_metering", host=self.host) or []
