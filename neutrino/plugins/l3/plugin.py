"""The L3 service plugin (``service_plugins = router``, L3_ROUTER_NAT).

Routers with an external gateway (``ext-gw-mode``'s SNAT switch), interfaces
and static routes (``extraroute``, ``extraroute-atomic``), and floating IPs.
Distributed routers (``dvr``) and HA routers (``l3-ha``) as the API and
the server keep them (``dvr`` and ``ha`` modules). Flavors and
availability zones are not implemented, so their attributes and aliases
are absent, as upstream shows them when those extensions are off.
"""
from __future__ import annotations

from typing import Any

from oslo_policy import policy
import sqlalchemy as sa
from sqlalchemy import Connection

from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins.base import ApiExtension, PeriodicTask, ServicePlugin
from neutrino.plugins.l3 import agent_scheduling, guards
from neutrino.plugins.l3.dvr import Distributed
from neutrino.plugins.l3.floatingips import FloatingIps
from neutrino.plugins.l3.ha import HighAvailability
from neutrino.plugins.l3.interfaces import Interfaces
from neutrino.plugins.l3.notifier import L3AgentNotifier
from neutrino.plugins.l3.pools import FloatingIpPools
from neutrino.plugins.l3.routers import Routers
from neutrino.plugins.l3.routes import RouteActions
from neutrino.plugins.l3.scheduler import Scheduler
from neutrino.quota.engine import Countable
from neutrino.resources import l3 as defs
from neutrino.resources.extensions import described

ROUTER = described("router")
EXT_GW_MODE = described("ext-gw-mode")
EXTRAROUTE = described("extraroute")
EXTRAROUTE_ATOMIC = described("extraroute-atomic")
FIP_PORT_DETAILS = described("fip-port-details")
FLOATINGIP_POOLS = described("floatingip-pools")

_MEMBER = "(rule:admin_only) or (role:member and project_id:%(project_id)s)"
_READER = "(rule:admin_only) or (role:reader and project_id:%(project_id)s)"

POLICIES = {
    "create_router": _MEMBER,
    "create_router:external_gateway_info": _MEMBER,
    "create_router:external_gateway_info:network_id": _MEMBER,
    "create_router:external_gateway_info:enable_snat": "rule:admin_only",
    "create_router:external_gateway_info:external_fixed_ips": "rule:admin_only",
    "create_router:tags": _MEMBER,
    "get_router": _READER,
    "get_router:tags": _READER,
    "update_router": _MEMBER,
    "update_router:external_gateway_info": _MEMBER,
    "update_router:external_gateway_info:network_id": _MEMBER,
    "update_router:external_gateway_info:enable_snat": "rule:admin_only",
    "update_router:external_gateway_info:external_fixed_ips": "rule:admin_only",
    "update_router:tags": _MEMBER,
    "create_router:distributed": "rule:admin_only",
    "get_router:distributed": "rule:admin_only",
    "update_router:distributed": "rule:admin_only",
    "create_router:ha": "rule:admin_only",
    "get_router:ha": "rule:admin_only",
    "update_router:ha": "rule:admin_only",
    "delete_router": _MEMBER,
    "delete_router:tags": _MEMBER,
    "add_router_interface": _MEMBER,
    "remove_router_interface": _MEMBER,
    "add_extraroutes": _MEMBER,
    "remove_extraroutes": _MEMBER,
    "create_floatingip": _MEMBER,
    "create_floatingip:floating_ip_address":
        "(rule:admin_only) or (role:manager and project_id:%(project_id)s)",
    "create_floatingip:tags": _MEMBER,
    "get_floatingip": _READER,
    "get_floatingip:tags": _READER,
    "update_floatingip": _MEMBER,
    "update_floatingip:tags": _MEMBER,
    "delete_floatingip": _MEMBER,
    "delete_floatingip:tags": _MEMBER,
    "get_floatingip_pool": _READER,
}


class L3Plugin(ServicePlugin):
    """Routers and floating IPs (L3_ROUTER_NAT)."""

    service_type = "L3_ROUTER_NAT"
    supported_extension_aliases = ("router", "ext-gw-mode", "extraroute", "extraroute-atomic",
                                   "fip-port-details", "floatingip-pools", "dvr",
                                   "router-admin-state-down-before-update", "l3_agent_scheduler",
                                   "l3-ha")

    def __init__(self, conf: Any, db: Any) -> None:
        super().__init__(conf, db)
        self.routers = Routers(self)
        self.floatingips = FloatingIps(self)
        self.interfaces = Interfaces(self)
        self.route_actions = RouteActions(self)
        self.pools = FloatingIpPools(self)
        self.distributed = Distributed(self)
        self.ha = HighAvailability(self)
        self.scheduler = Scheduler(self)
        self.l3_notifier = L3AgentNotifier(self)
        self.agent_notifiers["L3 agent"] = self.l3_notifier
        self.directory: Any = None

    def connect(self, core: Any) -> None:
        super().connect(core)
        agent_scheduling.subscribe(self, core)
        guards.subscribe(core)

    def bind(self, plugins: Any) -> None:
        self.directory = plugins

    def rpc_endpoints(self) -> dict[str, list[Any]]:
        """``q-l3-plugin`` for L3 agents."""
        from neutrino.plugins.l3.rpc import L3RpcEndpoint
        from neutrino.rpc import topics
        return {topics.L3PLUGIN: [L3RpcEndpoint(self)]}

    def periodic_tasks(self) -> list[PeriodicTask]:
        """With ``allow_automatic_l3agent_failover``, the RPC process moves
        routers off dead agents every ``agent_down_time / 2`` seconds."""
        if not self.conf.allow_automatic_l3agent_failover:
            return []
        return [(max(1, self.conf.agent_down_time // 2),
                 lambda: agent_scheduling.fail_over(self))]

    def collections(self) -> dict[str, Any]:
        return {"routers": self.routers, "floatingips": self.floatingips,
                "floatingip_pools": self.pools}

    def quota_countables(self) -> list[Countable]:
        return [Countable("router", t.routers, "quota_router"),
                Countable("floatingip", t.floatingips, "quota_floatingip"),
                Countable("router_route", None, "quota_router_route", per_object=True)]

    def extensions(self) -> list[ApiExtension]:
        router = ApiExtension(
            descriptor=ROUTER,
            resources=[defs.ROUTER, defs.FLOATINGIP],
            actions={"routers": {"add_router_interface": self.interfaces.add,
                                 "remove_router_interface": self.interfaces.remove,
                                 "add_extraroutes": self.route_actions.add,
                                 "remove_extraroutes": self.route_actions.remove}},
            policies=[policy.RuleDefault(name, check, scope_types=["project"])
                      for name, check in POLICIES.items()])
        # ``port_details`` is filled by the floating IPs themselves (one query per list).
        details = ApiExtension(FIP_PORT_DETAILS, attributes={"floatingips": []})
        pools = ApiExtension(FLOATINGIP_POOLS, resources=[defs.FLOATINGIP_POOL])
        return [router, ApiExtension(EXT_GW_MODE), ApiExtension(EXTRAROUTE),
                ApiExtension(EXTRAROUTE_ATOMIC), details, pools, ApiExtension(described("dvr")),
                ApiExtension(described("router-admin-state-down-before-update")),
                agent_scheduling.extension(self), ApiExtension(described("l3-ha"))]

    def ha_changed(self, router_id: str, project_id: str, ha: bool) -> None:
        """After ``ha`` changed: the router leaves its agents to be scheduled
        afresh (as upstream), and the HA network goes with the last HA router."""
        b = t.routerl3agentbindings

        def unbind(conn: Connection) -> list[str]:
            hosts = [r.host for r in conn.execute(
                sa.select(t.agents.c.host).join(b, b.c.l3_agent_id == t.agents.c.id)
                .where(b.c.router_id == router_id))]
            conn.execute(sa.delete(b).where(b.c.router_id == router_id))
            return hosts
        for host in self.core.write(unbind):
            self.l3_notifier.router_removed_from_agent(router_id, host)
        if not ha:
            self.ha.cleanup_network(project_id)

    # -- quotas, inside the plugin's own transactions ---------------------------------

    def enforce_quota(self, conn: Connection, ctx: Context) -> None:
        quota = getattr(self.core, "quota", None)
        if quota is None:
            return
        for project, deltas in sorted(ctx.quota_request.items()):
            quota.enforce(conn, project, deltas)

    def check_route_limit(self, conn: Connection, project_id: str | None, count: int) -> None:
        quota = getattr(self.core, "quota", None)
        if quota is not None and project_id:
            quota.check_limit(conn, project_id, "router_route", count)
