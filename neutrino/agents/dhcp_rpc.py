"""The DHCP agent's side of its calls to the server (``q-plugin``, namespace
``dhcp``), one method per server method, with upstream's versions."""
from __future__ import annotations

from typing import Any

from neutrino.rpc import topics
from neutrino.rpc.transport import rpc_transport


class DhcpPluginApi:
    def __init__(self, conf: Any, host: str) -> None:
        import oslo_messaging
        self.host = host
        self.transport = rpc_transport(conf)
        self.client = oslo_messaging.get_rpc_client(self.transport, oslo_messaging.Target(
            topic=topics.PLUGIN, namespace="dhcp", version="1.0"))

    def _call(self, method: str, version: str, **kwargs: Any) -> Any:
        return self.client.prepare(version=version).call({}, method, host=self.host, **kwargs)

    def get_active_networks_info(self, enable_dhcp_filter: bool = True) -> list[dict[str, Any]]:
        return self._call("get_active_networks_info", "1.1",
                          enable_dhcp_filter=enable_dhcp_filter)

    def get_network_info(self, network_id: str) -> dict[str, Any] | None:
        return self._call("get_network_info", "1.0", network_id=network_id)

    def create_dhcp_port(self, port: dict[str, Any]) -> dict[str, Any] | None:
        return self._call("create_dhcp_port", "1.1", port=port)

    def update_dhcp_port(self, port_id: str, port: dict[str, Any]) -> dict[str, Any] | None:
        return self._call("update_dhcp_port", "1.1", port_id=port_id, port=port)

    def release_dhcp_port(self, network_id: str, device_id: str) -> None:
        self._call("release_dhcp_port", "1.0", network_id=network_id, device_id=device_id)

    def get_dhcp_port(self, port_id: str) -> dict[str, Any]:
        return self._call("get_dhcp_port", "1.8", port_id=port_id)

    def dhcp_ready_on_ports(self, port_ids: list[str]) -> None:
        self.client.prepare(version="1.5").call({}, "dhcp_ready_on_ports", port_ids=port_ids)

    def close(self) -> None:
        self.transport.cleanup()
