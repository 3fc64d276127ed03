"""``n-lbaasv2-plugin``: what load-balancer agents call (the haproxy
provider's endpoint, served by the RPC process).

A module of its own so that API workers, which only cast, never import
oslo.messaging for it.
"""
from __future__ import annotations

import logging
from typing import Any

import oslo_messaging

from neutrino.plugins.octavia import provider_api as papi

LOG = logging.getLogger(__name__)
KINDS = set(papi.KINDS)
STATS = ("bytes_in", "bytes_out", "active_connections", "total_connections", "request_errors")


class LoadBalancerCallbacks:
    target = oslo_messaging.Target(version="1.0")

    def __init__(self, provider: Any) -> None:
        self.provider = provider

    def get_ready_devices(self, context: Any, host: str = "", **kw: Any) -> list[str]:
        return self.provider.loadbalancers_on(host)  # type: ignore[no-any-return]

    def get_loadbalancer(self, context: Any, loadbalancer_id: str, host: str = "",
                         **kw: Any) -> dict[str, Any] | None:
        return self.provider.describe(loadbalancer_id, host)  # type: ignore[no-any-return]

    def update_status(self, context: Any, statuses: list[dict[str, Any]], **kw: Any) -> None:
        out = [papi.ObjectStatus(s["kind"], s["id"], s.get("provisioning_status"),
                                 s.get("operating_status"))
               for s in statuses if s.get("kind") in KINDS and s.get("id")]
        self.provider.report(out)

    def update_loadbalancer_stats(self, context: Any, stats: list[dict[str, Any]],
                                  **kw: Any) -> None:
        self.provider.reporter.update_stats([
            papi.ListenerStats(s["listener_id"], **{k: int(s.get(k) or 0) for k in STATS})
            for s in stats if s.get("listener_id")])
