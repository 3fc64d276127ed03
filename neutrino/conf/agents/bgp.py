"""The BGP DR agent's options (``bgp_dragent.ini``): upstream's ``[BGP]``
section, and how this agent runs its BGP speakers (GoBGP's ``gobgpd``)."""
from __future__ import annotations

from oslo_config import cfg

from neutrino.conf.registry import register_missing

BGP_OPTS = [
    cfg.StrOpt("bgp_speaker_driver", default="gobgp",
               help="The BGP speaker the agent drives: gobgp (GoBGP's gobgpd, one "
                    "process per hosted speaker)."),
    cfg.StrOpt("bgp_router_id",
               help="The 32-bit BGP router id of the speakers on this host, an IPv4 "
                    "address (required)."),
    cfg.IntOpt("bgp_listen_port", default=179, min=-1, max=65535,
               help="The TCP port the speakers accept sessions on; -1: they only "
                    "connect to their peers."),
    cfg.StrOpt("gobgpd_path", default="gobgpd", help="The gobgpd daemon."),
    cfg.StrOpt("gobgp_path", default="gobgp", help="The gobgp command driving it."),
]

AGENT_OPTS = [
    cfg.IntOpt("periodic_interval", default=40, min=1,
               help="Seconds between full resynchronisations with the server."),
]


def register(conf: cfg.ConfigOpts) -> None:
    register_missing(conf, BGP_OPTS, "BGP")
    register_missing(conf, AGENT_OPTS)
