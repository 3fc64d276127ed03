"""The metering agent's options (``metering_agent.ini``), with upstream's
names and defaults."""
from __future__ import annotations

from oslo_config import cfg

from neutrino.conf.registry import register_missing

METERING_OPTS = [
    cfg.StrOpt("driver", default="noop",
               help="Metering driver: noop (counts nothing, upstream's default) or "
                    "iptables (upstream's name; counting with nftables here), also "
                    "upstream's class paths."),
    cfg.FloatOpt("measure_interval", default=30, min=0.05,
                 help="Seconds between two readings of the counters."),
    cfg.FloatOpt("report_interval", default=300, min=0,
                 help="Seconds between two l3.meter reports."),
    cfg.BoolOpt("granular_traffic_data", default=False,
                help="Report per label, router, project, router-label and project-label "
                     "instead of per label only."),
    cfg.IntOpt("periodic_interval", default=40, min=1,
               help="Seconds between full resynchronisations with the server."),
]


def register(conf: cfg.ConfigOpts) -> None:
    register_missing(conf, METERING_OPTS)
