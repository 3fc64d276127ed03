"""What agents' ``local_ip`` extensions pull: every port association.

Upstream's agent ``bulk_pull``s ``LocalIPAssociation`` on
``q-resources-server``; the QoS plugin's pull endpoint answers that topic
too, so this one listens under a namespace of its own. A module of its own
so that API workers, which only push, never import oslo.messaging.
"""
from __future__ import annotations

from typing import Any

import oslo_messaging

from neutrino.plugins.local_ip import associations as assoc
from neutrino.rpc import topics

RESOURCE_TYPE = "LocalIPAssociation"


class LocalIpPullEndpoint:
    target = oslo_messaging.Target(version="1.1", namespace=topics.LOCAL_IP_NAMESPACE)

    def __init__(self, db: Any) -> None:
        self.db = db

    def bulk_pull(self, context: Any, resource_type: str, version: str | None = None,
                  filter_kwargs: dict[str, Any] | None = None,
                  **kwargs: Any) -> list[dict[str, Any]]:
        if resource_type != RESOURCE_TYPE:
            return []
        host = (filter_kwargs or {}).get("host")
        with self.db.reader() as conn:
            rows = assoc.read(conn, *([lambda v: v.c.host == host] if host else []))
        return [assoc.for_agent(r) for r in rows]
