"""What L3 agents' VPN extensions call, on upstream's ``ipsec_driver``
topic: the services they run and the statuses they report. A module of its
own so that API workers never import oslo.messaging."""
from __future__ import annotations

from typing import Any

import oslo_messaging

from neutrino.plugins.vpnaas import agent_view
from neutrino.rpc import topics


class IpsecDriverEndpoint:
    target = oslo_messaging.Target(version=topics.IPSEC_VERSION)

    def __init__(self, plugin: Any) -> None:
        self.plugin = plugin

    def get_vpn_services_on_host(self, context: Any, host: str | None = None,
                                 **kwargs: Any) -> list[dict[str, Any]]:
        with self.plugin.db.reader() as conn:
            return agent_view.services_on_host(conn, self.plugin, host or "")

    def update_status(self, context: Any, status: list[dict[str, Any]] | None = None,
                      **kwargs: Any) -> None:
        self.plugin.core.write(lambda conn: agent_view.update_statuses(conn, status or []))
