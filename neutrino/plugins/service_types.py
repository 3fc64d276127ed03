"""``service-type``: ``GET /v2.0/service-providers``.

Providers come from ``[service_providers] service_provider`` lines
(``<service_type>:<name>:<driver>[:default]``, as upstream) and from the
loaded service plugins that declare their own (upstream's L3 plugin, for
instance, brings ``single_node``, ``ha``, ``dvr`` and ``dvrha``). Upstream
serves this with its flavors plugin, loaded by default; so is this one.
"""
from __future__ import annotations

from typing import Any

from oslo_policy import policy

from neutrino import errors
from neutrino.context import Context
from neutrino.plugins import store
from neutrino.plugins.base import ApiExtension, ServicePlugin
from neutrino.plugins.loader import PluginLoadError
from neutrino.resources import service_type as res


def parse_provider(line: str) -> dict[str, Any]:
    """One ``service_provider`` line; a malformed one stops start-up."""
    parts = line.split(":")
    if len(parts) not in (3, 4) or not all(parts[:3]) or (
            len(parts) == 4 and parts[3] != "default"):
        raise PluginLoadError(f"[service_providers] service_provider: '{line}' is not "
                         f"<service_type>:<name>:<driver>[:default]")
    return {"service_type": parts[0], "name": parts[1], "driver": parts[2],
            "default": len(parts) == 4}


class ServiceProviders:
    """The ``service_providers`` collection: list only."""

    def __init__(self) -> None:
        self.providers: list[dict[str, Any]] = []

    def list(self, ctx: Context, plural: str,
             query: store.ListQuery) -> tuple[list[dict[str, Any]], bool]:
        items = [dict(p) for p in self.providers
                 if all(p[key] in values for key, values in query.filters.items()
                        if key in p)]
        return items, False

    def get(self, ctx: Context, plural: str, rid: str) -> dict[str, Any]:
        raise errors.HTTPNotFound()

    def create(self, *args: Any, **kwargs: Any) -> Any:
        raise errors.MethodNotAllowed()

    update = delete = create


class ServiceTypePlugin(ServicePlugin):
    """Lists the providers of advanced services."""

    service_type = "SERVICE_TYPE"
    supported_extension_aliases = (res.SERVICE_TYPE.alias,)

    def __init__(self, conf: Any, db: Any) -> None:
        super().__init__(conf, db)
        self.configured = [parse_provider(line)
                           for line in conf.service_providers.service_provider]
        self.collection = ServiceProviders()

    def bind(self, plugins: Any) -> None:
        declared = [dict(p) for plugin in plugins.all_plugins()
                    for p in getattr(plugin, "service_providers", ())]
        seen = {(p["service_type"], p["name"]) for p in self.configured}
        # What the operator configured wins over what a plugin declares.
        self.collection.providers = self.configured + [
            p for p in declared if (p["service_type"], p["name"]) not in seen]

    def with_driver(self, driver: str) -> list[dict[str, Any]]:
        """The providers whose driver is ``driver`` (what a service profile
        may name), first configured first."""
        return [dict(p) for p in self.collection.providers if p.get("driver") == driver]

    def collections(self) -> dict[str, Any]:
        return {"service_providers": self.collection}

    def extensions(self) -> list[ApiExtension]:
        rules = [policy.RuleDefault("get_service_provider", "role:reader",
                                    scope_types=["project"])]
        return [ApiExtension(descriptor=res.SERVICE_TYPE, resources=[res.SERVICE_PROVIDER],
                             policies=rules)]
