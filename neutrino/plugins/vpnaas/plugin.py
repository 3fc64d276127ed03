"""The ``vpnaas`` service plugin (upstream's ``VPNDriverPlugin`` with its
IPsec service driver): VPN services, IKE/IPsec policies, endpoint groups and
site connections on SQL; the L3 agents hosting the routers run them.

After a change the agents hosting the service's router are told
(``vpnservice_updated``, upstream's cast); they read what they run with
``get_vpn_services_on_host`` and report statuses with ``update_status``
(``rpc``). Routers, gateways, interfaces and subnets in use by VPN resources
are refused as upstream refuses them.
"""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from oslo_policy import policy
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import events as ev
from neutrino.plugins.base import ApiExtension, ServicePlugin
from neutrino.plugins.loader import PluginLoadError
from neutrino.plugins.service_types import parse_provider
from neutrino.plugins.vpnaas import exceptions as exc
from neutrino.plugins.vpnaas.connections import Connections
from neutrino.plugins.vpnaas.endpoint_groups import EndpointGroups
from neutrino.plugins.vpnaas.flavors import DRIVERS, VpnFlavors
from neutrino.plugins.vpnaas.policies import IkePolicies, IpsecPolicies
from neutrino.plugins.vpnaas.services import VpnServices
from neutrino.resources import vpnaas as res
from neutrino.rpc import topics

SERVICE_TYPE = "VPN"
DRIVER = DRIVERS[0]
# neutron-vpnaas's defaults (secure RBAC): project members and admins.
MEMBER = "(rule:admin_only) or (role:member and project_id:%(project_id)s)"
POLICIES = {f"{action}_{name}": MEMBER
            for name in ("vpnservice", "ikepolicy", "ipsecpolicy", "ipsec_site_connection",
                         "endpoint_group")
            for action in ("create", "get", "update", "delete")}


class VpnPlugin(ServicePlugin):
    """VPN as a service: IPsec site-to-site connections on routers."""

    service_type = SERVICE_TYPE
    supported_extension_aliases = ("vpnaas", "vpn-endpoint-groups", "vpn-aes-ctr",
                                   "vpn-flavors")
    service_providers = ({"service_type": SERVICE_TYPE, "name": "strongswan",
                          "driver": DRIVER, "default": True},)

    def __init__(self, conf: Any, db: Any) -> None:
        super().__init__(conf, db)
        self.services = VpnServices(self)
        self.ikepolicies = IkePolicies(self)
        self.ipsecpolicies = IpsecPolicies(self)
        self.endpoint_groups = EndpointGroups(self)
        self.connections = Connections(self)
        self.flavors = VpnFlavors(db)
        self.service_providers = self._providers(conf)
        self.l3: Any = None
        for singular, factory in (
                ("vpnservice", lambda rid: exc.VPNServiceNotFound(vpnservice_id=rid)),
                ("ikepolicy", lambda rid: exc.IKEPolicyNotFound(ikepolicy_id=rid)),
                ("ipsecpolicy", lambda rid: exc.IPsecPolicyNotFound(ipsecpolicy_id=rid)),
                ("endpoint_group",
                 lambda rid: exc.VPNEndpointGroupNotFound(endpoint_group_id=rid)),
                ("ipsec_site_connection",
                 lambda rid: exc.IPsecSiteConnectionNotFound(ipsec_site_conn_id=rid))):
            errors.register_not_found(singular, factory)

    @staticmethod
    def _providers(conf: Any) -> tuple[dict[str, Any], ...]:
        """Upstream's ``[service_providers]`` VPN lines name the IPsec driver
        (upstream ships it as the default in neutron_vpnaas.conf): listed as
        configured, or the default when none is; another driver stops start-up."""
        configured = [parse_provider(line) for line in conf.service_providers.service_provider
                      if line.startswith(f"{SERVICE_TYPE}:")]
        for provider in configured:
            if provider["driver"] not in DRIVERS:
                raise PluginLoadError(
                    f"[service_providers] service_provider: VPN driver '{provider['driver']}' "
                    f"is not one of {', '.join(DRIVERS)}")
        return () if configured else VpnPlugin.service_providers

    def connect(self, core: Any) -> None:
        super().connect(core)
        core.events.subscribe("router_gateways", ev.PRECOMMIT_DELETE, self._gateway_going)
        core.events.subscribe("routers", ev.PRECOMMIT_DELETE, self._router_going)
        core.events.subscribe("router_interfaces", ev.PRECOMMIT_DELETE, self._interface_going)
        core.events.subscribe("subnets", ev.PRECOMMIT_DELETE, self._subnet_going)

    def bind(self, plugins: Any) -> None:
        self.l3 = plugins.services.get("L3_ROUTER_NAT")
        self.flavors.loaded = any(getattr(p, "service_type", "") == "FLAVORS"
                                  for p in plugins.services.values())

    # -- what VPN resources keep ---------------------------------------------------

    def _router_in_use(self, conn: Connection, router_id: str) -> None:
        ids = [r.id for r in conn.execute(sa.select(t.vpnservices.c.id).where(
            t.vpnservices.c.router_id == router_id).order_by(t.vpnservices.c.id))]
        if ids:
            plural = "s" if len(ids) > 1 else ""
            raise errors.RouterInUse(router_id=router_id,
                                     reason=f"is currently used by VPN service{plural} "
                                            f"({','.join(ids)})")

    def _gateway_going(self, conn: Connection, ctx: Context, gateway: dict[str, Any]) -> None:
        self._router_in_use(conn, gateway["router_id"])

    def _router_going(self, conn: Connection, ctx: Context, router: dict[str, Any]) -> None:
        self._router_in_use(conn, router["id"])

    def _interface_going(self, conn: Connection, ctx: Context, info: dict[str, Any]) -> None:
        router_id, subnet_id = info["router_id"], info["subnet_id"]
        s, c, e, g = (t.vpnservices.c, t.ipsec_site_connections.c, t.vpn_endpoints.c,
                      t.vpn_endpoint_groups.c)
        service = conn.execute(sa.select(s.id).where(
            s.subnet_id == subnet_id, s.router_id == router_id).limit(1)).first()
        if service is not None:
            raise exc.SubnetInUseByVPNService(subnet_id=subnet_id, vpnservice_id=service.id)
        used = conn.execute(
            sa.select(c.id).join(t.vpnservices, s.id == c.vpnservice_id)
            .join(t.vpn_endpoint_groups, g.id == c.local_ep_group_id)
            .join(t.vpn_endpoints, e.endpoint_group_id == g.id)
            .where(s.router_id == router_id, g.endpoint_type == res.SUBNET_ENDPOINT,
                   e.endpoint == subnet_id).limit(1)).first()
        if used is not None:
            raise exc.SubnetInUseByIPsecSiteConnection(subnet_id=subnet_id,
                                                       ipsec_site_connection_id=used.id)

    def _subnet_going(self, conn: Connection, ctx: Context, subnet: dict[str, Any]) -> None:
        e, g = t.vpn_endpoints.c, t.vpn_endpoint_groups.c
        group = conn.execute(sa.select(g.id).join(t.vpn_endpoints, e.endpoint_group_id == g.id)
                             .where(g.endpoint_type == res.SUBNET_ENDPOINT,
                                    e.endpoint == subnet["id"]).limit(1)).first()
        if group is not None:
            raise exc.SubnetInUseByEndpointGroup(subnet_id=subnet["id"], group_id=group.id)

    # -- telling agents ------------------------------------------------------------

    def notify_router(self, router_id: str) -> None:
        """Upstream's ``vpnservice_updated`` to each L3 agent hosting the router."""
        casts = getattr(self.core, "casts", None)
        if casts is None or not casts.enabled or self.l3 is None:
            return
        with self.db.reader() as conn:
            hosts = self.l3.scheduler.hosts_to_notify(conn, [router_id])
        for host in sorted(hosts):
            casts.cast(topics.IPSEC_AGENT, "vpnservice_updated", server=host,
                       version=topics.IPSEC_VERSION, router={"id": router_id})

    def notify_service(self, service_id: str) -> None:
        with self.db.reader() as conn:
            router_id = conn.execute(sa.select(t.vpnservices.c.router_id).where(
                t.vpnservices.c.id == service_id)).scalar()
        if router_id is not None:
            self.notify_router(router_id)

    # -- what the plugin serves ----------------------------------------------------

    def rpc_endpoints(self) -> dict[str, list[Any]]:
        # deferred: endpoints load oslo.messaging, which API workers never import
        from neutrino.plugins.vpnaas.rpc import IpsecDriverEndpoint
        return {topics.IPSEC_DRIVER: [IpsecDriverEndpoint(self)]}

    def collections(self) -> dict[str, Any]:
        return {"vpnservices": self.services, "ikepolicies": self.ikepolicies,
                "ipsecpolicies": self.ipsecpolicies, "endpoint_groups": self.endpoint_groups,
                "ipsec_site_connections": self.connections}

    def extensions(self) -> list[ApiExtension]:
        rules = [policy.RuleDefault(name, check, scope_types=["project"])
                 for name, check in POLICIES.items()]
        return [
            ApiExtension(descriptor=res.VPNAAS_EXT,
                         resources=[res.VPNSERVICE, res.IKEPOLICY, res.IPSECPOLICY,
                                    res.IPSEC_SITE_CONNECTION], policies=rules),
            ApiExtension(descriptor=res.ENDPOINT_GROUPS_EXT, resources=[res.ENDPOINT_GROUP]),
            ApiExtension(descriptor=res.AES_CTR_EXT),
            ApiExtension(descriptor=res.FLAVORS_EXT),
        ]
