"""Assembles the API service from configuration: database, plugins, policy, WSGI."""
from __future__ import annotations

import logging
from typing import Any

from oslo_config import cfg

from neutrino.api import app as app_mod
from neutrino.api.controller import Api
from neutrino.conf import options
from neutrino.db.engine import Database
from neutrino.plugins import loader
from neutrino.policy.engine import Policy
from neutrino.quota.engine import Countable, QuotaEngine
from neutrino.resources import core

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
            Countable("port", t.ports, "quota_port")]


def build_api(conf: cfg.ConfigOpts) -> Api:
    db = Database(options.database_url(conf))
    plugin = loader.load_core_plugin(conf, db)
    plugin.quota = QuotaEngine(conf, quota_countables())
    resources = core.core_resources()
    aliases = sorted(set(plugin.supported_extension_aliases) | set(QUOTA_ALIASES))
    return Api(conf=conf, plugin=plugin, policy=Policy(conf), resources=resources,
               aliases=aliases)


def build_wsgi(conf: cfg.ConfigOpts, api: Api | None = None) -> Any:
    api = api or build_api(conf)
    wsgi = app_mod.build_falcon(api)
    auth = None
    if conf.auth_strategy == "keystone":
        from keystonemiddleware import auth_token
        auth = auth_token.AuthProtocol(wsgi, {"oslo_config_config": conf})
    return app_mod.with_access_log(app_mod.with_auth(wsgi, auth))
