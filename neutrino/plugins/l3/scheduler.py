"""Which L3 agent hosts which router (``l3_agent_scheduler``), as upstream.

A legacy router is hosted by one L3 agent, an HA router (``l3-ha``) by up
to ``max_l3_agents_per_router`` of them (0: all), each with its own
binding index and HA port: an alive, administratively up
agent whose ``agent_mode`` can host it (legacy or dvr_snat), that is not
pinned to another router (its ``router_id`` configuration) and that takes
internal-only routers (``handle_internal_only_routers``) if the router has
no gateway. ``router_scheduler_driver`` picks among the candidates: the one
hosting the fewest routers, or one at random.

Bindings are written under the router's row lock, and the unique
(router, binding_index) key keeps two servers scheduling one router at
once from binding it twice; the loser sees the router hosted and stops.
"""
from __future__ import annotations

import datetime as dt
import json
import logging
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

import sqlalchemy as sa
from sqlalchemy import Connection
from sqlalchemy import exc as sa_exc

from neutrino import errors
from neutrino.db import tables as t
from neutrino.plugins import availability_zones as az
from neutrino.plugins import store
from neutrino.plugins.agents import AGENT_TYPE_L3
from neutrino.plugins.l3 import common as c
from neutrino.plugins.l3 import dvr_hosts
from neutrino.plugins.loader import PluginLoadError
from neutrino.plugins.ml2 import agents_db

if TYPE_CHECKING:
    from oslo_config import cfg

    from neutrino.db.engine import Database
    from neutrino.plugins.core import CorePlugin
    from neutrino.plugins.l3.ha import HighAvailability

LOG = logging.getLogger(__name__)

b, a = t.routerl3agentbindings.c, t.agents.c
LEGACY, DVR, DVR_SNAT, DVR_NO_EXTERNAL = "legacy", "dvr", "dvr_snat", "dvr_no_external"
BINDING_INDEX = 1  # a legacy router's only binding

Chooser = Callable[[Connection, list[Any]], Any]


def least_routers(conn: Connection, candidates: list[Any]) -> Any:
    """The candidate hosting the fewest routers (the first of equals)."""
    ids = [agent.id for agent in candidates]
    counts = dict(conn.execute(sa.select(b.l3_agent_id, sa.func.count())
                               .where(b.l3_agent_id.in_(ids))
                               .group_by(b.l3_agent_id)).tuples().all())
    return min(candidates, key=lambda agent: (counts.get(agent.id, 0), agent.host, agent.id))


def chance(conn: Connection, candidates: list[Any]) -> Any:
    return random.choice(candidates)


def by_routers(conn: Connection, candidates: list[Any]) -> list[Any]:
    """The candidates, those hosting the fewest routers first."""
    ordered: list[Any] = []
    rest = list(candidates)
    while rest:
        ordered.append(least_routers(conn, rest))
        rest.remove(ordered[-1])
    return ordered


# ``router_scheduler_driver``: upstream's class paths and the short names.
SCHEDULERS: dict[str, Chooser] = {
    "neutron.scheduler.l3_agent_scheduler.LeastRoutersScheduler": least_routers,
    "neutron.scheduler.l3_agent_scheduler.ChanceScheduler": chance,
    "neutron.scheduler.l3_agent_scheduler.AZLeastRoutersScheduler": least_routers,
    "LeastRoutersScheduler": least_routers,
    "ChanceScheduler": chance,
    "AZLeastRoutersScheduler": least_routers,
}
# The zone-aware ones: a router goes only to agents in its hinted zones, an
# HA router's agents spread over them (upstream's AZLeastRoutersScheduler).
AZ_AWARE = frozenset(name for name in SCHEDULERS if name.endswith("AZLeastRoutersScheduler"))


def chooser(name: str) -> Chooser:
    try:
        return SCHEDULERS[name]
    except KeyError:
        raise PluginLoadError(f"[DEFAULT] router_scheduler_driver: unknown scheduler {name!r}; one of "
                         f"{', '.join(sorted(SCHEDULERS))}") from None


def configurations(agent: Any) -> dict[str, Any]:
    try:
        return json.loads(agent.configurations or "{}")
    except ValueError:
        return {}


def agent_mode(agent: Any) -> str:
    return configurations(agent).get("agent_mode", LEGACY)


def can_host(agent: Any, router: Any, ignore_admin_state: bool = False) -> bool:
    """Whether the L3 agent may host the router: a legacy one on a legacy or
    ``dvr_snat`` agent, a distributed one's SNAT part (only while it has a
    gateway) on a ``dvr_snat`` agent, as upstream."""
    if not ignore_admin_state and not agent.admin_state_up:
        return False
    conf = configurations(agent)
    mode = conf.get("agent_mode", LEGACY)
    if mode in (DVR, DVR_NO_EXTERNAL):
        return False
    if getattr(router, "distributed", False) and (mode != DVR_SNAT or not router.gw_port_id):
        return False
    if conf.get("router_id") and conf["router_id"] != router.id:
        return False
    return bool(router.gw_port_id) or conf.get("handle_internal_only_routers", True)


def _check_combination(agent: Any, router: Any) -> None:
    """Upstream's refusals of a manual binding: a centralized router on a
    ``dvr`` agent or a distributed one on a ``legacy`` agent do not fit;
    a ``dvr`` agent is never bound by hand (its routers follow its ports)."""
    mode, distributed = agent_mode(agent), bool(router.distributed)
    if (mode in (DVR, DVR_NO_EXTERNAL) and not distributed) or (mode == LEGACY and distributed):
        raise errors.RouterL3AgentMismatch(
            router_type="distributed" if distributed else "centralized",
            router_id=router.id, agent_mode=mode, agent_id=agent.id)
    if mode in (DVR, DVR_NO_EXTERNAL):
        raise errors.DVRL3CannotAssignToDvrAgent()


@dataclass(eq=False)
class Scheduler:
    """Router bindings; an HA router's ports follow its agents (``ha``)."""

    core: CorePlugin
    conf: cfg.ConfigOpts
    db: Database
    ha: HighAvailability
    choose: Chooser = field(init=False)

    def __post_init__(self) -> None:
        self.choose = chooser(self.conf.router_scheduler_driver)
        self.az_aware = self.conf.router_scheduler_driver in AZ_AWARE

    def _deadline(self, factor: int = 1) -> dt.datetime:
        return agents_db.utcnow() - dt.timedelta(seconds=self.conf.agent_down_time * factor)

    def _l3_agents(self, conn: Connection, *clauses: Any) -> list[Any]:
        return list(conn.execute(sa.select(t.agents).where(a.agent_type == AGENT_TYPE_L3,
                                                           *clauses).order_by(a.host)))

    def _active_agents(self, conn: Connection) -> list[Any]:
        return self._l3_agents(conn, a.admin_state_up.is_(True),
                               a.heartbeat_timestamp >= self._deadline())

    # -- reading ---------------------------------------------------------------------

    def agents_of(self, conn: Connection, router_ids: Sequence[str]) -> dict[str, list[Any]]:
        """The agent rows hosting each router."""
        out: dict[str, list[Any]] = {}
        for part in store.chunks(list(router_ids)):
            for row in conn.execute(sa.select(b.router_id, t.agents)
                                    .join(t.agents, a.id == b.l3_agent_id)
                                    .where(b.router_id.in_(part)).order_by(a.host)):
                out.setdefault(row.router_id, []).append(row)
        return out

    def hosts_to_notify(self, conn: Connection,
                        router_ids: Sequence[str]) -> dict[str, list[str]]:
        """Router ids per host of the alive, enabled agents hosting them."""
        deadline = self._deadline()
        out: dict[str, list[str]] = {}
        for router_id, agents in self.agents_of(conn, router_ids).items():
            for agent in agents:
                if agent.admin_state_up and agent.heartbeat_timestamp >= deadline:
                    out.setdefault(agent.host, []).append(router_id)
        # ``dvr``: the hosts a distributed router routes on, not bound to it
        spread = dvr_hosts.hosts_of(conn, router_ids)
        if spread:
            alive = {agent.host for agent in self._active_agents(conn)
                     if agent_mode(agent) in dvr_hosts.DVR_MODES}
            for router_id, hosts in sorted(spread.items()):
                for host in sorted(hosts & alive):
                    if router_id not in out.get(host, []):
                        out.setdefault(host, []).append(router_id)
        return out

    def router_ids_on_agent(self, conn: Connection, agent_id: str) -> list[str]:
        return [r.router_id for r in conn.execute(
            sa.select(b.router_id).where(b.l3_agent_id == agent_id).order_by(b.router_id))]

    def agent_on_host(self, conn: Connection, host: str) -> Any:
        return conn.execute(sa.select(t.agents).where(a.agent_type == AGENT_TYPE_L3,
                                                      a.host == host)).first()

    # -- automatic scheduling ------------------------------------------------------

    def schedule(self, router_ids: Iterable[str],
                 candidates: list[Any] | None = None) -> dict[str, str]:
        """Bind each unhosted router to a chosen agent; {router_id: host} bound."""
        bound: dict[str, str] = {}
        for router_id in router_ids:
            host = self.core.write(
                lambda conn, rid=router_id: self._schedule_one(conn, rid, candidates))
            if host is not None:
                bound[router_id] = host
                self.ha.sync_ports(router_id)
        return bound

    def _wanted(self, router: Any) -> int:
        """How many agents the router should have (0: as many as can)."""
        if not router.ha:
            return 1
        return self.conf.max_l3_agents_per_router

    def _schedule_one(self, conn: Connection, router_id: str,
                      candidates: list[Any] | None) -> str | None:
        router = conn.execute(sa.select(t.routers).where(t.routers.c.id == router_id)
                              .with_for_update()).first()
        if router is None:
            return None
        current = {r.l3_agent_id: r.binding_index for r in conn.execute(
            sa.select(b.l3_agent_id, b.binding_index).where(b.router_id == router_id))}
        wanted = self._wanted(router)
        if current and (not router.ha or (wanted and len(current) >= wanted)):
            return None
        pool = self._active_agents(conn) if candidates is None else candidates
        fit = [agent for agent in pool if can_host(agent, router) and agent.id not in current]
        if self.az_aware:
            fit = az.in_zones(fit, az.from_text(router.availability_zone_hints)
                              or list(self.conf.default_availability_zones))
        if not fit:
            if not current:
                LOG.warning("no L3 agent can host router %s", router_id)
            return None
        first: str | None = None
        index = 1
        if self.az_aware and router.ha:  # in turn from each zone, least busy first
            fit = az.spread(by_routers(conn, fit), wanted - len(current) if wanted else len(fit))
        while fit and (not wanted or len(current) < wanted):
            agent = fit[0] if self.az_aware and router.ha else self.choose(conn, fit)
            fit.remove(agent)
            while index in current.values():
                index += 1
            if not self._bind(conn, router_id, agent.id, index):
                return first
            current[agent.id] = index
            first = first or str(agent.host)
        return first

    def _is_bound(self, conn: Connection, router_id: str) -> bool:
        return conn.execute(sa.select(b.l3_agent_id).where(b.router_id == router_id)
                            .limit(1)).first() is not None

    def _bind(self, conn: Connection, router_id: str, agent_id: str,
              index: int = BINDING_INDEX) -> bool:
        try:
            with conn.begin_nested():
                conn.execute(sa.insert(t.routerl3agentbindings).values(
                    router_id=router_id, l3_agent_id=agent_id, binding_index=index))
        except sa_exc.IntegrityError:
            return False  # bound meanwhile (or the router went away)
        return True

    def has_something_to_host(self, conn: Connection, router_ids: Sequence[str]) -> list[str]:
        """The routers with a gateway or an interface."""
        with_ports = {r.router_id for part in store.chunks(list(router_ids))
                      for r in conn.execute(sa.select(t.routerports.c.router_id).distinct()
                                            .where(t.routerports.c.router_id.in_(part)))}
        return [rid for rid in router_ids if rid in with_ports]

    def auto_schedule(self, host: str) -> list[str]:
        """Unhosted routers the enabled, alive agent on ``host`` can take."""
        with self.db.reader() as conn:
            agent = self.agent_on_host(conn, host)
            if (agent is None or not agent.admin_state_up
                    or agent.heartbeat_timestamp < self._deadline()):
                return []
            bound = sa.select(b.router_id)
            # HA routers may take one more agent (``_schedule_one`` decides).
            routers = list(conn.execute(sa.select(t.routers).where(
                sa.or_(t.routers.c.id.not_in(bound), t.routers.c.ha.is_(True)))))
            wanted = [r.id for r in routers if can_host(agent, r)]
        return list(self.schedule(wanted, candidates=[agent]))

    def unbind_misfits(self, router_id: str) -> list[str]:
        """``dvr``: after a router changed between centralized and distributed
        or a distributed one lost its gateway, the agents that can no longer
        host it let it go (as upstream unbinds the SNAT part); their hosts."""
        def op(conn: Connection) -> list[str]:
            router = conn.execute(sa.select(t.routers).where(t.routers.c.id == router_id)
                                  .with_for_update()).first()
            if router is None or router.ha:
                return []
            gone = []
            for row in self.agents_of(conn, [router_id]).get(router_id, []):
                mode = agent_mode(row)
                misfit = (mode == DVR_SNAT and router.distributed and not router.gw_port_id) or (
                    mode == LEGACY and router.distributed)
                if misfit:
                    conn.execute(sa.delete(t.routerl3agentbindings).where(
                        b.router_id == router_id, b.l3_agent_id == row.id))
                    gone.append(str(row.host))
            return gone
        return list(self.core.write(op))

    # -- failover --------------------------------------------------------------------

    def reschedule_from_down_agents(self) -> list[tuple[str, str, str]]:
        """Move routers off agents dead for twice ``agent_down_time`` (enabled
        ones: an admin-disabled agent keeps its routers); (router, old, new)."""
        with self.db.reader() as conn:
            rows = list(conn.execute(
                sa.select(b.router_id, b.l3_agent_id, a.host)
                .join(t.agents, a.id == b.l3_agent_id)
                .join(t.routers, t.routers.c.id == b.router_id)
                # HA routers stay: their other agents take over (VRRP).
                .where(a.heartbeat_timestamp < self._deadline(2),
                       a.admin_state_up.is_(True), t.routers.c.ha.is_(False))))
        moved = []
        for row in rows:
            try:
                new_host = self.core.write(
                    lambda conn, r=row: self._move(conn, r.router_id, r.l3_agent_id))
            except errors.RouterReschedulingFailed as exc:
                LOG.warning("%s", exc)
                continue
            if new_host is not None:
                moved.append((row.router_id, row.host, new_host))
        return moved

    def _move(self, conn: Connection, router_id: str, agent_id: str) -> str | None:
        router = conn.execute(sa.select(t.routers).where(t.routers.c.id == router_id)
                              .with_for_update()).first()
        if router is None:
            return None
        gone = conn.execute(sa.delete(t.routerl3agentbindings).where(
            b.router_id == router_id, b.l3_agent_id == agent_id)).rowcount
        if not gone:
            return None  # another server moved it first
        host = self._schedule_one(conn, router_id, None)
        if host is None:
            raise errors.RouterReschedulingFailed(router_id=router_id)
        return host

    # -- the scheduler API -----------------------------------------------------------

    def add(self, agent_id: str, router_id: str) -> bool:
        """Bind by hand (``POST /agents/{id}/l3-routers``); False: already there."""
        def op(conn: Connection) -> bool:
            router = c.lock_router(conn, router_id)
            agent = store.get_row(conn, t.agents, agent_id,
                                  lambda: errors.AgentNotFound(id=agent_id))
            if agent.agent_type != AGENT_TYPE_L3:
                raise errors.InvalidL3Agent(id=agent_id)
            _check_combination(agent, router)
            if not agent.admin_state_up or not can_host(agent, router, True):
                raise errors.InvalidL3Agent(id=agent_id)
            current = [r.l3_agent_id for r in conn.execute(
                sa.select(b.l3_agent_id).where(b.router_id == router_id))]
            if agent_id in current:
                return False
            if current and not router.ha:
                raise errors.RouterHostedByL3Agent(router_id=router_id, agent_id=current[0])
            indexes = {r.binding_index for r in conn.execute(
                sa.select(b.binding_index).where(b.router_id == router_id))}
            index = next(i for i in range(1, len(indexes) + 2) if i not in indexes)
            if not self._bind(conn, router_id, agent_id, index):
                raise errors.RouterSchedulingFailed(router_id=router_id, agent_id=agent_id)
            return True
        added = bool(self.core.write(op))
        if added:
            self.ha.sync_ports(router_id)
        return added

    def remove(self, agent_id: str, router_id: str) -> str:
        """Unbind by hand; the agent's host (to tell it)."""
        def op(conn: Connection) -> str:
            agent = store.get_row(conn, t.agents, agent_id,
                                  lambda: errors.AgentNotFound(id=agent_id))
            if agent_mode(agent) in (DVR, DVR_NO_EXTERNAL):
                raise errors.DVRL3CannotRemoveFromDvrAgent()
            c.lock_router(conn, router_id)
            conn.execute(sa.delete(t.routerl3agentbindings).where(
                b.router_id == router_id, b.l3_agent_id == agent_id))
            return str(agent.host)
        host = str(self.core.write(op))
        self.ha.delete_ports(router_id, agent_id)
        return host
