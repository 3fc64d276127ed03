"""``report_state``: agents announce themselves and keep their heartbeat.

The first report of an agent (or the first after it restarted, with
``start_flag``) creates or refreshes its row and ``started_at``; later ones
move the heartbeat. What an admin set through the API (``admin_state_up``,
``description``) is never overwritten by a report.

``has_alive_neutron_server`` is upstream's start-up probe: an Open vSwitch
agent asks it before anything else and answers whether both the bus and the
server's database work; without an answer upstream's agent never starts.
"""
from __future__ import annotations

import json
import logging
import uuid
from typing import Any, Callable, Sequence

import oslo_messaging
import sqlalchemy as sa

from neutrino.db import tables as t
from neutrino.db.engine import Database, retrying
from neutrino.plugins.ml2 import agents_db
from neutrino.rpc import topics

LOG = logging.getLogger(__name__)

AGENT_NEW, AGENT_ALIVE, AGENT_REVIVED = "new", "alive", "revived"
a = t.agents.c


class StateReportEndpoint:
    target = oslo_messaging.Target(version=topics.STATE_VERSION)

    def __init__(self, db: Database, agent_down_time: int,
                 listeners: Sequence[Callable[[dict[str, Any], str], None]] = ()) -> None:
        self.db = db
        self.agent_down_time = agent_down_time
        # told of every recorded report and its outcome (the placement report)
        self.listeners = listeners

    def report_state(self, context: Any, **kwargs: Any) -> str:
        state = (kwargs.get("agent_state") or {}).get("agent_state") or {}
        missing = [k for k in ("agent_type", "binary", "host", "topic") if not state.get(k)]
        if missing:
            LOG.warning("ignoring a state report without %s", ", ".join(missing))
            return ""
        status = self._record(state)
        for listener in self.listeners:
            try:
                listener(state, status)
            except Exception:  # noqa: BLE001 - a listener never fails the report
                LOG.exception("agent state listener %s failed", listener)
        return status

    def has_alive_neutron_server(self, context: Any, **kwargs: Any) -> bool:
        """True when the server reaches its database (the bus works, since
        the question arrived)."""
        try:
            with self.db.reader() as conn:
                conn.execute(sa.select(1))
        except sa.exc.DBAPIError:
            LOG.warning("has_alive_neutron_server: the database is unreachable")
            return False
        return True

    @retrying
    def _record(self, state: dict[str, Any]) -> str:
        now = agents_db.utcnow()
        values = {"binary": state["binary"], "topic": state["topic"],
                  "heartbeat_timestamp": now,
                  "configurations": json.dumps(state.get("configurations") or {}),
                  "availability_zone": state.get("availability_zone")}
        # upstream's agents send the versions they consume with their first
        # report only (and again after a restart): kept until then, as
        # upstream's server keeps them
        if "resource_versions" in state:
            values["resource_versions"] = json.dumps(state["resource_versions"] or {})
        if "resources_synced" in state:
            values["resources_synced"] = state["resources_synced"]
        with self.db.writer() as conn:
            row = conn.execute(sa.select(a.id, a.heartbeat_timestamp).where(
                a.agent_type == state["agent_type"], a.host == state["host"])).first()
            if row is None:
                conn.execute(sa.insert(t.agents).values(
                    id=str(uuid.uuid4()), agent_type=state["agent_type"], host=state["host"],
                    admin_state_up=state.get("admin_state_up", True), created_at=now,
                    started_at=now, load=state.get("load", 0), **values))
                LOG.info("agent %s on %s registered", state["agent_type"], state["host"])
                return AGENT_NEW
            if state.get("start_flag"):
                values["started_at"] = now
            conn.execute(sa.update(t.agents).where(a.id == row.id).values(**values))
        if not agents_db.is_alive(row.heartbeat_timestamp, self.agent_down_time, now):
            LOG.info("agent %s on %s is alive again", state["agent_type"], state["host"])
            return AGENT_REVIVED
        return AGENT_ALIVE
