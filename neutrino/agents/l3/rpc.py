"""The L3 agent's side of ``q-l3-plugin``: upstream's L3PluginApi method names and arguments."""
from __future__ import annotations

from typing import Any

import oslo_messaging

from neutrino.agents.server_client import ServerClient
from neutrino.rpc import topics
from neutrino.rpc.admin_context import admin_context

L3_AGENT_TOPIC = "l3_agent"  # where the server's notifications to L3 agents go


class L3PluginApi(ServerClient):
    def __init__(self, conf: Any, host: str) -> None:
        super().__init__(conf, topics.L3PLUGIN)
        self.host = host

    def _call(self, method: str, version: str, **kwargs: Any) -> Any:
        return self.call(method, version, **kwargs)

    def get_router_ids(self) -> list[str]:
        return self._call("get_router_ids", "1.9", host=self.host)

    def sync_routers(self, router_ids: list[str] | None = None) -> list[dict[str, Any]]:
        return self._call("sync_routers", "1.0", host=self.host, router_ids=router_ids)

    def get_external_network_id(self) -> str | None:
        return self._call("get_external_network_id", "1.0", host=self.host)

    def update_floatingip_statuses(self, router_id: str, fip_statuses: dict[str, str]) -> None:
        self._call("update_floatingip_statuses", "1.1", router_id=router_id,
                   fip_statuses=fip_statuses)

    def update_ha_routers_states(self, states: dict[str, str]) -> None:
        """``l3-ha``: {router_id: active|standby} as keepalived on this host sees it."""
        self._call("update_ha_routers_states", "1.5", host=self.host, states=states)

    def qos_policies(self, ids: list[str]) -> list[dict[str, Any]]:
        """The QoS policies ``ids`` (resources RPC ``bulk_pull``, as the L2 agents')."""
        client = oslo_messaging.get_rpc_client(
            self.transport, oslo_messaging.Target(topic=topics.RESOURCES_PULL, version="1.1"))
        return client.call(admin_context(), "bulk_pull", resource_type="QosPolicy", version="1.10",
                           filter_kwargs={"id": ids}) or []

    def _firewall_client(self) -> Any:
        return oslo_messaging.get_rpc_client(
            self.transport, oslo_messaging.Target(topic=topics.FIREWALL_PLUGIN, version="1.0"))

    def firewall_groups_for_ports(self, port_ids: list[str]) -> list[dict[str, Any]]:
        """``fwaas_v2``: the firewall groups on these router interfaces, with
        their ordered rules (``q-firewall-plugin``)."""
        return self._firewall_client().call(admin_context(), "get_firewall_groups_for_ports",
                                            port_ids=port_ids) or []

    def set_firewall_group_status(self, group_id: str, status: str) -> None:
        self._firewall_client().call(admin_context(), "set_firewall_group_status", fwg_id=group_id,
                                     status=status, host=self.host)
