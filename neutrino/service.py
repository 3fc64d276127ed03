"""Assembles the service from configuration: database, plugins, policy,
notifiers, WSGI, and the plugins' RPC endpoints.

The packages below know nothing of each other's wiring: what crosses a
layer sideways (the compute service hearing about the core plugin's ports,
agents' state reports reaching the agents table) is connected here.
"""
from __future__ import annotations

import functools
import logging
from typing import Any

from oslo_config import cfg

from neutrino import metrics
from neutrino.api import app as app_mod
from neutrino.api import limits, topology
from neutrino.api import octavia as octavia_api
from neutrino.api.controller import Api
from neutrino.api.healthcheck import Healthcheck, Probe, disabled_by
from neutrino.api.hooks.notifier import NotifierHook
from neutrino.api.metrics import MetricsEndpoint
from neutrino.conf import options
from neutrino.db import tables as t
from neutrino.db.engine import Database
from neutrino.db.health import Reachability
from neutrino.notifiers.nova import NovaNotifier
from neutrino.plugins import directory, loader
from neutrino.plugins import events as ev
from neutrino.plugins.base import ApiExtension
from neutrino.policy.engine import Policy
from neutrino.quota.engine import Countable, QuotaEngine
from neutrino.resources import core, extensions
from neutrino.resources.attributes import extend
from neutrino.rpc import health as bus_health
from neutrino.rpc import topics
from neutrino.rpc.notifications import Notifications
from neutrino.rpc.transport import configured_url, in_process

LOG = logging.getLogger(__name__)


class StartupError(RuntimeError):
    """A server that cannot start; the command reports it in one line."""


def make_conf(args: list[str] | None = None, config_files: list[str] | None = None) -> cfg.ConfigOpts:
    conf = cfg.ConfigOpts()
    options.register(conf)
    conf(args=args or [], project="neutron", prog="neutrino",
         default_config_files=config_files or [], validate_default_values=True)
    validate(conf)
    return conf


def validate(conf: cfg.ConfigOpts) -> None:
    """Read every registered option now, so a bad value stops start-up.

    oslo.config converts values lazily, on first access; without this a typo
    in a rarely used option would surface mid-request instead.
    """
    for name in list(conf):
        value = getattr(conf, name)
        if isinstance(value, cfg.ConfigOpts.GroupAttr):
            for opt in list(value):
                getattr(value, opt)


QUOTA_ALIASES = ("quotas", "quota_details", "quota-check-limit", "quota-check-limit-default")


def quota_countables() -> list[Countable]:
    return [Countable("network", t.networks, "quota_network"),
            Countable("subnet", t.subnets, "quota_subnet"),
            Countable("port", t.ports, "quota_port"),
            Countable("subnetpool", t.subnetpools, "quota_subnetpool"),
            Countable("rbac_policy", t.networkrbacs, "quota_rbac_policy",
                      more_tables=(t.subnetpoolrbacs, t.addressscoperbacs,
                                   t.qospolicyrbacs, t.securitygrouprbacs,
                                   t.addressgrouprbacs)),
            Countable("security_group", t.securitygroups, "quota_security_group"),
            Countable("security_group_rule", t.securitygrouprules,
                      "quota_security_group_rule")]


def build_api(conf: cfg.ConfigOpts) -> Api:
    if conf.metrics.enabled:
        metrics.activate()  # before the engines, whose statements it counts
    db = Database(options.database_url(conf))
    plugin = loader.load_core_plugin(conf, db)
    plugin.quota = QuotaEngine(conf, quota_countables())
    subscribe_nova(conf, db, plugin.events)
    plugins = directory.load(conf, db, plugin)
    for service in plugins.all_plugins()[1:]:
        plugin.quota.add(service.quota_countables())
    resources = core.core_resources()
    extend = getattr(plugin, "extend_resources", None)
    if extend is not None:
        extend(resources)
    api = Api(conf=conf, plugin=plugin, policy=Policy(conf), resources=resources,
              aliases=sorted(set(plugins.aliases) | set(QUOTA_ALIASES)),
              owners=dict(plugins.owners), directory=plugins)
    use_policy = getattr(plugin, "use_policy", None)
    if use_policy is not None:
        use_policy(api.policy)
    for ext in plugins.extensions:
        _add_extension(api, ext)
    api.notifier = NotifierHook(Notifications(conf))
    return api


def subscribe_nova(conf: cfg.ConfigOpts, db: Database, events: ev.Events) -> None:
    """The compute service hears, over HTTP, about its instances' ports: their
    status, their addresses, their floating IPs (``[nova]``, ``notify_nova_*``)."""
    nova = NovaNotifier(conf, db)
    status, data = conf.notify_nova_on_port_status_changes, conf.notify_nova_on_port_data_changes
    if not (status or data) or not nova.api.configured:
        return
    events.subscribe("ports", ev.AFTER_UPDATE, nova.port_updated)
    if data:
        events.subscribe("ports", ev.AFTER_DELETE, nova.port_deleted)
        for event in ev.AFTER:
            events.subscribe("floatingips", event, nova.floatingip_changed)


def _add_extension(api: Api, ext: ApiExtension) -> None:
    """Turn an extension's declarations into resources, routes data and policy."""
    extensions.register(ext.descriptor)
    if ext.descriptor.alias not in api.aliases:
        api.aliases = sorted({*api.aliases, ext.descriptor.alias})
    for rdef in ext.resources:
        api.resources[rdef.plural] = rdef.copy()
    extend(api.resources, ext.attributes)
    for plural, attrs in ext.attributes.items():
        if ext.attribute_handler is not None:
            handler = ext.attribute_handler
            handler.attribute_names = tuple(a.name for a in attrs)  # type: ignore[attr-defined]
            api.attribute_handlers.setdefault(plural, []).append(handler)
            api.plugin.add_joined(plural, handler.joined(plural))
    for plural, actions in ext.actions.items():
        for name, handler in actions.items():
            # The method the resource declares (``get_subports`` is a GET), else PUT.
            api.resources[plural].actions.setdefault(name, "PUT")
            api.actions[(plural, name)] = handler
    api.request_hooks.extend(ext.request_hooks)
    api.routes.extend(ext.routes)
    if ext.policies:
        api.policy.register(ext.policies)


def build_wsgi(conf: cfg.ConfigOpts, api: Api | None = None,
               probes: list[Probe] | None = None) -> Any:
    """The API's WSGI app; ``probes`` are what ``/healthcheck`` asks besides
    the database and the bus (the master's word on its RPC process)."""
    api = api or build_api(conf)
    wsgi = app_mod.build_falcon(api)
    wsgi.add_route("/healthcheck", Healthcheck([*health_probes(conf), *(probes or [])]))
    if conf.metrics.enabled:
        wsgi.add_route("/metrics", MetricsEndpoint(
            api, conf.metrics.database_facts_cache_time))
    if conf.topology.enabled:
        topology.add_routes(wsgi, conf.topology.poll_interval)
    auth = None
    octavia_auth = None
    octavia_plugin = octavia_api.find_plugin(api)
    octavia_app = octavia_api.build(api, octavia_plugin) if octavia_plugin else None
    if conf.auth_strategy == "keystone":
        # deferred: keystonemiddleware (and its dependencies) only with auth_strategy = keystone
        from keystonemiddleware import auth_token
        auth = auth_token.AuthProtocol(wsgi, {"oslo_config_config": conf})
        if octavia_app is not None:
            octavia_auth = auth_token.AuthProtocol(octavia_app, {"oslo_config_config": conf})
    app = app_mod.with_auth(wsgi, auth, anonymous=topology.is_page if conf.topology.enabled else None)
    if octavia_app is not None:
        app = octavia_api.mount(app, octavia_app, conf.octavia.path_prefix, octavia_auth)
    return app_mod.with_access_log(limits.with_body_limit(
        app, conf.oslo_middleware.max_request_body_size))


def health_probes(conf: cfg.ConfigOpts) -> list[Probe]:
    """What every server needs: its database and, with a real bus, the bus;
    and, as upstream's, a file whose presence takes the server out of a
    balancer's pool."""
    timeout, cache = conf.healthcheck.check_timeout, conf.healthcheck.cache_time
    probes = [Probe("database unreachable", Reachability(options.database_url(conf), timeout),
                    cache)]
    disable_file = conf.healthcheck.disable_by_file_path
    if disable_file:
        probes.insert(0, Probe("DISABLED BY FILE", disabled_by(disable_file)))
    url = configured_url(conf)
    if url is not None and not in_process(conf):
        probes.append(Probe("message bus disconnected",
                            functools.partial(bus_health.unreachable, url, timeout), cache))
    return probes


class RpcPlugins:
    """The loaded plugins as the RPC endpoints see them: built there, once,
    after the fork (or given, in the all-in-one's single process); their RPC
    endpoints by topic, agents' state reports among them, and their periodic
    tasks."""

    def __init__(self, conf: cfg.ConfigOpts, plugins: list[Any] | None = None) -> None:
        self.conf = conf
        self._plugins = plugins

    def plugins(self) -> list[Any]:
        if self._plugins is None:
            self._plugins = build_api(self.conf).directory.all_plugins()
        return self._plugins

    def endpoints(self) -> dict[str, list[Any]]:
        # deferred: endpoints load oslo.messaging, which API workers never import
        from neutrino.plugins.ml2.state_rpc import StateReportEndpoint
        core_plugin = self.plugins()[0]
        listeners = [plugin.agent_reported for plugin in self.plugins()
                     if hasattr(plugin, "agent_reported")]
        out: dict[str, list[Any]] = {
            topics.REPORTS: [StateReportEndpoint(core_plugin.db, self.conf.agent_down_time,
                                                 listeners)]}
        for plugin in self.plugins():
            endpoints = getattr(plugin, "rpc_endpoints", None)
            for topic, found in (endpoints() if endpoints else {}).items():
                out.setdefault(topic, []).extend(found)
        return out

    def tasks(self) -> list[Any]:
        return [task for plugin in self.plugins()
                for task in (getattr(plugin, "periodic_tasks", None) or list)()]
