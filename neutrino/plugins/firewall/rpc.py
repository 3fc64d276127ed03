"""What FWaaS agent extensions call on the server (topic ``q-firewall-plugin``).

``set_firewall_group_status`` and ``get_firewall_group_for_port`` are
upstream's calls; ``get_firewall_groups_for_ports`` is neutrino's bulk
read of the groups on a router's interfaces (upstream's L3 extension asks
per project instead). A module of its own so that API workers, which only
cast, never import oslo.messaging.
"""
from __future__ import annotations

from typing import Any

import oslo_messaging


class FirewallCallbacks:
    target = oslo_messaging.Target(version="1.0")

    def __init__(self, plugin: Any) -> None:
        self.plugin = plugin

    def set_firewall_group_status(self, context: Any, fwg_id: str, status: str,
                                  **kwargs: Any) -> bool:
        return bool(self.plugin.report_status(fwg_id, status))

    def get_firewall_groups_for_ports(self, context: Any, port_ids: list[str] | None = None,
                                      **kwargs: Any) -> list[dict[str, Any]]:
        return list(self.plugin.groups_for_ports(port_ids or []))

    def get_firewall_group_for_port(self, context: Any, port_id: str | None = None,
                                    **kwargs: Any) -> dict[str, Any] | None:
        found = self.plugin.groups_for_ports([port_id] if port_id else [])
        return found[0] if len(found) == 1 else None
