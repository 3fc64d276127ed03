"""The Linux bridge agent's options, with upstream's names, groups and defaults.

One deviation: ``[vxlan] vxlan_group`` has no default here. Unset, a VXLAN
network floods to the tunnel endpoints the server lists (unicast, like the
OVS agent); set, it uses that multicast group as upstream does.
"""
from __future__ import annotations

from oslo_config import cfg

from neutrino.conf.agents import common
from neutrino.conf.agents.common import pairs  # noqa: F401 - the agent parses its mappings
from neutrino.conf.registry import register_missing

LB_OPTS = [
    cfg.ListOpt("physical_interface_mappings", default=[],
                help="<physical_network>:<interface> pairs: flat networks of that physical "
                     "network bridge that interface."),
    cfg.ListOpt("bridge_mappings", default=[],
                help="<physical_network>:<bridge> pairs: flat networks of that physical "
                     "network use that existing bridge."),
    cfg.StrOpt("namespace", default=None,
               help="(neutrino) The network namespace whose links the agent manages; "
                    "unset: its own. Emulated hosts in tests set it."),
]
VXLAN_OPTS = [
    cfg.BoolOpt("enable_vxlan", default=True, help="Carry VXLAN networks."),
    cfg.IPOpt("local_ip", version=4, help="This host's VXLAN endpoint address."),
    cfg.StrOpt("vxlan_group", default=None,
               help="Multicast group of VXLAN floods; unset: unicast to every endpoint."),
    cfg.BoolOpt("l2_population", default=False,
                help="Take static forwarding and ARP entries from the server's "
                     "l2population messages (remote MACs are not learned)."),
    cfg.IntOpt("ttl", min=1, max=255, help="TTL of VXLAN packets."),
    cfg.IntOpt("tos", min=0, max=255, help="TOS of VXLAN packets."),
    cfg.PortOpt("udp_dstport", default=4789, help="VXLAN UDP port."),
]
SG_OPTS = [
    cfg.StrOpt("firewall_driver", default="iptables",
               help="'noop' (no filtering) or 'iptables'/'nftables' (security groups "
                    "as stateful nftables rules on the bridged traffic); upstream's "
                    "class paths are accepted."),
    cfg.BoolOpt("enable_security_group", default=True,
                help="False: no filtering, whatever firewall_driver says."),
]

FIREWALLS = {
    "noop": "noop", "": "noop", "neutron.agent.firewall.NoopFirewallDriver": "noop",
    "iptables": "nftables", "nftables": "nftables",
    "neutron.agent.linux.iptables_firewall.IptablesFirewallDriver": "nftables",
}


def register(conf: cfg.ConfigOpts) -> None:
    for group, opts in (("LINUX_BRIDGE", LB_OPTS), ("VXLAN", VXLAN_OPTS),
                        ("SECURITYGROUP", SG_OPTS)):
        register_missing(conf, opts, group)
    common.register_l2(conf)


def firewall(conf: cfg.ConfigOpts) -> str:
    """'noop' or 'nftables'; ValueError for a driver this agent cannot run."""
    if not conf.SECURITYGROUP.enable_security_group:
        return "noop"
    value = (conf.SECURITYGROUP.firewall_driver or "").strip()
    try:
        return FIREWALLS[value]
    except KeyError:
        raise ValueError(f"[securitygroup] firewall_driver {value!r} is not supported by "
                         "the Linux bridge agent (use noop, iptables or nftables)") from None
