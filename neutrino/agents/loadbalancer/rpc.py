"""The load-balancer agent's calls to the server (``n-lbaasv2-plugin``,
served by the haproxy provider's endpoint)."""
from __future__ import annotations

from typing import Any

from neutrino.agents.server_client import ServerClient
from neutrino.rpc import topics


class LoadBalancerPluginApi(ServerClient):
    def __init__(self, conf: Any, host: str) -> None:
        super().__init__(conf, topics.LOADBALANCER_PLUGIN)
        self.host = host

    def get_ready_devices(self) -> list[str]:
        """The ids of the load balancers this host serves."""
        return list(self.call("get_ready_devices", host=self.host) or [])

    def get_loadbalancer(self, loadbalancer_id: str) -> dict[str, Any] | None:
        """The load balancer's graph, VIP port, subnets, MTU and certificates;
        None when it is gone or served elsewhere."""
        answer: dict[str, Any] | None = self.call(
            "get_loadbalancer", loadbalancer_id=loadbalancer_id, host=self.host)
        return answer

    def update_status(self, statuses: list[dict[str, Any]]) -> None:
        """Provisioning and operating statuses, ``{"kind", "id", ...}`` each."""
        self.call("update_status", statuses=statuses)

    def update_loadbalancer_stats(self, stats: list[dict[str, Any]]) -> None:
        """The listeners' counters."""
        self.call("update_loadbalancer_stats", stats=stats)
