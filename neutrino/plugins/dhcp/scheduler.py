"""Which DHCP agents serve a network: the bindings and the choice of agents.

A network needs DHCP service once it has a DHCP-enabled subnet; it gets up
to ``dhcp_agents_per_network`` agents, chosen among the DHCP agents that are
alive and administratively up. The choice is a small pure strategy
(``WeightScheduler``: least loaded first; ``ChanceScheduler``: at random);
everything else here is SQL on ``networkdhcpagentbindings``.

Two servers scheduling one network at once cannot give it more agents than
configured: each binding takes a free ``binding_index`` of the network
(1..dhcp_agents_per_network), unique per network, and the loser of that race
simply does not bind.
"""
from __future__ import annotations

import abc
import datetime as dt
import json
import logging
import random
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import sqlalchemy as sa
from sqlalchemy import Connection
from sqlalchemy import exc as sa_exc

from neutrino.db import tables as t
from neutrino.plugins import availability_zones as az
from neutrino.plugins import store
from neutrino.plugins.loader import PluginLoadError, load_class
from neutrino.plugins.ml2 import agents_db

LOG = logging.getLogger(__name__)

AGENT_TYPE_DHCP = "DHCP agent"
DEVICE_OWNER_DHCP = "network:dhcp"
RESERVED_DHCP_PORT = "reserved_dhcp_port"  # a DHCP port kept for the next agent
LOWEST_BINDING_INDEX = 1

A, NB, S = t.agents.c, t.networkdhcpagentbindings.c, t.subnets.c


@dataclass
class DhcpAgent:
    id: str
    host: str
    topic: str
    admin_state_up: bool
    alive: bool
    load: int
    started_at: dt.datetime
    availability_zone: str | None = None
    hosted: int = 0  # networks bound to it now (ties of equal load)


def dhcp_agents(conn: Connection, down_time: int, *where: Any,
                load_type: str = "networks") -> list[DhcpAgent]:
    """DHCP agents (matching ``where``), alive or not, with the load their
    last report stated for ``load_type``."""
    now = agents_db.utcnow()
    rows = conn.execute(sa.select(A.id, A.host, A.topic, A.admin_state_up, A.configurations,
                                  A.heartbeat_timestamp, A.started_at, A.availability_zone)
                        .where(A.agent_type == AGENT_TYPE_DHCP, *where).order_by(A.host))
    return [DhcpAgent(r.id, r.host, r.topic, bool(r.admin_state_up),
                      agents_db.is_alive(r.heartbeat_timestamp, down_time, now),
                      load_of(r.configurations, load_type), r.started_at,
                      r.availability_zone) for r in rows]


def agent_by_host(conn: Connection, host: str, down_time: int) -> DhcpAgent | None:
    found = dhcp_agents(conn, down_time, A.host == host)
    return found[0] if found else None


def hosting(conn: Connection, network_ids: Iterable[str],
            down_time: int) -> dict[str, list[DhcpAgent]]:
    """The agents bound to each network, in one query."""
    ids = list(dict.fromkeys(network_ids))
    out: dict[str, list[DhcpAgent]] = {i: [] for i in ids}
    if not ids:
        return out
    pairs = list(conn.execute(sa.select(NB.network_id, NB.dhcp_agent_id)
                              .where(NB.network_id.in_(ids))
                              .order_by(NB.binding_index)))
    agents = {a.id: a for a in dhcp_agents(conn, down_time, A.id.in_(
        list({p.dhcp_agent_id for p in pairs}) or [""]))}
    for pair in pairs:
        if pair.dhcp_agent_id in agents:
            out[pair.network_id].append(agents[pair.dhcp_agent_id])
    return out


def networks_of_agent(conn: Connection, agent_id: str) -> list[str]:
    return [r.network_id for r in conn.execute(
        sa.select(NB.network_id).where(NB.dhcp_agent_id == agent_id))]


def needs_dhcp(conn: Connection, network_id: str) -> bool:
    return conn.execute(sa.select(S.id).where(S.network_id == network_id,
                                              S.enable_dhcp.is_(True)).limit(1)).first() is not None


def bind(conn: Connection, network_id: str, agent_id: str, per_network: int,
         force: bool = False) -> bool:
    """Bind the network to the agent with a free binding index; False when
    none is free (unless ``force``, which manual scheduling uses) or when
    another server took it first."""
    used = {r.binding_index for r in conn.execute(
        sa.select(NB.binding_index).where(NB.network_id == network_id))}
    free = [i for i in range(LOWEST_BINDING_INDEX, LOWEST_BINDING_INDEX + per_network)
            if i not in used]
    if not free:
        if not force:
            return False
        free = [max(used, default=0) + 1]
    try:
        with conn.begin_nested():
            conn.execute(sa.insert(t.networkdhcpagentbindings).values(
                network_id=network_id, dhcp_agent_id=agent_id, binding_index=free[0]))
    except sa_exc.IntegrityError:
        LOG.info("network %s: binding to agent %s lost a race", network_id, agent_id)
        return False
    return True


def bind_many(conn: Connection, network_ids: list[str], agent_id: str,
              per_network: int) -> list[str]:
    """``bind`` of many networks to one agent in a few statements a chunk
    (an agent's first sync may be given thousands); those bound. A chunk
    that loses a race to another server is bound one by one."""
    bound: list[str] = []
    for part in store.chunks(network_ids):
        used: dict[str, set[int]] = {}
        for r in conn.execute(sa.select(NB.network_id, NB.binding_index)
                              .where(NB.network_id.in_(part))):
            used.setdefault(r.network_id, set()).add(r.binding_index)
        rows = []
        for network_id in part:
            free = [i for i in range(LOWEST_BINDING_INDEX, LOWEST_BINDING_INDEX + per_network)
                    if i not in used.get(network_id, ())]
            if free:
                rows.append({"network_id": network_id, "dhcp_agent_id": agent_id,
                             "binding_index": free[0]})
        if not rows:
            continue
        try:
            with conn.begin_nested():
                conn.execute(sa.insert(t.networkdhcpagentbindings), rows)
            bound += [r["network_id"] for r in rows]
        except sa_exc.IntegrityError:
            bound += [r["network_id"] for r in rows
                      if bind(conn, r["network_id"], agent_id, per_network)]
    return bound


def unbind(conn: Connection, network_id: str, agent_id: str) -> bool:
    return conn.execute(sa.delete(t.networkdhcpagentbindings).where(
        NB.network_id == network_id, NB.dhcp_agent_id == agent_id)).rowcount > 0


def hosted_counts(conn: Connection, agent_ids: list[str]) -> dict[str, int]:
    if not agent_ids:
        return {}
    return {r.dhcp_agent_id: r.n for r in conn.execute(
        sa.select(NB.dhcp_agent_id, sa.func.count().label("n"))
        .where(NB.dhcp_agent_id.in_(agent_ids)).group_by(NB.dhcp_agent_id))}


# -- choosing agents -------------------------------------------------------------


class NetworkScheduler(abc.ABC):
    """Picks ``needed`` agents among the candidates (all alive, up and in
    the network's hinted zones); ``hosting`` are the network's agents now."""

    @abc.abstractmethod
    def select(self, candidates: list[DhcpAgent], needed: int,
               hosting: Sequence[DhcpAgent] = ()) -> list[DhcpAgent]:
        """The chosen agents, at most ``needed``."""


def _by_weight(candidates: list[DhcpAgent]) -> list[DhcpAgent]:
    return sorted(candidates, key=lambda a: (a.load, a.hosted, a.host))


class WeightScheduler(NetworkScheduler):
    """The least loaded agents: the load they report (``dhcp_load_type``),
    then the networks they host now, then the host name."""

    def select(self, candidates: list[DhcpAgent], needed: int,
               hosting: Sequence[DhcpAgent] = ()) -> list[DhcpAgent]:
        return _by_weight(candidates)[:max(needed, 0)]


class AZAwareWeightScheduler(NetworkScheduler):
    """The least loaded agents spread over zones: a network's agents land
    in different zones while it has fewer agents than zones to use."""

    def select(self, candidates: list[DhcpAgent], needed: int,
               hosting: Sequence[DhcpAgent] = ()) -> list[DhcpAgent]:
        return az.spread(_by_weight(candidates), needed, hosting)


class ChanceScheduler(NetworkScheduler):
    """Agents at random."""

    def select(self, candidates: list[DhcpAgent], needed: int,
               hosting: Sequence[DhcpAgent] = ()) -> list[DhcpAgent]:
        return random.sample(candidates, min(max(needed, 0), len(candidates)))


_BY_NAME = {"WeightScheduler": WeightScheduler, "ChanceScheduler": ChanceScheduler,
            "AZAwareWeightScheduler": AZAwareWeightScheduler}


def scheduler_from(name: str) -> NetworkScheduler:
    """``[DEFAULT] network_scheduler_driver``: upstream's class paths
    (``neutron.scheduler.dhcp_agent_scheduler.WeightScheduler``) and the
    short names map to ours; anything else must be an importable class."""
    short = name.replace(":", ".").rpartition(".")[2]
    if name.startswith("neutron.scheduler.") or "." not in name:
        if short in _BY_NAME:
            return _BY_NAME[short]()
        raise PluginLoadError(f"[DEFAULT] network_scheduler_driver: unknown scheduler "
                              f"'{name}' (one of {', '.join(sorted(_BY_NAME))})")
    cls = load_class("neutrino.network_schedulers", name)
    if not (isinstance(cls, type) and issubclass(cls, NetworkScheduler)):
        raise PluginLoadError(f"[DEFAULT] network_scheduler_driver: '{name}' is not "
                              f"a network scheduler")
    return cls()


def load_of(configurations: str | None, load_type: str) -> int:
    """The load an agent's report states for ``dhcp_load_type``."""
    try:
        return int(json.loads(configurations or "{}").get(load_type, 0))
    except (ValueError, TypeError, AttributeError):
        return 0
