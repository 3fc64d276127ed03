"""``[network_log]``: the OVS agent's security-group logging, with upstream's
names, defaults and bounds (the switch's controller limits never go below them)."""
from __future__ import annotations

from oslo_config import cfg

from neutrino.conf.registry import register_missing

NETWORK_LOG_OPTS = [
    cfg.IntOpt("rate_limit", default=100, min=100,
               help="Maximum packets logging per second."),
    cfg.IntOpt("burst_limit", default=25, min=25,
               help="Maximum number of packets per rate_limit."),
    cfg.StrOpt("local_output_log_base",
               help="Output logfile path on agent side, default syslog file."),
]


def register(conf: cfg.ConfigOpts) -> None:
    register_missing(conf, NETWORK_LOG_OPTS, "network_log")
