"""FWaaS v2 options, with neutron-fwaas's names and defaults.

The server reads ``[default_fwg_rules]`` (the rules of each project's
default firewall group) and its ``[service_providers]`` line for
``FIREWALL_V2``; agents read ``[fwaas]`` (whether their firewall extension
applies groups, and with which driver).
"""
from __future__ import annotations

from oslo_config import cfg

from neutrino.conf.registry import register_missing

DEFAULT_FWG_RULES_OPTS = [
    cfg.StrOpt("ingress_action", default="deny",
               help="Firewall group rule action allow or deny or reject for ingress."),
    cfg.StrOpt("ingress_source_ipv4_address", default=None,
               help="IPv4 source address for ingress (address or address/netmask)."),
    cfg.StrOpt("ingress_source_ipv6_address", default=None,
               help="IPv6 source address for ingress (address or address/netmask)."),
    cfg.StrOpt("ingress_source_port", default=None,
               help="Source port number or range (min:max) for ingress."),
    cfg.StrOpt("ingress_destination_ipv4_address", default=None,
               help="IPv4 destination address for ingress (address or address/netmask)."),
    cfg.StrOpt("ingress_destination_ipv6_address", default=None,
               help="IPv6 destination address for ingress (address or address/netmask)."),
    cfg.StrOpt("ingress_destination_port", default=None,
               help="Destination port number or range (min:max) for ingress."),
    cfg.StrOpt("egress_action", default="allow",
               help="Firewall group rule action allow or deny or reject for egress."),
    cfg.StrOpt("egress_source_ipv4_address", default=None,
               help="IPv4 source address for egress (address or address/netmask)."),
    cfg.StrOpt("egress_source_ipv6_address", default=None,
               help="IPv6 source address for egress (address or address/netmask)."),
    cfg.StrOpt("egress_source_port", default=None,
               help="Source port number or range (min:max) for egress."),
    cfg.StrOpt("egress_destination_ipv4_address", default=None,
               help="IPv4 destination address for egress (address or address/netmask)."),
    cfg.StrOpt("egress_destination_ipv6_address", default=None,
               help="IPv6 destination address for egress (address or address/netmask)."),
    cfg.StrOpt("egress_destination_port", default=None,
               help="Destination port number or range (min:max) for egress."),
    cfg.BoolOpt("shared", default=False, help="Firewall group rule shared."),
    cfg.StrOpt("protocol", default=None,
               help="Protocol of the firewall group rules (none: any)."),
    cfg.BoolOpt("enabled", default=True, help="Firewall group rule enabled."),
]

FWAAS_AGENT_OPTS = [
    cfg.StrOpt("driver", default="",
               help="Name of the FWaaS driver (accepted; neutrino's L3 extension applies "
                    "groups with nftables in the router's namespace)."),
    cfg.BoolOpt("enabled", default=False,
                help="Enable FWaaS: the agent's fwaas_v2 extension applies firewall groups "
                     "only when true, as upstream's."),
    cfg.StrOpt("agent_version", default="v2", choices=["v2"],
               help="FWaaS API version the agent extension serves (v2 only, as "
                    "neutron-fwaas 25)."),
    cfg.StrOpt("conntrack_driver", default="conntrack",
               help="Name of the FWaaS conntrack driver (accepted; established flows are "
                    "kept by the ruleset's connection tracking)."),
    cfg.StrOpt("firewall_l2_driver", default="noop",
               help="Name of the firewall L2 driver: 'ovs' lets the OVS agent's fwaas_v2 "
                    "extension apply groups on instance ports (with the openvswitch "
                    "security-group driver)."),
]


def register(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(DEFAULT_FWG_RULES_OPTS, "default_fwg_rules")
    conf.register_opts(QUOTA_OPTS, "quotas")


def register_agent(conf: cfg.ConfigOpts) -> None:
    register_missing(conf, FWAAS_AGENT_OPTS, "fwaas")


QUOTA_OPTS = [
    cfg.IntOpt("quota_firewall_group", default=10,
               help="Number of firewall groups allowed per project. A negative value means "
                    "unlimited."),
    cfg.IntOpt("quota_firewall_policy", default=10,
               help="Number of firewall policies allowed per project. A negative value "
                    "means unlimited."),
    cfg.IntOpt("quota_firewall_rule", default=100,
               help="Number of firewall rules allowed per project. A negative value means "
                    "unlimited."),
]
