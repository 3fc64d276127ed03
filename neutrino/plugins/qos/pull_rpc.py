"""``q-resources-server``: agents pull QoS policies by id.

Apart from ``agent_rpc`` (which API workers load to push changes) so that
API workers never import oslo.messaging, and eventlet with it, at start-up.
"""
from __future__ import annotations

from typing import Any

import oslo_messaging

from neutrino.plugins.qos.agent_rpc import RESOURCE_TYPE, policy_dicts


class ResourcesPullEndpoint:
    """``q-resources-server``: what agents ask about QoS policies."""

    target = oslo_messaging.Target(version="1.1")

    def __init__(self, db: Any) -> None:
        self.db = db

    def pull(self, context: Any, resource_type: str, version: str | None = None,
             resource_id: str | None = None, **kwargs: Any) -> dict[str, Any] | None:
        if resource_type != RESOURCE_TYPE or not resource_id:
            return None
        with self.db.reader() as conn:
            found = policy_dicts(conn, [resource_id])
        return found[0] if found else None

    def bulk_pull(self, context: Any, resource_type: str, version: str | None = None,
                  filter_kwargs: dict[str, Any] | None = None,
                  **kwargs: Any) -> list[dict[str, Any]]:
        if resource_type != RESOURCE_TYPE:
            return []
        ids = (filter_kwargs or {}).get("id") or []
        ids = [ids] if isinstance(ids, str) else list(ids)
        with self.db.reader() as conn:
            return policy_dicts(conn, ids)
