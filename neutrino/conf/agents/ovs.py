"""The OVS agent's options, with upstream's names, groups and defaults."""
from __future__ import annotations

from oslo_config import cfg

from neutrino.conf import placement
from neutrino.conf.agents import common, network_log
from neutrino.conf.registry import register_missing

OVS_OPTS = [
    cfg.StrOpt("integration_bridge", default="br-int",
               help="Integration bridge: every VIF is an access port of it."),
    cfg.StrOpt("tunnel_bridge", default="br-tun", help="Tunnel bridge (overlays)."),
    cfg.StrOpt("int_peer_patch_port", default="patch-tun",
               help="br-int's patch port to the tunnel bridge."),
    cfg.StrOpt("tun_peer_patch_port", default="patch-int",
               help="The tunnel bridge's patch port to br-int."),
    cfg.IPOpt("local_ip", help="This host's tunnel endpoint address (IPv4)."),
    cfg.ListOpt("bridge_mappings", default=[],
                help="<physical_network>:<bridge> pairs for flat and VLAN networks."),
    cfg.StrOpt("datapath_type", default="system", choices=["system", "netdev"],
               help="OVS datapath of the bridges the agent creates."),
    cfg.StrOpt("ovsdb_connection", default=None,
               help="OVSDB endpoint the agent's native IDL connection manages (e.g. "
                    "tcp:127.0.0.1:6640 or unix:/run/openvswitch/db.sock); unset: the "
                    "local switch's socket, unix:$OVS_RUNDIR/db.sock "
                    "(/var/run/openvswitch without OVS_RUNDIR), as the OVS tools find it."),
    cfg.IntOpt("ovsdb_timeout", default=10,
               help="Seconds an OVSDB transaction (including ovs-vswitchd applying it) "
                    "may take."),
]
AGENT_OPTS = [
    cfg.ListOpt("tunnel_types", default=[], item_type=cfg.types.String(
        choices=["vxlan", "gre", "geneve"]), help="Tunnel types this host supports."),
    cfg.BoolOpt("l2_population", default=False,
                help="Learn tunnel peers and remote MACs from the server's l2population "
                     "casts (the server must load the l2population mechanism driver) "
                     "instead of asking tunnel_sync and flooding to every peer."),
    cfg.BoolOpt("enable_distributed_routing", default=False,
                help="Make the agent run in DVR mode: distributed routers' ports "
                     "stay on their host, their traffic leaves with the host's DVR MAC."),
    cfg.BoolOpt("arp_responder", default=False,
                help="With l2_population: br-tun answers ARP requests for remote "
                     "addresses itself instead of flooding them."),
    cfg.ListOpt("extensions", default=[],
                help="Agent extensions to load; 'qos' enforces QoS policies' rules, 'log' "
                     "logs the packets security groups accept and drop ([network_log])."),
]
SG_OPTS = [
    cfg.StrOpt("firewall_driver", default="noop",
               help="'noop' (no filtering) or 'openvswitch' (security groups as "
                    "stateful OpenFlow rules on br-int using conntrack); upstream's class "
                    "paths of both are accepted."),
]


def register(conf: cfg.ConfigOpts) -> None:
    for group, opts in (("OVS", OVS_OPTS), ("AGENT", AGENT_OPTS), ("SECURITYGROUP", SG_OPTS)):
        register_missing(conf, opts, group)
    common.register_l2(conf)
    placement.register_agent(conf)
    network_log.register(conf)


def bridge_mappings(conf: cfg.ConfigOpts) -> dict[str, str]:
    """``physnet1:br-eth1`` items as a dict; a malformed item is a config error."""
    return common.pairs(conf.OVS.bridge_mappings, "bridge_mappings", "bridge")
