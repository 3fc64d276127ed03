"""Assembles the API service from configuration: database, plugins, policy, WSGI."""
from __future__ import annotations

import logging
from typing import Any

from oslo_config import cfg

from neutrino.api import app as app_mod
from neutrino.api.controller import Api
from neutrino.api.hooks.notifier import NotifierHook
from neutrino.rpc.notifications import Notifications
from neutrino.conf import options
from neutrino.db.engine import Database
from neutrino.plugins import directory, loader
from neutrino.plugins.base import ApiExtension
from neutrino.policy.engine import Policy
from neutrino.quota.engine import Countable, QuotaEngine
from neutrino.resources import core, extensions
from neutrino.resources.attributes import extend

LOG = logging.getLogger(__name__)


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
    from neutrino.db import tables as t
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
    db = Database(options.database_url(conf))
    plugin = loader.load_core_plugin(conf, db)
    plugin.quota = QuotaEngine(conf, quota_countables())
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


def build_wsgi(conf: cfg.ConfigOpts, api: Api | None = None) -> Any:
    api = api or build_api(conf)
    wsgi = app_mod.build_falcon(api)
    auth = None
    if conf.auth_strategy == "keystone":
        from keystonemiddleware import auth_token
        auth = auth_token.AuthProtocol(wsgi, {"oslo_config_config": conf})
    return app_mod.with_access_log(app_mod.with_auth(wsgi, auth))
