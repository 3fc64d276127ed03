"""The NDP proxy service plugin (``service_plugins = ndp_proxy``).

Serves ``/v2.0/ndp_proxies`` (``l3-ndp-proxy``) and the routers'
``enable_ndp_proxy`` (``l3-ext-ndp-proxy``); needs the router plugin. A
router's proxies keep its gateway and the interfaces they go through; the
L3 agents serving the router are told of every proxy made or removed and
find them in the router's sync data (``_ndp_proxies``).
"""
from __future__ import annotations

from typing import Any

import netaddr
import sqlalchemy as sa
from oslo_policy import policy
from sqlalchemy import Connection

from neutrino import errors
from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.plugins import events as ev
from neutrino.plugins.base import ApiExtension, AttributeHandler, ServicePlugin
from neutrino.plugins.l3 import common as c
from neutrino.plugins.l3 import ndp_proxies as nps
from neutrino.plugins.l3.gateway import ROUTER_GATEWAYS
from neutrino.plugins.l3.interfaces import ROUTER_INTERFACES
from neutrino.plugins.loader import PluginLoadError
from neutrino.resources import ndp_proxy as defs

_MEMBER = "(rule:admin_only) or (role:member and project_id:%(project_id)s)"
_READER = "(rule:admin_only) or (role:reader and project_id:%(project_id)s)"
POLICIES = {
    "create_ndp_proxy": _MEMBER,
    "get_ndp_proxy": _READER,
    "update_ndp_proxy": _MEMBER,
    "delete_ndp_proxy": _MEMBER,
}
_NO_GATEWAY = "The request body not contain external gateway information"
_GATEWAY_INVALID = ("The router has no external gateway or the external gateway port has "
                    "no IPv6 address or IPv6 address scope")


class EnableNdpProxy(AttributeHandler):
    """``enable_ndp_proxy`` of routers: decided on create and on every update
    as upstream decides it, shown false while undecided."""

    def __init__(self, plugin: "NdpProxyPlugin") -> None:
        self.plugin = plugin

    def process(self, ctx: Context, plural: str, data: dict[str, Any],
                result: dict[str, Any], creating: bool) -> None:
        wanted = data.get(defs.ENABLE_NDP_PROXY)
        rid = result["id"]
        try:
            decided = self.plugin.core.write(
                lambda conn: (self._on_create(conn, rid, wanted, data)
                              if creating else self._on_update(conn, rid, wanted)))
        except errors.NeutronException:
            if creating:  # nothing half-made: the router goes again
                self.plugin.l3.routers.delete(c.internal(), "routers", rid)
            raise
        if creating:
            result[defs.ENABLE_NDP_PROXY] = bool(decided)

    def check_update(self, ctx: Context, plural: str, resource_id: str,
                     data: dict[str, Any]) -> None:
        """Enabling proxying on a gateway the update leaves unable to proxy is
        refused before the update's gateway change is made. ``_on_update``
        checks again, in its transaction, against what was made."""
        if not data.get(defs.ENABLE_NDP_PROXY):
            return
        with self.plugin.db.reader() as conn:
            gw_port = conn.execute(sa.select(t.routers.c.gw_port_id)
                                   .where(t.routers.c.id == resource_id)).scalar()
            if "external_gateway_info" in data:
                supports = nps.requested_gateway_supports(
                    conn, data["external_gateway_info"], gw_port)
            else:
                supports = nps.gateway_supports(conn, gw_port)
        if not supports:
            raise errors.RouterGatewayNotValid(router_id=resource_id, reason=_GATEWAY_INVALID)

    def _on_create(self, conn: Connection, rid: str, wanted: bool | None,
                   data: dict[str, Any]) -> bool | None:
        info = data.get("external_gateway_info")
        if not info:
            if wanted:
                raise errors.RouterGatewayNotValid(router_id=rid, reason=_NO_GATEWAY)
            return None
        if wanted is False:
            return None
        supports = nps.network_supports(conn, info["network_id"])
        if wanted and not supports:
            raise errors.RouterGatewayNotValid(router_id=rid, reason=(
                f"The external network {info['network_id']} don't support IPv6 ndp proxy, "
                f"the network has no IPv6 subnets or has no IPv6 address scope"))
        enabled = True if wanted else supports and self.plugin.conf.enable_ndp_proxy_by_default
        nps.set_state(conn, rid, enabled)
        return enabled

    def _on_update(self, conn: Connection, rid: str, wanted: bool | None) -> bool:
        gw_port = conn.execute(sa.select(t.routers.c.gw_port_id)
                               .where(t.routers.c.id == rid)).scalar()
        supports = nps.gateway_supports(conn, gw_port)
        if wanted and not supports:
            raise errors.RouterGatewayNotValid(router_id=rid, reason=_GATEWAY_INVALID)
        # As upstream: an update not naming it makes it what the gateway allows.
        enabled = supports if wanted is None else wanted
        nps.set_state(conn, rid, enabled)
        return enabled

    def extend(self, ctx: Context, plural: str, items: list[dict[str, Any]]) -> None:
        if not items:
            return
        with self.plugin.db.reader() as conn:
            found = nps.state(conn, [i["id"] for i in items])
        for item in items:
            # no gateway: never enabled, whatever was decided
            item[defs.ENABLE_NDP_PROXY] = bool(item.get("external_gateway_info")
                                               and found.get(item["id"]))


class NdpProxyPlugin(ServicePlugin):
    """IPv6 NDP proxies of routers (upstream's ``ndp_proxy``)."""

    service_type = "NDP_PROXY"
    supported_extension_aliases = (defs.NDP_PROXY_EXT.alias, defs.EXT_NDP_PROXY.alias)

    def __init__(self, conf: Any, db: Any) -> None:
        super().__init__(conf, db)
        self.collection = nps.NdpProxies(self)
        self.l3: Any = None
        errors.register_not_found("ndp_proxy", lambda rid: errors.NDPProxyNotFound(id=rid))

    def bind(self, plugins: Any) -> None:
        self.l3 = plugins.services.get("L3_ROUTER_NAT")
        if self.l3 is None:
            raise PluginLoadError("[DEFAULT] service_plugins: 'ndp_proxy' needs the "
                                  "'router' service plugin")

    def connect(self, core: Any) -> None:
        super().connect(core)
        core.events.subscribe(ROUTER_GATEWAYS, ev.PRECOMMIT_DELETE, self._gateway_removing)
        core.events.subscribe(ROUTER_GATEWAYS, ev.PRECOMMIT_UPDATE, self._gateway_changing)
        core.events.subscribe(ROUTER_INTERFACES, ev.PRECOMMIT_DELETE, self._subnet_removing)

    def collections(self) -> dict[str, Any]:
        return {"ndp_proxies": self.collection}

    def extensions(self) -> list[ApiExtension]:
        main = ApiExtension(
            descriptor=defs.NDP_PROXY_EXT, resources=[defs.NDP_PROXY],
            policies=[policy.RuleDefault(name, check, scope_types=["project"])
                      for name, check in POLICIES.items()])
        router = ApiExtension(descriptor=defs.EXT_NDP_PROXY,
                              attributes=defs.ROUTER_ENABLE_NDP_PROXY,
                              attribute_handler=EnableNdpProxy(self))
        return [main, router]

    def routers_changed(self, router_ids: list[str]) -> None:
        if self.l3 is not None:
            self.l3.l3_notifier.routers_updated(router_ids)

    # -- the router plugin's events ----------------------------------------------

    def _gateway_removing(self, conn: Connection, ctx: Context, gateway: dict[str, Any]) -> None:
        rid = gateway["router_id"]
        n = t.ndp_proxies.c
        if conn.execute(sa.select(n.id).where(n.router_id == rid).limit(1)).first():
            raise errors.RouterGatewayInUseByNDPProxy(router_id=rid)
        conn.execute(sa.delete(t.router_ndp_proxy_state)
                     .where(t.router_ndp_proxy_state.c.router_id == rid))

    def _gateway_changing(self, conn: Connection, ctx: Context, gateway: dict[str, Any],
                          info: dict[str, Any]) -> None:
        """An enabled router's new gateway addresses keep some IPv6."""
        rid = gateway["router_id"]
        if not nps.state(conn, [rid]).get(rid):
            return
        wanted = info.get("external_fixed_ips") or []
        if any(f.get("ip_address") and netaddr.IPAddress(f["ip_address"]).version == 6
               for f in wanted):
            return
        subnet_ids = {f["subnet_id"] for f in wanted if f.get("subnet_id")}
        if any(s.ip_version == 6 for s in c.subnet_rows(conn, subnet_ids).values()):
            return
        raise errors.RouterIPv6GatewayInUse(router_id=rid)

    def _subnet_removing(self, conn: Connection, ctx: Context, link: dict[str, Any]) -> None:
        n, ip = t.ndp_proxies.c, t.ipallocations.c
        used = conn.execute(sa.select(n.id).join(t.ipallocations, sa.and_(
            ip.port_id == n.port_id, ip.ip_address == n.ip_address)).where(
            n.router_id == link["router_id"], ip.subnet_id == link["subnet_id"]).limit(1)).first()
        if used is not None:
            raise errors.RouterInterfaceInUseByNDPProxy(router_id=link["router_id"],
                                                        subnet_id=link["subnet_id"])
