"""The agent side of the L2 calls (``q-plugin``), one method per server method."""
from __future__ import annotations

from typing import Any

import oslo_messaging

from neutrino.agents.server_client import ServerClient
from neutrino.rpc import topics
from neutrino.rpc.admin_context import admin_context

SG_INFO_VERSION = "1.3"


class PluginApi(ServerClient):
    def __init__(self, conf: Any, agent_id: str, host: str) -> None:
        super().__init__(conf, topics.PLUGIN)
        self.agent_id, self.host = agent_id, host

    def _call(self, method: str, version: str, **kwargs: Any) -> Any:
        return self.call(method, version, agent_id=self.agent_id, host=self.host, **kwargs)

    def get_device_details(self, device: str) -> dict[str, Any]:
        return self._call("get_device_details", "1.0", device=device)

    def get_devices_details_list_and_failed_devices(self, devices: list[str]) -> dict[str, Any]:
        return self._call("get_devices_details_list_and_failed_devices", "1.5",
                          devices=devices)

    def update_device_up(self, device: str) -> None:
        self._call("update_device_up", "1.0", device=device)

    def update_device_down(self, device: str) -> dict[str, Any]:
        return self._call("update_device_down", "1.0", device=device)

    def update_device_list(self, devices_up: list[str], devices_down: list[str],
                           refresh_tunnels: bool = False) -> dict[str, Any]:
        """``refresh_tunnels``: the agent lost its l2population entries (it
        restarted) and asks for those of the devices' networks again."""
        extra = {"refresh_tunnels": True} if refresh_tunnels else {}
        return self._call("update_device_list", "1.5", devices_up=devices_up,
                          devices_down=devices_down, **extra)

    def get_ports_by_vnic_type_and_host(self, vnic_type: str) -> list[dict[str, Any]]:
        """The ports the server has bound to this host with ``vnic_type``."""
        return self.call("get_ports_by_vnic_type_and_host", "1.7", vnic_type=vnic_type,
                         host=self.host) or []

    # security groups (upstream's SecurityGroupServerRpcApi, same topic)

    def security_group_rules_for_devices(self, devices: list[str]) -> dict[str, Any]:
        return self.call("security_group_rules_for_devices", "1.1", devices=devices)

    def security_group_info_for_devices(self, devices: list[str]) -> dict[str, Any]:
        """At 1.3 with ``call_version``, as upstream's agents ask: upstream's
        server answers member addresses as ``[ip, mac]`` pairs only then
        (plain addresses otherwise, which the firewall cannot read)."""
        return self.call("security_group_info_for_devices", SG_INFO_VERSION,
                         devices=devices, call_version=SG_INFO_VERSION)

    def tunnel_sync(self, tunnel_ip: str, tunnel_type: str) -> dict[str, Any]:
        """The other agents' endpoints of ``tunnel_type``: ``{"tunnels": [...]}``."""
        return self.call("tunnel_sync", "1.4", tunnel_ip=tunnel_ip, tunnel_type=tunnel_type,
                         host=self.host)

    def get_dvr_mac_address_by_host(self) -> dict[str, str]:
        """``dvr``: this host's DVR MAC (the server makes it the first time)."""
        return self.call("get_dvr_mac_address_by_host", "1.1", host=self.host)

    def get_dvr_mac_address_list(self) -> list[dict[str, str]]:
        """``dvr``: every host's DVR MAC."""
        return self.call("get_dvr_mac_address_list", "1.1")

    def qos_policies(self, ids: list[str]) -> list[dict[str, Any]]:
        """The QoS policies ``ids`` (resources RPC ``bulk_pull``)."""
        client = oslo_messaging.get_rpc_client(
            self.transport, oslo_messaging.Target(topic=topics.RESOURCES_PULL, version="1.1"))
        return client.call(admin_context(), "bulk_pull", resource_type="QosPolicy", version="1.10",
                           filter_kwargs={"id": ids}) or []

    def local_ip_associations(self) -> list[dict[str, Any]]:
        """Every local IP's port associations (resources RPC ``bulk_pull``)."""
        client = oslo_messaging.get_rpc_client(
            self.transport, oslo_messaging.Target(topic=topics.RESOURCES_PULL, version="1.1",
                                                  namespace=topics.LOCAL_IP_NAMESPACE))
        return client.call(admin_context(), "bulk_pull", resource_type="LocalIPAssociation",
                           version="1.0") or []


class LoggingApi(ServerClient):
    """The agent side of ``logging-plugin`` (upstream's ``LoggingApiStub``)."""

    def __init__(self, conf: Any) -> None:
        super().__init__(conf, topics.LOGGING_PLUGIN, namespace=topics.LOGGING_NAMESPACE)

    def get_sg_log_info_for_port(self, port_id: str) -> list[dict[str, Any]]:
        return list(self.call("get_sg_log_info_for_port", "1.1",
                              resource_type="security_group", port_id=port_id) or [])

    def get_sg_log_info_for_log_resources(self, log_resources: list[dict[str, Any]]
                                          ) -> list[dict[str, Any]]:
        return list(self.call("get_sg_log_info_for_log_resources", "1.1",
                              resource_type="security_group",
                              log_resources=log_resources) or [])
