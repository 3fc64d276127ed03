"""``[metrics]``: Prometheus metrics (neutrino-specific; upstream Neutron
has none). Read by the server and by every agent."""
from __future__ import annotations

from oslo_config import cfg

METRICS_OPTS = [
    cfg.BoolOpt("enabled", default=False,
                help="Count Prometheus metrics: the server serves them at /metrics on the "
                     "API (admins only), an agent on agent_bind_port when that is set."),
    cfg.HostAddressOpt("agent_bind_host", default="127.0.0.1",
                       help="Address an agent's own /metrics listener binds."),
    cfg.PortOpt("agent_bind_port", default=0,
                help="Port of an agent's own /metrics listener; 0: none (an agent of the "
                     "all-in-one counts into the server's /metrics instead)."),
    cfg.FloatOpt("database_facts_cache_time", default=10.0, min=0.0,
                 help="Seconds each API worker reuses its last reading of what /metrics "
                      "takes from the database (agent liveness, IP availability per "
                      "network), so frequent scrapes do not each read it; 0: every scrape."),
]


def register(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(METRICS_OPTS, "metrics")
