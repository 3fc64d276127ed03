"""The ``l3_agent_scheduler`` extension's API, the core events that concern
L3 agents, and the failover loop.

- ``GET|POST /v2.0/agents/{id}/l3-routers``,
  ``DELETE /v2.0/agents/{id}/l3-routers/{router_id}`` and
  ``GET /v2.0/routers/{id}/l3-agents``, admin-only by upstream's policy;
- a subnet or a router port changing tells the agents hosting the routers
  on it (``routers_updated``);
- with ``allow_automatic_l3agent_failover``, the RPC process checks every
  ``agent_down_time / 2`` seconds for routers on dead agents and moves them.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from oslo_policy import policy

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.db.engine import after_commit
from neutrino.plugins import events as ev
from neutrino.plugins import store
from neutrino.plugins.base import ApiExtension, CustomRoute
from neutrino.plugins.l3 import common as c
from neutrino.plugins.l3 import dvr_hosts
from neutrino.plugins.ml2.dvr_ports import serviceable
from neutrino.resources.extensions import described

if TYPE_CHECKING:
    from neutrino.db.engine import Database
    from neutrino.plugins.agents import Agents
    from neutrino.plugins.core import CorePlugin
    from neutrino.plugins.l3.ha import HighAvailability
    from neutrino.plugins.l3.notifier import L3AgentNotifier
    from neutrino.plugins.l3.routers import Routers
    from neutrino.plugins.l3.scheduler import Scheduler

LOG = logging.getLogger(__name__)

L3_AGENT_SCHEDULER = described("l3_agent_scheduler")

POLICIES = {
    "create_l3-router": "rule:admin_only",
    "get_l3-routers": "rule:admin_only",
    "update_l3-router": "rule:admin_only",
    "delete_l3-router": "rule:admin_only",
    "get_l3-agents": "rule:admin_only",
}


@dataclass(eq=False)
class SchedulerApi:
    """The handlers of the extension's routes."""

    db: Database
    agents: Agents
    routers: Routers
    scheduler: Scheduler
    ha: HighAvailability
    notifier: L3AgentNotifier

    def routers_on_agent(self, api: Any, ctx: Context, fields: dict[str, str],
                         body: Any) -> Any:
        agent_id = fields["rid"]
        with self.db.reader() as conn:
            ids = self.scheduler.router_ids_on_agent(conn, agent_id)
            if not ids:
                self.agents.get(conn, agent_id)  # 404 for an unknown agent
                return {"routers": []}
        routers, _ = self.routers.list(Context.admin(), "routers",
                                              store.ListQuery(filters={"id": ids}))
        return {"routers": routers}

    def add_router(self, api: Any, ctx: Context, fields: dict[str, str],
                   body: Any) -> Any:
        if not isinstance(body, dict) or not isinstance(body.get("router_id"), str):
            raise errors.HTTPBadRequest(msg="Body contains invalid data")
        agent_id, router_id = fields["rid"], body["router_id"]
        if self.scheduler.add(agent_id, router_id):
            with self.db.reader() as conn:
                host = self.agents.get(conn, agent_id)["host"]
            self.notifier.router_added_to_agent([router_id], host)
        return None

    def remove_router(self, api: Any, ctx: Context, fields: dict[str, str],
                      body: Any) -> Any:
        router_id = fields["child_id"]
        host = self.scheduler.remove(fields["rid"], router_id)
        self.notifier.router_removed_from_agent(router_id, host)
        return None

    def agents_of_router(self, api: Any, ctx: Context, fields: dict[str, str],
                         body: Any) -> Any:
        router_id = fields["rid"]
        with self.db.reader() as conn:
            router = store.get_row(conn, t.routers, router_id,
                                   lambda: c.router_not_found(router_id))
            rows = self.scheduler.agents_of(conn, [router_id]).get(router_id, [])
            agents = self.agents.to_dicts(rows)
            if router.ha:  # ``l3-ha``: what each agent last reported
                states = self.ha.states(conn, router_id)
                for agent in agents:
                    agent["ha_state"] = states.get(agent["id"])
            return {"agents": agents}


def extension(api: SchedulerApi) -> ApiExtension:
    return ApiExtension(
        descriptor=L3_AGENT_SCHEDULER,
        routes=[
            CustomRoute("/agents/{rid}/l3-routers", {
                "GET": ("get_l3-routers", 200, api.routers_on_agent),
                "POST": ("create_l3-router", 201, api.add_router)}),
            CustomRoute("/agents/{rid}/l3-routers/{child_id}", {
                "DELETE": ("delete_l3-router", 204, api.remove_router)}),
            CustomRoute("/routers/{rid}/l3-agents", {
                "GET": ("get_l3-agents", 200, api.agents_of_router)}),
        ],
        policies=[policy.RuleDefault(name, check, scope_types=["project"])
                  for name, check in POLICIES.items()])


# -- core changes that concern the agents hosting routers ---------------------------

def subscribe(core: CorePlugin, db: Database, notifier: L3AgentNotifier) -> None:
    """Before ``guards``: a port being deleted still shows its floating IPs."""
    fip_routers = FloatingIpRouters(notifier)
    core.events.subscribe("ports", ev.PRECOMMIT_DELETE, fip_routers.before_delete)
    core.events.subscribe("ports", ev.AFTER_UPDATE,
                          lambda ctx, old, new: _port_updated(notifier, old, new))
    core.events.subscribe("subnets", ev.AFTER_UPDATE,
                          lambda ctx, old, new: _subnet_updated(db, notifier, old, new))
    served = ServedPorts(db, notifier)
    core.events.subscribe("ports", ev.AFTER_CREATE, lambda ctx, port: served.changed(None, port))
    core.events.subscribe("ports", ev.AFTER_UPDATE, lambda ctx, old, new: served.changed(old, new))
    core.events.subscribe("ports", ev.AFTER_DELETE, lambda ctx, port: served.changed(port, None))


@dataclass
class ServedPorts:
    """``dvr``: an instance's port bound, moved, readdressed or gone on a
    subnet of distributed routers: those routers now live on (or leave) its
    host, and every host's copy has another permanent neighbour; their
    agents are told (upstream's DVR ARP updates and scheduling on port
    binding)."""

    db: Database
    notifier: L3AgentNotifier

    def changed(self, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        ports = [p for p in (old, new) if p and serviceable(p.get("device_owner") or "")]
        if not ports:
            return
        if old and new and all(old.get(k) == new.get(k) for k in
                               ("binding:host_id", "fixed_ips", "mac_address")):
            return
        subnets = sorted({i["subnet_id"] for p in ports for i in p.get("fixed_ips") or ()})
        with self.db.reader() as conn:
            ids = dvr_hosts.routers_of_subnets(conn, subnets)
        if ids:
            self.notifier.routers_updated(ids, schedule=False)


class FloatingIpRouters:
    """A deleted port's floating IPs lose their router: tell its agents.

    The routers are read inside the delete's transaction (before the
    floating IPs are disassociated) and told once it committed.
    """

    def __init__(self, notifier: L3AgentNotifier) -> None:
        self.notifier = notifier

    def before_delete(self, conn: Any, ctx: Context, port: dict[str, Any]) -> None:
        f = t.floatingips.c
        ids = [r.router_id for r in conn.execute(
            sa.select(f.router_id).distinct().where(f.fixed_port_id == port["id"],
                                                    f.router_id.is_not(None)))]
        if ids:
            after_commit(conn, lambda: self.notifier.routers_updated(ids, schedule=False))


def _port_updated(notifier: L3AgentNotifier, old: dict[str, Any], new: dict[str, Any]) -> None:
    """A router's port got other addresses (or was moved): its router changed."""
    if new.get("device_owner") not in (*c.INTERFACE_OWNERS, c.GATEWAY):
        return
    if old.get("fixed_ips") != new.get("fixed_ips") or old.get("mtu") != new.get("mtu"):
        notifier.routers_updated([new["device_id"]], schedule=False)


SUBNET_KEYS = ("gateway_ip", "host_routes", "dns_nameservers", "allocation_pools")


def _subnet_updated(db: Database, notifier: L3AgentNotifier, old: dict[str, Any],
                    new: dict[str, Any]) -> None:
    if all(old.get(k) == new.get(k) for k in SUBNET_KEYS):
        return
    rp, ip = t.routerports.c, t.ipallocations.c
    with db.reader() as conn:
        ids = [r.router_id for r in conn.execute(
            sa.select(rp.router_id).distinct().join(t.ipallocations, ip.port_id == rp.port_id)
            .where(ip.subnet_id == new["id"]))]
    notifier.routers_updated(ids, schedule=False)


# -- failover --------------------------------------------------------------------------

def fail_over(scheduler: Scheduler, notifier: L3AgentNotifier) -> None:
    """Move routers off dead L3 agents and tell the agents concerned."""
    notifier.rescheduled(scheduler.reschedule_from_down_agents())
