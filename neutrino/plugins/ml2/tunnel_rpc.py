"""``tunnel_sync``: an L2 agent learns the tunnel endpoints of its peers.

An agent calls it with its own ``tunnel_ip`` and a tunnel type and gets the
endpoints of every other live agent that reported that type, as upstream's
answer ``{"tunnels": [{"ip_address": ..., "host": ...}]}``. The endpoints
are read from the agents' own state reports (``tunneling_ip``,
``tunnel_types``), so no table of its own is kept: an agent that stops
reporting stops being a peer after ``agent_down_time``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import oslo_messaging
import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino.db import tables as t
from neutrino.plugins.ml2 import agents_db

if TYPE_CHECKING:
    from neutrino.plugins.core import CorePlugin


class TunnelEndpoint:
    target = oslo_messaging.Target(version="1.4")

    def __init__(self, plugin: CorePlugin) -> None:
        self.plugin = plugin

    def tunnel_sync(self, context: Any, tunnel_ip: str, tunnel_type: str | None = None,
                    host: str | None = None, **kwargs: Any) -> dict[str, Any]:
        down_time = self.plugin.conf.agent_down_time

        def op(conn: Connection) -> dict[str, Any]:
            now = agents_db.utcnow()
            tunnels = []
            rows = conn.execute(sa.select(t.agents).order_by(t.agents.c.host))
            for row in rows:
                agent = agents_db._as_dict(row, down_time, now)
                conf = agent["configurations"]
                ip = conf.get("tunneling_ip")
                if (not agent["alive"] or not ip or ip == tunnel_ip or row.host == host
                        or (tunnel_type and tunnel_type not in (conf.get("tunnel_types") or []))):
                    continue
                tunnels.append({"ip_address": ip, "host": row.host})
            return {"tunnels": tunnels}
        return self.plugin.write(op)
