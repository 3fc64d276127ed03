"""The port forwarding service plugin (``service_plugins = port_forwarding``).

Serves ``/v2.0/floatingips/{id}/port_forwardings`` and shows each floating
IP's forwardings (``expose-port-forwarding-in-fip``); needs the router
plugin, whose floating IPs and routers it uses. Forwardings of a port go
with the port, and with a fixed IP the port loses, in the core's
transaction; their routers' agents are told once it committed.
"""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from oslo_policy import policy
from sqlalchemy import Connection

from neutrino.context import Context
from neutrino.db import tables as t
from neutrino.db.engine import after_commit
from neutrino.plugins import events as ev
from neutrino.plugins.base import ApiExtension, AttributeHandler, ServicePlugin
from neutrino.plugins.l3 import port_forwardings as pfs
from neutrino.plugins.loader import PluginLoadError
from neutrino.resources import port_forwarding as defs
from neutrino.resources.extensions import described

PORT_FORWARDING = described("floating-ip-port-forwarding")
EXPOSE = described("expose-port-forwarding-in-fip")
DESCRIPTION = described("floating-ip-port-forwarding-description")
PORT_RANGES = described("floating-ip-port-forwarding-port-ranges")
DETAIL = described("floating-ip-port-forwarding-detail")

_MEMBER = "(rule:admin_only) or (role:member and rule:ext_parent_owner)"
_READER = "(rule:admin_only) or (role:reader and rule:ext_parent_owner)"
POLICIES = {
    "create_floatingip_port_forwarding": _MEMBER,
    "get_floatingip_port_forwarding": _READER,
    "update_floatingip_port_forwarding": _MEMBER,
    "delete_floatingip_port_forwarding": _MEMBER,
}


class FipForwardings(AttributeHandler):
    """``port_forwardings`` of floating IPs, loaded for a whole list at once."""

    def __init__(self, plugin: "PortForwardingPlugin") -> None:
        self.plugin = plugin

    def process(self, ctx: Context, plural: str, data: dict[str, Any],
                result: dict[str, Any], creating: bool) -> None:
        if creating:
            result["port_forwardings"] = []

    def extend(self, ctx: Context, plural: str, items: list[dict[str, Any]]) -> None:
        if not items:
            return
        with self.plugin.db.reader() as conn:
            found = pfs.of_floatingips(conn, [i["id"] for i in items])
        for item in items:
            item["port_forwardings"] = [pfs.brief(r) for r in found.get(item["id"], [])]


class PortForwardingPlugin(ServicePlugin):
    """Floating IP port forwardings."""

    service_type = "PORTFORWARDING"
    supported_extension_aliases = (PORT_FORWARDING.alias, EXPOSE.alias, DESCRIPTION.alias,
                                   PORT_RANGES.alias, DETAIL.alias)

    def __init__(self, conf: Any, db: Any) -> None:
        super().__init__(conf, db)
        self.collection = pfs.PortForwardings(self)
        self.l3: Any = None

    def bind(self, plugins: Any) -> None:
        self.l3 = plugins.services.get("L3_ROUTER_NAT")
        if self.l3 is None:
            raise PluginLoadError("[DEFAULT] service_plugins: 'port_forwarding' needs the "
                                  "'router' service plugin")

    def routers_changed(self, router_ids: list[str]) -> None:
        """After commit: the routers' agents fetch them again, forwardings included."""
        if router_ids:
            self.l3.l3_notifier.routers_updated(router_ids, schedule=False)

    def connect(self, core: Any) -> None:
        super().connect(core)
        core.events.subscribe("ports", ev.PRECOMMIT_DELETE, self._port_deleting)
        core.events.subscribe("ports", ev.PRECOMMIT_UPDATE, self._port_updating)

    def collections(self) -> dict[str, Any]:
        return {"port_forwardings": self.collection}

    def extensions(self) -> list[ApiExtension]:
        main = ApiExtension(
            descriptor=PORT_FORWARDING, resources=[defs.PORT_FORWARDING],
            policies=[policy.RuleDefault(name, check, scope_types=["project"])
                      for name, check in POLICIES.items()])
        expose = ApiExtension(descriptor=EXPOSE,
                              attributes=defs.EXPOSED_IN_FLOATINGIPS,
                              attribute_handler=FipForwardings(self))
        return [main, expose, ApiExtension(DESCRIPTION), ApiExtension(PORT_RANGES),
                ApiExtension(DETAIL)]

    # -- core events ------------------------------------------------------------------

    def _port_deleting(self, conn: Connection, ctx: Context, port: dict[str, Any]) -> None:
        p = t.portforwardings.c
        rows = conn.execute(sa.select(t.portforwardings)
                            .where(p.internal_port_id == port["id"])).all()
        if rows:
            self._removed(conn, rows)

    def _port_updating(self, conn: Connection, ctx: Context, port: dict[str, Any],
                       changes: dict[str, Any]) -> None:
        if "fixed_ips" not in changes:
            return
        kept = {i.get("ip_address") for i in changes["fixed_ips"] or []}
        p = t.portforwardings.c
        gone = [r for r in conn.execute(sa.select(t.portforwardings)
                                        .where(p.internal_port_id == port["id"]))
                if r.internal_ip_address not in kept]
        if gone:
            self._removed(conn, gone)

    def _removed(self, conn: Connection, rows: list[Any]) -> None:
        """A port's forwardings go with it; their routers' agents learn it
        once the port's change committed."""
        routers = pfs.remove(conn, rows)
        after_commit(conn, lambda: self.routers_changed(routers))
