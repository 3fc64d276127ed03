"""Agent records as the binding drivers read them.

Agents report themselves (type, host, configurations such as
``bridge_mappings`` and ``tunnel_types``) with a heartbeat; an agent whose
last heartbeat is older than ``[DEFAULT] agent_down_time`` is dead, and no
port is bound through it. The agents API and the RPC that writes these rows
live elsewhere; this module only reads (and, for tests and RPC, writes) them.
"""
from __future__ import annotations

import datetime as dt
import json
import uuid
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino.db import tables as t

AGENT_TYPE_OVS = "Open vSwitch agent"
AGENT_TYPE_LINUXBRIDGE = "Linux bridge agent"
AGENT_TYPE_NIC_SWITCH = "NIC Switch agent"


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None, microsecond=0)


def is_alive(heartbeat: dt.datetime | None, down_time: int,
             now: dt.datetime | None = None) -> bool:
    if heartbeat is None:
        return False
    return (now or utcnow()) - heartbeat <= dt.timedelta(seconds=down_time)


def _as_dict(row: Any, down_time: int, now: dt.datetime) -> dict[str, Any]:
    d = dict(row._mapping)
    try:
        d["configurations"] = json.loads(row.configurations or "{}")
    except ValueError:
        d["configurations"] = {}
    d["alive"] = is_alive(row.heartbeat_timestamp, down_time, now)
    return d


def host_agents(conn: Connection, agent_type: str, host: str,
                down_time: int) -> list[dict[str, Any]]:
    """Agents of ``agent_type`` on ``host``, with ``alive`` and parsed configurations."""
    now = utcnow()
    rows = conn.execute(sa.select(t.agents).where(t.agents.c.agent_type == agent_type,
                                                  t.agents.c.host == host))
    return [_as_dict(r, down_time, now) for r in rows]


def report(conn: Connection, agent_type: str, binary: str, host: str, topic: str,
           configurations: dict[str, Any], heartbeat: dt.datetime | None = None,
           availability_zone: str | None = None) -> str:
    """Insert or refresh an agent's record, as its state report would."""
    now = heartbeat or utcnow()
    values = {"binary": binary, "topic": topic, "heartbeat_timestamp": now,
              "configurations": json.dumps(configurations),
              "availability_zone": availability_zone}
    found = conn.execute(sa.select(t.agents.c.id).where(
        t.agents.c.agent_type == agent_type, t.agents.c.host == host)).scalar()
    if found is not None:
        conn.execute(sa.update(t.agents).where(t.agents.c.id == found).values(**values))
        return str(found)
    agent_id = str(uuid.uuid4())
    conn.execute(sa.insert(t.agents).values(
        id=agent_id, agent_type=agent_type, host=host, admin_state_up=True,
        created_at=now, started_at=now, load=0, resources_synced=None, **values))
    return agent_id
