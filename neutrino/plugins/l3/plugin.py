"""The L3 service plugin (``service_plugins = router``, L3_ROUTER_NAT).

Routers with an external gateway (``ext-gw-mode``'s SNAT switch), interfaces
and static routes (``extraroute``, ``extraroute-atomic``), and floating IPs.
Distributed routers (``dvr``) and HA routers (``l3-ha``) as the API and
the server keep them (``dvr`` and ``ha`` modules); routers' flavors
(``l3-flavors``, ``flavors`` module) with the flavors plugin; availability
zones (``router_availability_zone``) are the L3 agents' zones.
"""
from __future__ import annotations

from typing import Any, cast

from oslo_policy import policy

from neutrino.db import tables as t
from neutrino.plugins.agents import Agents
from neutrino.plugins.base import ApiExtension, PeriodicTask, ServicePlugin
from neutrino.plugins.core import CorePlugin
from neutrino.plugins.directory import Directory
from neutrino.plugins.l3 import agent_scheduling, guards, qos
from neutrino.plugins.l3 import flavors as l3_flavors
from neutrino.plugins.l3.dvr import Distributed
from neutrino.plugins.l3.floatingips import FloatingIps
from neutrino.plugins.l3.gateway import Gateway
from neutrino.plugins.l3.ha import HighAvailability
from neutrino.plugins.l3.interfaces import Interfaces
from neutrino.plugins.l3.network_ha import NetworkHaDriver
from neutrino.plugins.l3.notifier import L3AgentNotifier
from neutrino.plugins.l3.pools import FloatingIpPools
from neutrino.plugins.l3.routers import Routers
from neutrino.plugins.l3.routes import RouteActions
from neutrino.plugins.l3.scheduler import Scheduler
from neutrino.quota.engine import Countable
from neutrino.resources import agents as agent_defs
from neutrino.resources import l3 as defs
from neutrino.resources.extensions import described
from neutrino.rpc import topics

ROUTER = described("router")
EXT_GW_MODE = described("ext-gw-mode")
EXTRAROUTE = described("extraroute")
EXTRAROUTE_ATOMIC = described("extraroute-atomic")
FIP_PORT_DETAILS = described("fip-port-details")
FLOATINGIP_POOLS = described("floatingip-pools")
QOS_FIP = described("qos-fip")
QOS_GATEWAY_IP = described("qos-gateway-ip")
PORT_IP_CHANGE_NOT_ALLOWED = described("l3-port-ip-change-not-allowed")
FIP_ROUTER_WRITABLE = described("floating-ip-router-writable")
L3_FLAVORS = described("l3-flavors")

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
                                   "l3-ha", "network_ha", PORT_IP_CHANGE_NOT_ALLOWED.alias,
                                   FIP_ROUTER_WRITABLE.alias,
                                   "router_availability_zone")
    # Upstream's router plugin registers these drivers' providers whatever
    # the configuration says (a configured provider of the same name wins).
    service_providers = tuple({"service_type": "L3_ROUTER_NAT", "name": name, "driver": driver,
                               "default": False}
                              for name, (driver, _) in l3_flavors.PROVIDERS.items())

    def __init__(self, conf: Any, db: Any) -> None:
        super().__init__(conf, db)
        self.directory: Directory | None = None
        # ``qos-fip`` and ``qos-gateway-ip`` come with the QoS plugin, as upstream's
        self.with_qos = qos.enabled(conf)
        if self.with_qos:
            self.supported_extension_aliases = (*self.supported_extension_aliases,
                                                QOS_FIP.alias, QOS_GATEWAY_IP.alias)
        # ``l3-flavors`` comes with the flavors plugin, as upstream's.
        self.with_flavors = l3_flavors.enabled(conf)
        if self.with_flavors:
            self.supported_extension_aliases = (*self.supported_extension_aliases,
                                                L3_FLAVORS.alias)

    def connect(self, core: CorePlugin) -> None:
        """The collaborators are made here, each with what it uses: all of
        them work through the core plugin, which the plugin gets only now."""
        super().connect(core)
        conf, db = self.conf, self.db
        self.ha = HighAvailability(core, conf, db)
        self.distributed = Distributed(core, db)
        self.scheduler = Scheduler(core, conf, db, self.ha)
        self.l3_notifier = L3AgentNotifier(conf, db, self.scheduler)
        self.agent_notifiers["L3 agent"] = self.l3_notifier
        gateway = Gateway(core, conf, db, self.distributed)
        self.routers = Routers(core, conf, db, gateway, self.ha, self.distributed,
                               self.l3_notifier, self.with_qos)
        if self.with_flavors:
            self.routers.flavor_providers = self._providers_with_driver
        self.floatingips = FloatingIps(core, db, self.l3_notifier, self.with_qos)
        self.interfaces = Interfaces(core, db, self.distributed, self.l3_notifier)
        self.route_actions = RouteActions(core, self.routers)
        self.pools = FloatingIpPools(db)
        self.scheduler_api = agent_scheduling.SchedulerApi(
            db, cast(Agents, core.handlers["agents"]), self.routers, self.scheduler, self.ha,
            self.l3_notifier)
        agent_scheduling.subscribe(core, db, self.l3_notifier)
        guards.subscribe(core)
        core.add_extension_driver(NetworkHaDriver(conf))

    def bind(self, plugins: Directory) -> None:
        self.directory = plugins

    def _providers_with_driver(self, driver: str) -> list[dict[str, Any]]:
        providers = self.directory.services.get("SERVICE_TYPE") if self.directory else None
        return providers.with_driver(driver) if providers is not None else []

    def _service_types(self) -> list[str]:
        return list(self.directory.services) if self.directory is not None else []

    def rpc_endpoints(self) -> dict[str, list[Any]]:
        """``q-l3-plugin`` for L3 agents."""
        # deferred: endpoints load oslo.messaging, which API workers never import
        from neutrino.plugins.l3.rpc import L3RpcEndpoint
        return {topics.L3PLUGIN: [L3RpcEndpoint(self.core, self.conf, self.db, self.scheduler,
                                                self.ha, self._service_types, self.with_qos)]}

    def periodic_tasks(self) -> list[PeriodicTask]:
        """With ``allow_automatic_l3agent_failover``, the RPC process moves
        routers off dead agents every ``agent_down_time / 2`` seconds."""
        if not self.conf.allow_automatic_l3agent_failover:
            return []
        return [(max(1, self.conf.agent_down_time // 2),
                 lambda: agent_scheduling.fail_over(self.scheduler, self.l3_notifier))]

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
                agent_scheduling.extension(self.scheduler_api), ApiExtension(described("l3-ha")),
                ApiExtension(described("network_ha"), attributes=defs.NETWORK_HA),
                ApiExtension(PORT_IP_CHANGE_NOT_ALLOWED),
                ApiExtension(FIP_ROUTER_WRITABLE, attributes=defs.FIP_ROUTER_WRITABLE,
                             policies=[policy.RuleDefault(name, _MEMBER, scope_types=["project"])
                                       for name in ("create_floatingip:router_id",
                                                    "update_floatingip:router_id")]),
                ApiExtension(described("router_availability_zone"),
                             attributes=agent_defs.ROUTER_AZ),
                *self._qos_extensions(), *self._flavor_extensions()]

    def _flavor_extensions(self) -> list[ApiExtension]:
        if not self.with_flavors:
            return []
        return [ApiExtension(L3_FLAVORS, attributes=defs.ROUTER_FLAVOR)]

    def _qos_extensions(self) -> list[ApiExtension]:
        if not self.with_qos:
            return []
        return [ApiExtension(QOS_FIP, attributes=defs.FLOATINGIP_QOS),
                ApiExtension(QOS_GATEWAY_IP, attributes=defs.ROUTER_GATEWAY_QOS)]
