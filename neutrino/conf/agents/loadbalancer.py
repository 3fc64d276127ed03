"""The load-balancer agent's options (upstream's ``lbaas_agent.ini`` names
where it had them)."""
from __future__ import annotations

from oslo_config import cfg

from neutrino.conf.agents import common
from neutrino.conf.registry import register_missing

AGENT_OPTS = [
    cfg.FloatOpt("periodic_interval", default=10, min=0.1,
                 help="Seconds between full resynchronisations of the load-balancer "
                      "agent with the server."),
]

HAPROXY_OPTS = [
    cfg.StrOpt("loadbalancer_state_path", default="$state_path/lbaas",
               help="Where the load-balancer agent keeps each load balancer's haproxy "
                    "configuration, certificates, pid file and stats socket."),
    cfg.FloatOpt("stats_interval", default=10, min=0.1,
                 help="Seconds between two readings of each haproxy's statistics, "
                      "reported to the server as operating statuses and counters."),
    cfg.IntOpt("send_gratuitous_arp", default=3, min=0,
               help="Gratuitous ARPs sent for a VIP when it is plugged (0: none)."),
]


def register(conf: cfg.ConfigOpts) -> None:
    register_missing(conf, AGENT_OPTS)
    register_missing(conf, HAPROXY_OPTS, "haproxy")
    # the zone the haproxy provider's compute_zone places load balancers by
    common.register_availability_zone(conf)
