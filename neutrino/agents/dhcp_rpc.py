"""The DHCP agent's side of its calls to the server (``q-plugin``, namespace
None as upstream's neutron-lib has it), one method per server method, with
upstream's versions."""
from __future__ import annotations

from typing import Any

from neutrino.agents.server_client import ServerClient
from neutrino.rpc import topics


class DhcpPluginApi(ServerClient):
    def __init__(self, conf: Any, host: str) -> None:
        super().__init__(conf, topics.PLUGIN)
        self.host = host

    def _call(self, method: str, version: str, **kwargs: Any) -> Any:
        return self.call(method, version, host=self.host, **kwargs)

    def get_active_networks_info(self, enable_dhcp_filter: bool = True) -> list[dict[str, Any]]:
        return self._call("get_active_networks_info", "1.1",
                          enable_dhcp_filter=enable_dhcp_filter)

    def get_network_info(self, network_id: str) -> dict[str, Any] | None:
        return self._call("get_network_info", "1.0", network_id=network_id)

    def create_dhcp_port(self, port: dict[str, Any]) -> dict[str, Any] | None:
        return self._call("create_dhcp_port", "1.1", port=port)

    def create_dhcp_ports(self, ports: list[dict[str, Any]]) -> list[dict[str, Any] | None]:
        return self._call("create_dhcp_ports", "1.11", ports=ports)  # neutrino's own

    def update_dhcp_port(self, port_id: str, port: dict[str, Any]) -> dict[str, Any] | None:
        return self._call("update_dhcp_port", "1.1", port_id=port_id, port=port)

    def release_dhcp_port(self, network_id: str, device_id: str) -> None:
        self._call("release_dhcp_port", "1.0", network_id=network_id, device_id=device_id)

    def get_dhcp_port(self, port_id: str) -> dict[str, Any]:
        return self._call("get_dhcp_port", "1.8", port_id=port_id)

    def dhcp_ready_on_ports(self, port_ids: list[str]) -> None:
        self.call("dhcp_ready_on_ports", "1.5", port_ids=port_ids)
