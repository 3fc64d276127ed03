"""The conntrack helper service plugin (``service_plugins = conntrack_helper``).

Serves ``/v2.0/routers/{id}/conntrack_helpers`` and shows each router's
helpers (``expose-l3-conntrack-helper``); needs the router plugin, whose
agents apply the helpers (they come with the router's sync data as
``_conntrack_helpers``) and are told of each change.
"""
from __future__ import annotations

from typing import Any

from oslo_policy import policy

from neutrino.context import Context
from neutrino.plugins.base import ApiExtension, AttributeHandler, ServicePlugin
from neutrino.plugins.l3 import conntrack_helpers as cths
from neutrino.plugins.loader import PluginLoadError
from neutrino.resources import conntrack_helper as defs
from neutrino.resources.extensions import described

CONNTRACK_HELPER = described("l3-conntrack-helper")
EXPOSE = described("expose-l3-conntrack-helper")

_MEMBER = "(rule:admin_only) or (role:member and rule:ext_parent_owner)"
_READER = "(rule:admin_only) or (role:reader and rule:ext_parent_owner)"
POLICIES = {
    "create_router_conntrack_helper": _MEMBER,
    "get_router_conntrack_helper": _READER,
    "update_router_conntrack_helper": _MEMBER,
    "delete_router_conntrack_helper": _MEMBER,
}


class RouterHelpers(AttributeHandler):
    """``conntrack_helpers`` of routers, loaded for a whole list at once."""

    def __init__(self, plugin: "ConntrackHelperPlugin") -> None:
        self.plugin = plugin

    def process(self, ctx: Context, plural: str, data: dict[str, Any],
                result: dict[str, Any], creating: bool) -> None:
        if creating:
            result["conntrack_helpers"] = []

    def extend(self, ctx: Context, plural: str, items: list[dict[str, Any]]) -> None:
        if not items:
            return
        with self.plugin.db.reader() as conn:
            found = cths.of_routers(conn, [i["id"] for i in items])
        for item in items:
            item["conntrack_helpers"] = [cths.brief(r) for r in found.get(item["id"], [])]


class ConntrackHelperPlugin(ServicePlugin):
    """Conntrack helpers of routers."""

    service_type = "CONNTRACKHELPER"
    supported_extension_aliases = (CONNTRACK_HELPER.alias, EXPOSE.alias)

    def __init__(self, conf: Any, db: Any) -> None:
        super().__init__(conf, db)
        self.collection = cths.ConntrackHelpers(self)
        self.constraints = cths.constraints(conf.allowed_conntrack_helpers)
        self.l3: Any = None

    def bind(self, plugins: Any) -> None:
        self.l3 = plugins.services.get("L3_ROUTER_NAT")
        if self.l3 is None:
            raise PluginLoadError("[DEFAULT] service_plugins: 'conntrack_helper' needs the "
                                  "'router' service plugin")

    def routers_changed(self, router_ids: list[str]) -> None:
        """After commit: the routers' agents fetch them again, helpers included."""
        self.l3.l3_notifier.routers_updated(router_ids, schedule=False)

    def collections(self) -> dict[str, Any]:
        return {"conntrack_helpers": self.collection}

    def extensions(self) -> list[ApiExtension]:
        main = ApiExtension(
            descriptor=CONNTRACK_HELPER, resources=[defs.CONNTRACK_HELPER],
            policies=[policy.RuleDefault(name, check, scope_types=["project"])
                      for name, check in POLICIES.items()])
        expose = ApiExtension(descriptor=EXPOSE, attributes=defs.EXPOSED_IN_ROUTERS,
                              attribute_handler=RouterHelpers(self))
        return [main, expose]
