"""The agents API (``agent``) and availability zones (``availability_zone``).

Rows are written by agents' state reports (``agents_db.report``); here they
are listed, shown, disabled, described and deleted. ``alive`` is not
stored: it is the heartbeat's age against ``[DEFAULT] agent_down_time`` at
the time of the request, so it is also a SQL condition for filtering.
"""
from __future__ import annotations

import datetime as dt
import json
from typing import Any, Sequence

import sqlalchemy as sa
from sqlalchemy import Connection, Row

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import store
from neutrino.plugins.handler import Handler, TableHandler
from neutrino.plugins.ml2 import agents_db

AGENT_TYPE_DHCP = "DHCP agent"
AGENT_TYPE_L3 = "L3 agent"
# Availability zones exist for the resources these agents host.
ZONE_RESOURCES = {AGENT_TYPE_DHCP: "network", AGENT_TYPE_L3: "router"}

a = t.agents.c
# Text attributes an agent is filtered by, matched without regard to case,
# as upstream's MySQL collation matches them (tempest asks for "DHCP Agent").
_TEXT_FILTERS = ("agent_type", "binary", "topic", "host", "availability_zone", "description")


def _any_case(column: Any) -> store.FilterBuilder:
    def build(values: list[Any]) -> Any:
        return sa.func.lower(column).in_(sorted({str(v).lower() for v in values}))
    return build


def not_found(agent_id: str) -> errors.AgentNotFound:
    return errors.AgentNotFound(id=agent_id)


class Agents(TableHandler):
    """``/v2.0/agents``: what agents reported, as the admin sees it."""

    table = t.agents
    updatable = ("admin_state_up", "description")

    def __init__(self, conf: Any) -> None:
        self.conf = conf

    def _deadline(self) -> dt.datetime:
        return agents_db.utcnow() - dt.timedelta(seconds=self.conf.agent_down_time)

    def not_found(self, rid: str) -> errors.AgentNotFound:
        return not_found(rid)

    def to_dicts(self, rows: Sequence[Row[Any]]) -> list[dict[str, Any]]:
        deadline = self._deadline()
        out = []
        for row in rows:
            try:
                configurations = json.loads(row.configurations or "{}")
            except ValueError:
                configurations = {}
            out.append({
                "id": row.id, "agent_type": row.agent_type, "binary": row.binary,
                "topic": row.topic, "host": row.host, "admin_state_up": row.admin_state_up,
                "created_at": store.iso(row.created_at), "started_at": store.iso(row.started_at),
                "heartbeat_timestamp": store.iso(row.heartbeat_timestamp),
                "description": row.description, "configurations": configurations,
                "alive": row.heartbeat_timestamp >= deadline,
                "availability_zone": row.availability_zone,
                "resources_synced": row.resources_synced})
        return out

    def filters(self) -> dict[str, store.FilterBuilder]:
        """``alive``: the heartbeat's age against ``agent_down_time``, now;
        the text attributes in any case."""
        deadline = self._deadline()

        def alive(values: list[Any]) -> Any:
            wanted = set(values)
            if wanted == {True}:
                return a.heartbeat_timestamp >= deadline
            if wanted == {False}:
                return a.heartbeat_timestamp < deadline
            return None
        return {"alive": alive, **{name: _any_case(a[name]) for name in _TEXT_FILTERS}}

    def create(self, conn: Connection, ctx: Context, data: dict[str, Any]) -> str:
        raise errors.BadRequest(resource="agents",
                                msg="Agent creation using API is not supported.")


class AvailabilityZones(Handler):
    """``/v2.0/availability_zones``: zones named in DHCP and L3 agents' reports.

    A zone is available for a resource while one of its agents of that kind
    is administratively up (upstream does not look at liveness here).
    """

    table = t.agents

    def zones(self, conn: Connection) -> list[dict[str, Any]]:
        rows = conn.execute(sa.select(a.availability_zone, a.agent_type, a.admin_state_up)
                            .where(a.availability_zone.is_not(None),
                                   a.availability_zone != "",
                                   a.agent_type.in_(list(ZONE_RESOURCES)))
                            .distinct())
        up: dict[tuple[str, str], bool] = {}
        for row in rows:
            key = (row.availability_zone, ZONE_RESOURCES[row.agent_type])
            up[key] = up.get(key, False) or bool(row.admin_state_up)
        return [{"name": name, "resource": resource,
                 "state": "available" if ok else "unavailable"}
                for (name, resource), ok in sorted(up.items())]

    def list(self, conn: Connection, ctx: Context,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        def wanted(zone: dict[str, Any], key: str, values: list[Any]) -> bool:
            if key == "name":  # an agent's zone, which matches in any case
                return str(zone["name"]).lower() in {str(v).lower() for v in values}
            return zone.get(key) in values
        items = [z for z in self.zones(conn)
                 if all(wanted(z, k, vals) for k, vals in query.filters.items())]
        for key, ascending in reversed(query.sorts):
            items.sort(key=lambda z: z[key], reverse=not ascending)
        return items, False

    def create(self, conn: Connection, ctx: Context, data: dict[str, Any]) -> str:
        raise errors.MethodNotAllowed()

    def get(self, conn: Connection, zone: str) -> dict[str, Any]:
        raise errors.ResourceNotFound()  # zones are listed, never shown one by one
