"""The L3 agent's options (``l3_agent.ini``), with upstream's names and
defaults, with the interface driver it plugs router ports with, the
options of its routers' metadata proxies and of their IPv6 router
advertisements (radvd). Upstream's prefix delegation options
(``prefix_delegation_driver``, the server's ``ipv6_pd_enabled``) are not
declared: prefix delegation is not implemented."""
from __future__ import annotations

from oslo_config import cfg

from neutrino.conf import fwaas
from neutrino.conf.agents import common, metadata
from neutrino.conf.registry import register_missing

L3_OPTS = [
    cfg.StrOpt("agent_mode", default="legacy", choices=["legacy", "dvr", "dvr_snat"],
               help="The working mode for the agent: 'legacy' hosts centralized "
                    "routers; 'dvr' routes distributed routers east-west and answers "
                    "their floating IPs on a compute host; 'dvr_snat' also hosts "
                    "their centralized SNAT (a network node)."),
    cfg.BoolOpt("handle_internal_only_routers", default=True,
                help="Also host routers without an external gateway."),
    cfg.StrOpt("ha_confs_path", default="$state_path/ha_confs",
               help="Where HA routers' keepalived configurations and states are kept."),
    cfg.StrOpt("ha_vrrp_auth_type", default="PASS", choices=["AH", "PASS"],
               help="VRRP authentication type."),
    cfg.StrOpt("ha_vrrp_auth_password", secret=True,
               help="VRRP authentication password (none: no authentication)."),
    cfg.IntOpt("ha_vrrp_advert_int", default=2, min=1,
               help="Seconds between VRRP advertisements."),
    cfg.StrOpt("ipv6_gateway", default="",
               help="The link-local address of the upstream router on the external "
                    "network: the routers' IPv6 default route when no external subnet "
                    "gives an IPv6 gateway. Unset, routers learn that route from the "
                    "upstream router's advertisements instead."),
    cfg.StrOpt("radvd_user", default="",
               help="The user radvd drops its privileges to (its -u): empty means "
                    "the user the L3 agent runs as; root means radvd keeps running "
                    "as root (no -u)."),
    cfg.IntOpt("ha_keepalived_state_change_server_threads", default=1, min=1,
               help="Accepted for upstream compatibility; states are read from the "
                    "files keepalived's notify script writes."),
]

# ``[agent] extensions``, as upstream's l3_agent.ini
L3_AGENT_OPTS = [
    cfg.ListOpt("extensions", default=[],
                help="L3 agent extensions to load: 'fip_qos' enforces the bandwidth "
                     "limits of floating IPs' QoS policies, 'gateway_ip_qos' those of "
                     "routers' gateway policies (tc on the gateway device), 'vpnaas' "
                     "runs the routers' IPsec site connections (strongSwan), 'fwaas_v2' "
                     "applies firewall groups on routers' interfaces (nftables in the "
                     "router's namespace; with [fwaas] enabled = true)."),
]

# upstream declares these with the agents' common options ([DEFAULT])
RA_OPTS = [
    cfg.StrOpt("ra_confs", default="$state_path/ra",
               help="Where the routers' radvd configurations and pid files are kept."),
    cfg.IntOpt("min_rtr_adv_interval", default=30, min=3,
               help="MinRtrAdvInterval of radvd.conf (seconds)."),
    cfg.IntOpt("max_rtr_adv_interval", default=100, min=4,
               help="MaxRtrAdvInterval of radvd.conf (seconds)."),
]

METADATA_PROXY_OPTS = [
    cfg.PortOpt("metadata_port", default=9697,
                help="TCP port the router namespaces' metadata proxies listen on."),
    cfg.BoolOpt("enable_metadata_proxy", default=True,
                help="Serve metadata through the routers' namespaces."),
    cfg.StrOpt("metadata_access_mark", default="0x1",
               help="Mark of metadata requests that came in by a router's "
                    "internal port; only they reach the proxy's port."),
]


# The ``vpnaas`` extension (upstream's IPsec device driver with strongSwan):
# ``[ipsec]`` and ``[strongswan]`` of upstream's vpn_agent.ini, and how the
# SAs are installed: the kernel's XFRM (production, as upstream) or
# strongSwan's own userspace ESP over a TUN device (``kernel-libipsec``), for
# hosts whose kernel has no ESP.
IPSEC_OPTS = [
    cfg.StrOpt("config_base_dir", default="$state_path/ipsec",
               help="Where each router's strongSwan configuration and sockets are kept."),
    cfg.IntOpt("ipsec_status_check_interval", default=60, min=1,
               help="Seconds between checks of the IPsec connections' statuses."),
    cfg.BoolOpt("enable_detailed_logging", default=False,
                help="Have charon log IKE and configuration at level 2."),
]
STRONGSWAN_OPTS = [
    cfg.StrOpt("ipsec_backend", default="kernel", choices=["kernel", "libipsec"],
               help="Where ESP runs: 'kernel' (the kernel's XFRM, charon's "
                    "kernel-netlink plugin) or 'libipsec' (charon's kernel-libipsec "
                    "plugin: userspace ESP over a TUN device, UDP-encapsulated)."),
    cfg.StrOpt("charon_path", default="/usr/lib/ipsec/charon",
               help="The charon daemon."),
    cfg.StrOpt("swanctl_path", default="swanctl", help="The swanctl command."),
]


def register(conf: cfg.ConfigOpts) -> None:
    common.register_interface(conf)
    register_missing(conf, IPSEC_OPTS, "ipsec")
    register_missing(conf, STRONGSWAN_OPTS, "strongswan")
    common.register_availability_zone(conf)
    register_metadata_proxy(conf)
    register_missing(conf, L3_OPTS)
    register_missing(conf, L3_AGENT_OPTS, "AGENT")
    register_missing(conf, RA_OPTS)
    fwaas.register_agent(conf)


def register_metadata_proxy(conf: cfg.ConfigOpts) -> None:
    """What the routers' metadata proxies read."""
    metadata.register_socket(conf)
    register_missing(conf, METADATA_PROXY_OPTS)
