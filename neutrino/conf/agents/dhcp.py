"""The DHCP agent's options (``dhcp_agent.ini``), with upstream's names and
defaults, with the interface driver it plugs ports with and the metadata
agent's socket its proxies connect to."""
from __future__ import annotations

from oslo_config import cfg

from neutrino.conf.agents import common, metadata
from neutrino.conf.registry import register_missing

DHCP_AGENT_OPTS = [
    cfg.StrOpt("dhcp_driver", default="neutron.agent.linux.dhcp.Dnsmasq",
               help="The driver used to manage the DHCP server (dnsmasq is the one)."),
    cfg.IntOpt("resync_interval", default=5, min=1,
               help="Seconds between resyncs of what failed (and of every network "
                    "when a full resync is due)."),
    cfg.IntOpt("num_sync_threads", default=4,
               help="How many networks a sync converges at a time."),
    cfg.StrOpt("dhcp_confs", default="$state_path/dhcp",
               help="Location to store DHCP server config files."),
    cfg.IntOpt("dhcp_lease_duration", default=86400, min=-1,
               help="DHCP lease duration (in seconds); -1 means infinite."),
    cfg.StrOpt("dnsmasq_config_file", default="",
               help="Override the default dnsmasq settings with this file."),
    cfg.ListOpt("dnsmasq_dns_servers", default=[],
                help="Comma-separated list of the DNS servers used as forwarders."),
    cfg.BoolOpt("dnsmasq_local_resolv", default=False,
                help="Let dnsmasq forward to the host's resolvers (/etc/resolv.conf)."),
    cfg.IntOpt("dnsmasq_lease_max", default=2 ** 24,
               help="Limit number of leases to prevent a denial-of-service."),
    cfg.BoolOpt("dhcp_broadcast_reply", default=False, help="Use broadcast in DHCP replies."),
    cfg.IntOpt("dhcp_renewal_time", default=0,
               help="DHCP renewal time T1 (in seconds); 0 lets dnsmasq choose."),
    cfg.IntOpt("dhcp_rebinding_time", default=0,
               help="DHCP rebinding time T2 (in seconds); 0 lets dnsmasq choose."),
    cfg.BoolOpt("enable_isolated_metadata", default=False,
                help="Serve metadata (169.254.169.254) from the DHCP namespace of "
                     "networks with a subnet no router serves."),
    cfg.BoolOpt("force_metadata", default=False,
                help="Serve metadata from the DHCP namespace of every network, "
                     "routed or not."),
]


def register(conf: cfg.ConfigOpts) -> None:
    common.register_interface(conf)
    common.register_availability_zone(conf)
    metadata.register_socket(conf)
    register_missing(conf, DHCP_AGENT_OPTS)
