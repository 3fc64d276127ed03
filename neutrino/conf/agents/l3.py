"""The L3 agent's options (``l3_agent.ini``), with upstream's names and
defaults, with the interface driver it plugs router ports with and the
options of its routers' metadata proxies."""
from __future__ import annotations

from oslo_config import cfg

from neutrino.conf.agents import common, metadata
from neutrino.conf.registry import register_missing

L3_OPTS = [
    cfg.StrOpt("agent_mode", default="legacy", choices=["legacy"],
               help="The working mode for the agent; only legacy (centralized) "
                    "routers are implemented."),
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
    cfg.IntOpt("ha_keepalived_state_change_server_threads", default=1, min=1,
               help="Accepted for upstream compatibility; states are read from the "
                    "files keepalived's notify script writes."),
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


def register(conf: cfg.ConfigOpts) -> None:
    common.register_interface(conf)
    common.register_availability_zone(conf)
    register_metadata_proxy(conf)
    register_missing(conf, L3_OPTS)


def register_metadata_proxy(conf: cfg.ConfigOpts) -> None:
    """What the routers' metadata proxies read."""
    metadata.register_socket(conf)
    register_missing(conf, METADATA_PROXY_OPTS)
