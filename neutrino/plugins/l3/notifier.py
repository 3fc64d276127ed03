"""Telling L3 agents what changed (upstream's L3AgentNotifyAPI), after commit.

Messages go to topic ``l3_agent``: ``routers_updated`` to the hosts of the
alive, enabled agents hosting the routers (scheduling unhosted routers
first, when ``router_auto_schedule``), ``router_deleted`` to every L3 agent
(the bindings are gone with the router), ``router_added_to_agent`` and
``router_removed_from_agent`` to one host. They are casts: an agent that
misses one catches up on its next full sync.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Callable, Iterable

from neutrino.rpc.casts import Casts

if TYPE_CHECKING:
    from oslo_config import cfg

    from neutrino.db.engine import Database
    from neutrino.plugins.l3.scheduler import Scheduler

LOG = logging.getLogger(__name__)

L3_AGENT = "l3_agent"


class L3AgentNotifier:
    def __init__(self, conf: cfg.ConfigOpts, db: Database, scheduler: Scheduler) -> None:
        self.conf = conf
        self.db = db
        self.scheduler = scheduler
        self.casts = Casts(conf)
        # Other service plugins that derive state from routers (BGP speakers'
        # routes) hear the ids of routers changed or deleted, after commit.
        self.watchers: list[Callable[[list[str]], None]] = []

    def _tell_watchers(self, ids: list[str]) -> None:
        for watcher in self.watchers:
            try:
                watcher(ids)
            except Exception:  # noqa: BLE001 - the change is committed; tell, never undo
                LOG.exception("router watcher %r failed", watcher)

    def routers_updated(self, router_ids: Iterable[str], schedule: bool = True) -> None:
        ids = list(dict.fromkeys(r for r in router_ids if r))
        if not ids:
            return
        self._tell_watchers(ids)
        if schedule and self.conf.router_auto_schedule:
            with self.db.reader() as conn:
                hostable = self.scheduler.has_something_to_host(conn, ids)
            self.scheduler.schedule(hostable)
        with self.db.reader() as conn:
            hosts = self.scheduler.hosts_to_notify(conn, ids)
        for host, on_host in sorted(hosts.items()):
            for router_id in on_host:
                self.casts.cast(L3_AGENT, "routers_updated", server=host, version="1.1",
                                routers=[router_id])

    def router_deleted(self, router_id: str) -> None:
        self._tell_watchers([router_id])
        self.casts.cast(L3_AGENT, "router_deleted", fanout=True, router_id=router_id)

    def router_added_to_agent(self, router_ids: list[str], host: str) -> None:
        self.casts.cast(L3_AGENT, "router_added_to_agent", server=host, payload=router_ids)

    def router_removed_from_agent(self, router_id: str, host: str) -> None:
        self.casts.cast(L3_AGENT, "router_removed_from_agent", server=host,
                        payload={"router_id": router_id})

    def rescheduled(self, moves: list[tuple[str, str, str]]) -> None:
        """After failover: the old host drops the router, the new one takes it."""
        for router_id, old_host, new_host in moves:
            if old_host != new_host:
                self.router_removed_from_agent(router_id, old_host)
            self.router_added_to_agent([router_id], new_host)
