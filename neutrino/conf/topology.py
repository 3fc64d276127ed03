"""``[topology]``: the live topology page (neutrino-specific; upstream
Neutron has none). Read by the server only."""
from __future__ import annotations

from oslo_config import cfg

TOPOLOGY_OPTS = [
    cfg.BoolOpt("enabled", default=False,
                help="Serve the live topology page under /topology. The page itself holds "
                     "no data: it reads the API with the caller's token, so each caller "
                     "sees what the API's policy lets them list."),
    cfg.IntOpt("poll_interval", default=3, min=1,
               help="Seconds between the page's reads of the API while it is open."),
]


def register(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(TOPOLOGY_OPTS, "topology")
