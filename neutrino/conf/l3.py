"""Options of the L3 service plugin, with upstream's names and defaults.

Registered with the other options (not when the plugin loads) so that a
bad value stops start-up like any other, and so that quota defaults are
readable before plugins are loaded.
"""
from __future__ import annotations

from oslo_config import cfg

L3_OPTS = [
    cfg.BoolOpt("enable_snat_by_default", default=True,
                help="Define the default value of enable_snat if not provided in "
                     "external_gateway_info."),
    cfg.BoolOpt("enable_ndp_proxy_by_default", default=False,
                help="Define the default value of enable_ndp_proxy if not provided in "
                     "a router's request (used by the ndp_proxy service plugin)."),
    cfg.BoolOpt("router_distributed", default=False,
                help="System-wide flag to determine the type of router that projects "
                     "can create. Only admin can override."),
    cfg.StrOpt("dvr_base_mac", default="fa:16:3f:00:00:00",
               help="The base MAC address used for unique DVR instances by Neutron. "
                    "The first 3 octets will remain unchanged. If the 4th octet is "
                    "not 00, it will also be used. The others will be randomly "
                    "generated. The 'dvr_base_mac' *must* be different from "
                    "'base_mac' to avoid mixing them up with MACs allocated for "
                    "tenant ports."),
    cfg.IntOpt("max_routes", default=30, min=1,
               deprecated_for_removal=True,
               deprecated_reason='Replaced by the "quota_router_route" quota in '
                                 'the [quotas] section, as upstream.',
               help="Accepted for compatibility; the per-router limit is "
                    "[quotas] quota_router_route."),
]

# Scheduling routers on L3 agents (upstream's l3_agentschedulers_db and
# scheduler options); upstream's class paths of the two schedulers are
# accepted as well as our short names.
L3_SCHEDULER_OPTS = [
    cfg.StrOpt("router_scheduler_driver",
               default="neutron.scheduler.l3_agent_scheduler.LeastRoutersScheduler",
               help="Driver to use for scheduling router to a default L3 agent: "
                    "LeastRoutersScheduler or ChanceScheduler (upstream's class paths "
                    "or these names)."),
    cfg.BoolOpt("router_auto_schedule", default=True,
                help="Allow auto scheduling of routers to L3 agent."),
    cfg.BoolOpt("allow_automatic_l3agent_failover", default=False,
                help="Automatically reschedule routers from offline L3 agents to online "
                     "L3 agents."),
]

# ``l3-ha``: VRRP routers on several L3 agents (upstream's l3_hamode_db options).
L3_HA_OPTS = [
    cfg.BoolOpt("l3_ha", default=False,
                help="Enable HA mode for virtual routers."),
    cfg.IntOpt("max_l3_agents_per_router", default=3, min=0,
               help="Maximum number of L3 agents which a HA router will be scheduled "
                    "on. If it is set to 0 then the router will be scheduled on every "
                    "agent."),
    cfg.StrOpt("l3_ha_net_cidr", default="169.254.192.0/18",
               help="Subnet used for the L3 HA admin network."),
    cfg.StrOpt("l3_ha_network_type", default="",
               help="The network type to use when creating the HA network for an HA "
                    "router. By default or if empty, the first 'tenant_network_types' "
                    "is used."),
    cfg.StrOpt("l3_ha_network_physical_name", default="",
               help="The physical network name with which the HA network can be "
                    "created."),
]

L3_QUOTA_OPTS = [
    cfg.IntOpt("quota_router", default=10,
               help="Number of routers allowed per project. A negative value means "
                    "unlimited."),
    cfg.IntOpt("quota_floatingip", default=50,
               help="Number of floating IPs allowed per project. A negative value "
                    "means unlimited."),
    cfg.IntOpt("quota_router_route", default=30,
               help="Number of routes allowed per router. A negative value means "
                    "unlimited."),
]

# ``l3-conntrack-helper``: which helper a router may attach to which protocol
# (upstream's conf/extensions/conntrack_helper.py): ``helper:protocol`` items,
# a helper repeated once per protocol it supports.
CONNTRACK_HELPER_OPTS = [
    cfg.ListOpt("allowed_conntrack_helpers",
                default=[{"amanda": "tcp"}, {"ftp": "tcp"}, {"h323": "udp"}, {"h323": "tcp"},
                         {"irc": "tcp"}, {"netbios-ns": "udp"}, {"pptp": "tcp"},
                         {"sane": "tcp"}, {"sip": "udp"}, {"sip": "tcp"}, {"snmp": "udp"},
                         {"tftp": "udp"}],
                item_type=cfg.types.Dict(),
                sample_default=[{"tftp": "udp"}, {"ftp": "tcp"}, {"sip": "tcp"},
                                {"sip": "udp"}],
                help="Defines the allowed conntrack helpers, and conntrack helper module "
                     "protocol constraints."),
]


def register(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(L3_OPTS)
    conf.register_opts(CONNTRACK_HELPER_OPTS)
    conf.register_opts(L3_SCHEDULER_OPTS)
    conf.register_opts(L3_HA_OPTS)
    conf.register_opts(L3_QUOTA_OPTS, "quotas")
