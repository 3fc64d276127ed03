"""Which BGP DR agent hosts which speaker (``bgp_dragent_scheduler``).

An agent hosts at most one speaker (the bindings' primary key), as
upstream's scheduler allows. A new speaker goes to one live, enabled DR
agent hosting nothing yet, chosen at random (upstream's ChanceScheduler);
a speaker made while no such agent exists is scheduled once one reports.
An admin may also bind and unbind them through the API.
"""
from __future__ import annotations

import random
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino import errors
from neutrino.db import tables as t
from neutrino.plugins.ml2 import agents_db

AGENT_TYPE = "BGP dynamic routing agent"

A = t.agents
H = t.bgp_speaker_dragent_bindings
S = t.bgp_speakers


class Hosting:
    def __init__(self, down_time: int) -> None:
        self.down_time = down_time

    def _agent(self, conn: Connection, agent_id: str) -> Any:
        row = conn.execute(sa.select(A).where(A.c.id == agent_id)).first()
        if row is None:
            raise errors.AgentNotFound(id=agent_id)
        return row

    def _alive(self, row: Any) -> bool:
        return agents_db.is_alive(row.heartbeat_timestamp, self.down_time)

    # -- the API ---------------------------------------------------------------------

    def add(self, conn: Connection, agent_id: str, speaker_id: str) -> str:
        """Bind the speaker to the agent; the agent's host."""
        agent = self._agent(conn, agent_id)
        if agent.agent_type != AGENT_TYPE or not agent.admin_state_up:
            raise errors.DrAgentInvalid(id=agent_id)
        if conn.execute(sa.select(S.c.id).where(S.c.id == speaker_id)).first() is None:
            raise errors.BgpSpeakerNotFound(id=speaker_id)
        if conn.execute(sa.select(H.c.agent_id).where(H.c.agent_id == agent_id)).first():
            raise errors.DrAgentAssociationError(agent_id=agent_id)
        conn.execute(sa.insert(H).values(agent_id=agent_id, bgp_speaker_id=speaker_id))
        return str(agent.host)

    def remove(self, conn: Connection, agent_id: str, speaker_id: str) -> str:
        """Unbind the speaker from the agent; the agent's host."""
        agent = self._agent(conn, agent_id)
        if agent.agent_type != AGENT_TYPE:
            raise errors.DrAgentInvalid(id=agent_id)
        gone = conn.execute(sa.delete(H).where(H.c.agent_id == agent_id,
                                               H.c.bgp_speaker_id == speaker_id)).rowcount
        if not gone:
            raise errors.DrAgentNotHostingBgpSpeaker(bgp_speaker_id=speaker_id,
                                                     agent_id=agent_id)
        return str(agent.host)

    def speakers_on_agent(self, conn: Connection, agent_id: str) -> list[str]:
        ids = [r[0] for r in conn.execute(sa.select(H.c.bgp_speaker_id).where(
            H.c.agent_id == agent_id))]
        if not ids:
            self._agent(conn, agent_id)  # AgentNotFound
        return ids

    def agents_hosting(self, conn: Connection, speaker_id: str) -> list[str]:
        return [r[0] for r in conn.execute(sa.select(H.c.agent_id).where(
            H.c.bgp_speaker_id == speaker_id).order_by(H.c.agent_id))]

    def hosts(self, conn: Connection, speaker_ids: list[str]) -> dict[str, list[str]]:
        """Speaker id -> the hosts of the agents hosting it."""
        out: dict[str, list[str]] = {}
        if not speaker_ids:
            return out
        rows = conn.execute(sa.select(H.c.bgp_speaker_id, A.c.host).where(
            A.c.id == H.c.agent_id, H.c.bgp_speaker_id.in_(speaker_ids)).order_by(A.c.host))
        for speaker_id, host in rows:
            out.setdefault(speaker_id, []).append(host)
        return out

    # -- scheduling --------------------------------------------------------------------

    def _free_agents(self, conn: Connection) -> list[Any]:
        rows = conn.execute(sa.select(A).where(
            A.c.agent_type == AGENT_TYPE, A.c.admin_state_up.is_(True),
            ~sa.exists().where(H.c.agent_id == A.c.id)).order_by(A.c.id)).all()
        return [r for r in rows if self._alive(r)]

    def schedule(self, conn: Connection, speaker_id: str) -> list[str]:
        """Give an unhosted speaker to a free live agent; the hosts it went to."""
        if self.agents_hosting(conn, speaker_id):
            return []
        free = self._free_agents(conn)
        if not free:
            return []
        agent = random.choice(free)
        conn.execute(sa.insert(H).values(agent_id=agent.id, bgp_speaker_id=speaker_id))
        return [str(agent.host)]

    def schedule_unscheduled(self, conn: Connection) -> list[tuple[str, str]]:
        """Each free live agent takes one unhosted speaker: (speaker, host) bound."""
        unhosted = [r[0] for r in conn.execute(sa.select(S.c.id).where(
            ~sa.exists().where(H.c.bgp_speaker_id == S.c.id)).order_by(S.c.id))]
        done = []
        for agent, speaker_id in zip(self._free_agents(conn), unhosted, strict=False):
            conn.execute(sa.insert(H).values(agent_id=agent.id, bgp_speaker_id=speaker_id))
            done.append((speaker_id, str(agent.host)))
        return done

    def speakers_for_host(self, conn: Connection, host: str) -> list[str]:
        """The speakers the host's enabled DR agent hosts (none when disabled)."""
        agent = conn.execute(sa.select(A).where(A.c.agent_type == AGENT_TYPE,
                                                A.c.host == host)).first()
        if agent is None or not agent.admin_state_up:
            return []
        return [r[0] for r in conn.execute(sa.select(H.c.bgp_speaker_id).where(
            H.c.agent_id == agent.id))]
