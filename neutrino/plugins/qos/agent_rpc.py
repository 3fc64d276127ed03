"""QoS policies for agents: pulled by id, pushed when they change.

Upstream's agents keep QoS policies through the resources RPC: ``pull`` /
``bulk_pull`` on ``q-resources-server`` and a fanout ``push`` on
``neutron-vo-QosPolicy-<version>`` whenever a policy or one of its rules
changes. Same topics and methods here; a policy travels as the API shows
it (``id``, ``rules`` with their ``type``), not as a versioned object, and
a deleted policy is pushed with ``event_type`` ``deleted``. The pull
endpoint is ``pull_rpc``, loaded by the RPC process only.
"""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from neutrino.plugins.qos import policies as pol
from neutrino.rpc import topics

RESOURCE_TYPE = "QosPolicy"


def policy_dicts(conn: Any, ids: list[str]) -> list[dict[str, Any]]:
    rows = list(conn.execute(sa.select(pol.P).where(pol.P.c.id.in_(ids)))) if ids else []
    return [{"id": d["id"], "name": d.get("name"), "project_id": d.get("project_id"),
             "revision_number": d.get("revision_number"), "rules": d["rules"]}
            for d in pol.to_dicts(conn, rows)]


class PolicyPusher:
    """After a change is committed: tell every agent the policy's new state."""

    def __init__(self, db: Any, casts: Any) -> None:
        self.db, self.casts = db, casts

    def updated(self, policy_id: str) -> None:
        if self.casts is None or not self.casts.enabled:
            return
        with self.db.reader() as conn:
            found = policy_dicts(conn, [policy_id])
        if found:
            self._push(found, "updated")

    def deleted(self, policy_id: str) -> None:
        if self.casts is not None and self.casts.enabled:
            self._push([{"id": policy_id, "rules": []}], "deleted")

    def _push(self, policies: list[dict[str, Any]], event_type: str) -> None:
        self.casts.cast(topics.QOS_POLICY_PUSH, "push", fanout=True,
                        resource_type=RESOURCE_TYPE, resource_list=policies,
                        event_type=event_type)
