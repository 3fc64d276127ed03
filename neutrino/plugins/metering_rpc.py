"""``metering_plugin``: the endpoint metering agents call.

A module of its own so that API workers, which only cast, never import
oslo.messaging (and eventlet with it): that import was a third of a
worker's start-up.
"""
from __future__ import annotations

import logging
from typing import Any

import oslo_messaging

from neutrino.plugins.metering_agents import sync_data

LOG = logging.getLogger(__name__)


class MeteringRpcEndpoint:
    """``metering_plugin``: what metering agents call (upstream's MeteringRpcCallbacks)."""

    target = oslo_messaging.Target(version="1.0")

    def __init__(self, plugin: Any) -> None:
        self.plugin = plugin

    def get_sync_data_metering(self, context: Any, **kwargs: Any) -> list[dict[str, Any]]:
        l3 = self.plugin.l3()
        if l3 is None:
            return []
        host = kwargs.get("host")
        with self.plugin.db.reader() as conn:
            if not host:
                return sync_data(conn)
            agent = l3.scheduler.agent_on_host(conn, host)
            if agent is None:
                LOG.error("metering: no L3 agent on host %s", host)
                return []
            router_ids = l3.scheduler.router_ids_on_agent(conn, agent.id)
            return sync_data(conn, router_ids=router_ids) if router_ids else []
