"""Configuration options, with upstream neutron.conf names and meanings.

Types are strict (oslo.config validates them when read), so an invalid
value stops start-up with one line naming the option.
"""
from __future__ import annotations

import os
import socket

from oslo_config import cfg

from neutrino.conf import (
    dhcp,
    fwaas,
    l3,
    metrics,
    ml2,
    nova,
    octavia,
    placement,
    supervision,
    topology,
)

CORE_OPTS = [
    cfg.StrOpt("host", default=socket.gethostname(), sample_default="example.domain",
               help="This host's name, as agents and notifications report it."),
    cfg.HostAddressOpt("bind_host", default="0.0.0.0",
                       help="The host IP to bind to."),
    cfg.PortOpt("bind_port", default=9696, help="The port to bind to."),
    cfg.IntOpt("api_workers", min=1,
               help="Number of API worker processes; defaults to the number of CPUs."),
    cfg.IntOpt("api_threads", default=8, min=1,
               help="Threads per API worker process, each reading requests and running "
                    "those that are whole (neutrino-specific)."),
    cfg.IntOpt("request_read_timeout", default=30, min=1,
               help="Seconds a client has to send a request's headers, and then its "
                    "body, before its connection is closed (neutrino-specific)."),
    cfg.IntOpt("max_header_line", default=16384, min=1,
               help="Maximum line size of message headers to be accepted; the "
                    "request target counts as one."),
    cfg.StrOpt("auth_strategy", default="keystone", choices=["keystone", "noauth"],
               help="The type of authentication to use."),
    cfg.StrOpt("core_plugin", default="ml2", help="The core plugin Neutron will use."),
    cfg.ListOpt("service_plugins", default=[], help="The service plugins Neutron will use."),
    cfg.StrOpt("base_mac", default="fa:16:3e:00:00:00",
               regex=r"^([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}$",
               help="The base MAC address Neutron will use for VIFs."),
    cfg.BoolOpt("allow_overlapping_ips", default=True,
                help="Allow overlapping IP support in Neutron."),
    cfg.IntOpt("global_physnet_mtu", default=1500, min=68,
               help="MTU of the underlying physical network."),
    cfg.IntOpt("pagination_max_limit", default=-1,
               help="The maximum number of items returned in a single response; "
                    "-1 means no limit."),
    cfg.StrOpt("api_paste_config", default="api-paste.ini",
               help="Accepted for compatibility; neutrino builds its pipeline in code."),
    cfg.StrOpt("noauth_project_id", default="admin",
               help="With auth_strategy=noauth, the project that resources created "
                    "by a caller sending no identity headers belong to "
                    "(neutrino-specific; upstream would refuse such creates)."),
    cfg.StrOpt("state_path", default="./var", help="Where to keep state files."),
    cfg.StrOpt("access_log", default="-",
               help="Access log destination for the API server ('-' is stderr; "
                    "empty disables it). neutrino-specific."),
    cfg.BoolOpt("debug", default=False, help="Log at debug level."),
    cfg.StrOpt("log_file", help="Log to this file instead of stderr."),
    cfg.StrOpt("dns_domain", default="openstacklocal",
               help="Domain to use for building the hostnames."),
    cfg.ListOpt("default_availability_zones", default=[],
                help="Default value of availability zone hints. The availability zone "
                     "aware schedulers use this when the resources "
                     "availability_zone_hints is empty. Multiple availability zones can "
                     "be specified by a comma separated string. This value can be empty."),
]

DATABASE_OPTS = [
    cfg.StrOpt("connection", secret=True,
               help="SQLAlchemy URL; defaults to an SQLite file under state_path."),
]


QUOTA_OPTS = [
    cfg.IntOpt("default_quota", default=-1,
               help="Default number of resources allowed per project; -1 is unlimited."),
    cfg.IntOpt("quota_network", default=100, help="Networks allowed per project."),
    cfg.IntOpt("quota_subnet", default=100, help="Subnets allowed per project."),
    cfg.IntOpt("quota_port", default=500, help="Ports allowed per project."),
    cfg.IntOpt("quota_rbac_policy", default=10, help="RBAC policies allowed per project."),
    cfg.IntOpt("quota_security_group", default=10,
               help="Security groups allowed per project."),
    cfg.IntOpt("quota_security_group_rule", default=100,
               help="Security group rules allowed per project."),
    cfg.StrOpt("quota_driver", default="neutron.db.quota.driver_nolock.DbQuotaNoLockDriver",
               help="Accepted for compatibility; neutrino has one race-free driver."),
    cfg.BoolOpt("track_quota_usage", default=True,
                help="Accepted for compatibility; usage is always counted exactly."),
]


# Upstream reads this group through oslo.middleware's sizelimit filter.
OSLO_MIDDLEWARE_OPTS = [
    cfg.IntOpt("max_request_body_size", default=114688, min=0,
               help="The maximum body size for each request, in bytes."),
]


SERVICE_PROVIDER_OPTS = [
    cfg.MultiStrOpt("service_provider", default=[],
                    help="Defines providers for advanced services using the format: "
                         "<service_type>:<name>:<driver>[:default]"),
]


def register(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(CORE_OPTS)
    conf.register_opts(SERVICE_PROVIDER_OPTS, "service_providers")
    conf.register_opts(DATABASE_OPTS, "database")
    conf.register_opts(QUOTA_OPTS, "quotas")
    conf.register_opts(OSLO_MIDDLEWARE_OPTS, "oslo_middleware")
    ml2.register(conf)
    l3.register(conf)
    fwaas.register(conf)
    nova.register(conf)
    placement.register_server(conf)
    dhcp.register(conf)
    octavia.register(conf)
    supervision.register(conf)
    metrics.register(conf)
    topology.register(conf)


def database_url(conf: cfg.ConfigOpts) -> str:
    url: str | None = conf.database.connection
    if url:
        return url
    return f"sqlite:///{os.path.abspath(os.path.join(conf.state_path, 'neutrino.sqlite'))}"
