"""What L2 agents call about distributed routers (upstream's DVR server RPC
on ``q-plugin``): their host's DVR MAC, every host's, and a distributed
router interface's subnet as the agent's DVR flows need it."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import oslo_messaging

from neutrino.context import Context
from neutrino.plugins import store
from neutrino.plugins.ml2 import dvr_macs
from neutrino.plugins.ml2.dvr_ports import ports_on_host

if TYPE_CHECKING:
    from neutrino.plugins.core import CorePlugin


class DvrEndpoint:
    target = oslo_messaging.Target(version="1.1")

    def __init__(self, plugin: CorePlugin) -> None:
        self.plugin = plugin

    def get_dvr_mac_address_list(self, context: Any, **kwargs: Any) -> list[dict[str, str]]:
        with self.plugin.db.reader() as conn:
            return dvr_macs.listed(conn)

    def get_dvr_mac_address_by_host(self, context: Any, host: str,
                                    **kwargs: Any) -> dict[str, str]:
        return dvr_macs.of_host(self.plugin, host)

    def get_ports_on_host_by_subnet(self, context: Any, host: str, subnet: str,
                                    **kwargs: Any) -> list[dict[str, Any]]:
        """The ports of ``subnet`` bound to ``host`` that a distributed router
        serves (instances, DHCP)."""
        with self.plugin.db.reader() as conn:
            ids = ports_on_host(conn, host, [subnet])
        ports, _ = self.plugin.list(Context.admin(), "ports",
                                    store.ListQuery(filters={"id": ids})) if ids else ([], None)
        return ports

    def get_subnet_for_dvr(self, context: Any, subnet: str,
                           fixed_ips: list[dict[str, Any]] | None = None,
                           **kwargs: Any) -> dict[str, Any]:
        """The subnet, with ``gateway_mac`` the MAC of its router port."""
        admin = Context.admin()
        found, _ = self.plugin.list(admin, "subnets", store.ListQuery(filters={"id": [subnet]}))
        if not found:
            return {}
        sub = dict(found[0])
        gateway = (fixed_ips or [{}])[0].get("ip_address") or sub.get("gateway_ip")
        ports, _ = self.plugin.list(admin, "ports", store.ListQuery(
            filters={"fixed_ips": [f"ip_address={gateway}", f"subnet_id={subnet}"]}))
        sub["gateway_ip"] = gateway
        sub["gateway_mac"] = ports[0]["mac_address"] if ports else None
        return sub
