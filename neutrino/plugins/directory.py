"""The plugin directory: the core plugin and the loaded service plugins.

The core plugin is registered as the ``CORE`` service. Service plugins come
from ``[DEFAULT] service_plugins`` plus the defaults, loaded by alias or
class path; two plugins for one service type stop start-up. Agent notifiers
of service plugins are merged into the core plugin's, as the design
documents describe.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from neutrino.plugins.base import ApiExtension, ServicePlugin
from neutrino.plugins.loader import PluginLoadError, load_class

LOG = logging.getLogger(__name__)

CORE = "CORE"
# Service plugins loaded even when not configured, as upstream loads its
# defaults (its tag/timestamp/revisions plugins are part of our core); DHCP
# agent scheduling is part of upstream's ML2 plugin, so always on.
DEFAULT_SERVICE_PLUGINS: tuple[str, ...] = ("network_ip_availability", "service_type",
                                            "dhcp_agent_scheduler")


@dataclass
class Directory:
    core: Any
    services: dict[str, Any] = field(default_factory=dict)  # service type -> plugin
    owners: dict[str, Any] = field(default_factory=dict)  # collection -> its handler
    extensions: list[ApiExtension] = field(default_factory=list)

    @property
    def aliases(self) -> list[str]:
        out = set(getattr(self.core, "supported_extension_aliases", ()))
        for plugin in self.services.values():
            out |= set(plugin.supported_extension_aliases)
        return sorted(out)

    def plugin_for(self, plural: str) -> Any:
        return self.owners.get(plural, self.core)

    def all_plugins(self) -> list[Any]:
        return [self.core, *[p for t, p in self.services.items() if t != CORE]]


def load(conf: Any, db: Any, core: Any) -> Directory:
    directory = Directory(core=core, services={CORE: core})
    if not hasattr(core, "agent_notifiers"):
        core.agent_notifiers = {}
    core_extensions = getattr(core, "api_extensions", None)
    if core_extensions is not None:
        directory.extensions.extend(core_extensions())
    names = list(dict.fromkeys([*conf.service_plugins, *DEFAULT_SERVICE_PLUGINS]))
    for name in names:
        cls = load_class("neutrino.service_plugins", name)
        if not (isinstance(cls, type) and issubclass(cls, ServicePlugin)):
            raise PluginLoadError(f"[DEFAULT] service_plugins: '{name}' is not a service plugin")
        plugin = cls(conf, db)
        kind = plugin.service_type
        if kind in directory.services:
            existing = type(directory.services[kind]).__name__
            raise PluginLoadError(
                f"[DEFAULT] service_plugins: '{name}' provides service type {kind}, "
                f"already provided by {existing}; only one plugin per service type")
        directory.services[kind] = plugin
        # Connected first: a plugin may make what serves its collections
        # and extensions (and its agent notifiers) with the core plugin.
        plugin.connect(core)
        core.agent_notifiers.update(plugin.agent_notifiers)
        for plural, handler in plugin.collections().items():
            directory.owners[plural] = handler
        directory.extensions.extend(plugin.extensions())
        LOG.info("loaded service plugin %s (%s): %s", name, kind, plugin.describe())
    for plugin in directory.all_plugins():
        bind = getattr(plugin, "bind", None)
        if bind is not None:
            bind(directory)
    LOG.info("loaded core plugin %s: %s", conf.core_plugin,
             (type(core).__doc__ or "").strip().splitlines()[0] if type(core).__doc__ else "")
    return directory
