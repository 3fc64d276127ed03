"""The Octavia v2 API's options (``[octavia]``).

Octavia keeps these in ``[api_settings]`` and ``[quotas]`` of its own
file; neutrino serves the API from its own server, so they sit in one
group of their own where ``[quotas]`` already means Neutron's quotas. The
names after the group are Octavia's.
"""
from __future__ import annotations

from oslo_config import cfg

OCTAVIA_OPTS = [
    cfg.StrOpt("path_prefix", default="/load-balancer",
               help="The path under which neutrino's server answers the Octavia "
                    "v2 API; the Keystone catalog's load-balancer endpoint is the "
                    "server's URL with this path (as devstack serves Octavia at "
                    "http://HOST/load-balancer)."),
    cfg.DictOpt("enabled_provider_drivers",
                default={"noop_driver": "The No-Op driver."},
                help="The providers load balancers may use (name: description), each "
                     "a neutrino.octavia.providers entry point."),
    cfg.StrOpt("default_provider_driver", default="noop_driver",
               help="The provider of a load balancer created without one."),
    cfg.StrOpt("noop_operating_statuses", default="offline",
               choices=["offline", "healthy"],
               help="What the noop_driver provider reports as operating statuses: "
                    "'offline' as Octavia with its no-op drivers and no health manager "
                    "(load balancers, listeners and pools OFFLINE), 'healthy' as a health "
                    "manager would for a data plane where everything answers (load "
                    "balancers, listeners and pools in use ONLINE, monitored members "
                    "ONLINE), for clients that test a live provider."),
    cfg.IntOpt("pagination_max_limit", default=1000,
               help="The most items a list returns in one page."),
    cfg.BoolOpt("allow_tls_terminated_listeners", default=True,
                help="Whether TERMINATED_HTTPS listeners may be created."),
    cfg.BoolOpt("allow_prometheus_listeners", default=True,
                help="Whether PROMETHEUS listeners may be created."),
    cfg.IntOpt("default_load_balancer_quota", default=-1,
               help="Load balancers per project (-1: unlimited)."),
    cfg.IntOpt("default_listener_quota", default=-1, help="Listeners per project."),
    cfg.IntOpt("default_member_quota", default=-1, help="Members per project."),
    cfg.IntOpt("default_pool_quota", default=-1, help="Pools per project."),
    cfg.IntOpt("default_health_monitor_quota", default=-1,
               help="Health monitors per project."),
    cfg.IntOpt("default_l7policy_quota", default=-1, help="L7 policies per project."),
    cfg.IntOpt("default_l7rule_quota", default=-1, help="L7 rules per project."),
]


def register(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OCTAVIA_OPTS, "octavia")
