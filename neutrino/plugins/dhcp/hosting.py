"""Scheduling networks onto DHCP agents, with the configuration applied.

What upstream's DHCP agent scheduler does, as operations on one database
connection: schedule a network (its first DHCP-enabled subnet), auto-schedule
the networks an agent could serve (when it syncs), manual add and remove
(the scheduler API), and the failover check that moves networks away from
dead agents. Telling agents is the caller's business (``notifier``), after
commit.
"""
from __future__ import annotations

import datetime as dt
import logging
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.db import tables as t
from neutrino.plugins import availability_zones as az
from neutrino.plugins import store
from neutrino.plugins.dhcp import scheduler as sch
from neutrino.plugins.ml2 import agents_db
from neutrino.resources.dhcp import dhcp_device_id

LOG = logging.getLogger(__name__)
NB, S, A, P = t.networkdhcpagentbindings.c, t.subnets.c, t.agents.c, t.ports.c


class Hosting:
    def __init__(self, conf: Any) -> None:
        self.conf = conf
        self.scheduler = sch.scheduler_from(conf.network_scheduler_driver)

    @property
    def down_time(self) -> int:
        return int(self.conf.agent_down_time)

    def usable(self, agent: sch.DhcpAgent) -> bool:
        """An agent serving its networks: admin up, unless configured otherwise."""
        return agent.admin_state_up or self.conf.enable_services_on_agents_with_admin_state_down

    def hosting(self, conn: Connection, network_id: str) -> list[sch.DhcpAgent]:
        return sch.hosting(conn, [network_id], self.down_time)[network_id]

    def serving(self, conn: Connection, network_id: str) -> list[sch.DhcpAgent]:
        """The agents to notify about the network."""
        return [a for a in self.hosting(conn, network_id) if self.usable(a)]

    # -- automatic scheduling -------------------------------------------------------

    def schedule(self, conn: Connection, network_id: str) -> list[sch.DhcpAgent]:
        """Give a network needing DHCP the agents it lacks; the newly bound ones."""
        if not self.conf.network_auto_schedule or not sch.needs_dhcp(conn, network_id):
            return []
        hosted = self.hosting(conn, network_id)
        needed = self.conf.dhcp_agents_per_network - len(hosted)
        if needed <= 0:
            return []
        taken = {a.id for a in hosted}
        candidates = az.in_zones(
            [a for a in sch.dhcp_agents(conn, self.down_time, load_type=self.conf.dhcp_load_type)
             if a.alive and a.admin_state_up and a.id not in taken],
            self.hints(conn, network_id))
        counts = sch.hosted_counts(conn, [a.id for a in candidates])
        for agent in candidates:
            agent.hosted = counts.get(agent.id, 0)
        chosen = self.scheduler.select(candidates, needed, hosted)
        bound = [a for a in chosen if sch.bind(conn, network_id, a.id,
                                               self.conf.dhcp_agents_per_network)]
        if not bound and not hosted:
            LOG.warning("Unable to schedule network %s: no agents available; will "
                        "retry on subsequent port and subnet creation events.", network_id)
        return bound

    def hints(self, conn: Connection, network_id: str) -> list[str]:
        """The zones the network asked for (or the configured default ones)."""
        text = conn.execute(sa.select(t.networks.c.availability_zone_hints).where(
            t.networks.c.id == network_id)).scalar()
        return self._or_default(text)

    def _or_default(self, text: str | None) -> list[str]:
        return az.from_text(text) or list(self.conf.default_availability_zones)

    def auto_schedule(self, conn: Connection, host: str) -> list[str]:
        """Bind the agent on ``host`` to the networks needing DHCP that lack
        agents; the networks newly bound."""
        if not self.conf.network_auto_schedule:
            return []
        agent = sch.agent_by_host(conn, host, self.down_time)
        if agent is None or not agent.alive or not agent.admin_state_up:
            return []
        per_network = self.conf.dhcp_agents_per_network
        counts = sa.select(NB.network_id, sa.func.count().label("n")).group_by(
            NB.network_id).subquery()
        mine = sa.select(NB.network_id).where(NB.dhcp_agent_id == agent.id)
        rows = conn.execute(
            sa.select(S.network_id, t.networks.c.availability_zone_hints).distinct()
            .join(t.networks, t.networks.c.id == S.network_id)
            .outerjoin(counts, counts.c.network_id == S.network_id)
            .where(S.enable_dhcp.is_(True), S.network_id.not_in(mine),
                   sa.func.coalesce(counts.c.n, 0) < per_network))
        return sch.bind_many(conn, [
            r.network_id for r in rows
            if az.in_zones([agent], self._or_default(r.availability_zone_hints))],
            agent.id, per_network)

    # -- the scheduler API ------------------------------------------------------------

    def agent(self, conn: Connection, agent_id: str) -> Any:
        row = conn.execute(sa.select(A.id, A.agent_type, A.host, A.admin_state_up)
                           .where(A.id == agent_id)).first()
        if row is None:
            raise errors.AgentNotFound(id=agent_id)
        return row

    def add(self, conn: Connection, agent_id: str, network_id: str) -> str:
        """Manual scheduling; the agent's host."""
        if conn.execute(sa.select(t.networks.c.id).where(
                t.networks.c.id == network_id)).first() is None:
            raise errors.NetworkNotFound(net_id=network_id)
        row = self.agent(conn, agent_id)
        if row.agent_type != sch.AGENT_TYPE_DHCP or not (
                row.admin_state_up or self.conf.enable_services_on_agents_with_admin_state_down):
            raise errors.InvalidDHCPAgent(id=agent_id)
        if any(a.id == agent_id for a in self.hosting(conn, network_id)):
            raise errors.NetworkHostedByDHCPAgent(network_id=network_id, agent_id=agent_id)
        if not sch.bind(conn, network_id, agent_id, self.conf.dhcp_agents_per_network,
                        force=True):
            raise errors.NetworkHostedByDHCPAgent(network_id=network_id, agent_id=agent_id)
        return str(row.host)

    def remove(self, conn: Connection, agent_id: str, network_id: str) -> str:
        """Unbind; the agent's DHCP port on the network is kept, reserved for
        the next agent (its address stays the same). The agent's host."""
        row = self.agent(conn, agent_id)
        if not sch.unbind(conn, network_id, agent_id):
            raise errors.NetworkNotHostedByDhcpAgent(network_id=network_id,
                                                     agent_id=agent_id)
        device_id = dhcp_device_id(network_id, row.host)
        for port in conn.execute(sa.select(P.id).where(P.network_id == network_id,
                                                       P.device_id == device_id)):
            store.bump(conn, t.ports, port.id, {"device_id": sch.RESERVED_DHCP_PORT})
        return str(row.host)

    # -- failover ----------------------------------------------------------------------

    def dead_bindings(self, conn: Connection) -> list[tuple[str, str]]:
        """(network, agent) bindings of admin-up agents silent for twice
        ``agent_down_time`` (upstream's dead limit: down for good, not a late
        report), except agents still starting: those get the dead limit plus
        2 s per network they host, counted from their start, as upstream."""
        now = agents_db.utcnow()
        limit = dt.timedelta(seconds=2 * self.down_time)
        rows = list(conn.execute(
            sa.select(NB.network_id, NB.dhcp_agent_id, A.started_at)
            .join(t.agents, A.id == NB.dhcp_agent_id)
            .where(A.heartbeat_timestamp < now - limit,
                   A.admin_state_up.is_(True))))
        counts = sch.hosted_counts(conn, list({r.dhcp_agent_id for r in rows}))
        return [(r.network_id, r.dhcp_agent_id) for r in rows
                if r.started_at + limit + dt.timedelta(seconds=2 * counts.get(
                    r.dhcp_agent_id, 0)) <= now]

    def any_alive(self, conn: Connection) -> bool:
        return any(a.alive and a.admin_state_up
                   for a in sch.dhcp_agents(conn, self.down_time))
