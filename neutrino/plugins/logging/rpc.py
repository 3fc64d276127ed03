"""``logging-plugin``: what agents' logging extensions call.

A module of its own so that API workers, which only push, never import
oslo.messaging.
"""
from __future__ import annotations

from typing import Any

import oslo_messaging

from neutrino.plugins.logging import info
from neutrino.resources import logging as res
from neutrino.rpc import topics


class LoggingRpcEndpoint:
    """Upstream's ``LoggingApiSkeleton``: log info by port or by log."""

    target = oslo_messaging.Target(version=topics.LOGGING_VERSION,
                                   namespace=topics.LOGGING_NAMESPACE)

    def __init__(self, db: Any) -> None:
        self.db = db

    def get_sg_log_info_for_port(self, context: Any, port_id: str,
                                 **kwargs: Any) -> list[dict[str, Any]]:
        if kwargs.get("resource_type", res.SECURITY_GROUP) != res.SECURITY_GROUP:
            return []
        with self.db.reader() as conn:
            return info.for_port(conn, port_id)

    def get_sg_log_info_for_log_resources(self, context: Any, log_resources: list[dict[str, Any]],
                                          **kwargs: Any) -> list[dict[str, Any]]:
        if kwargs.get("resource_type", res.SECURITY_GROUP) != res.SECURITY_GROUP:
            return []
        with self.db.reader() as conn:
            return info.for_log_resources(conn, log_resources)
