"""Options of the server's supervision of its own processes and of its
``/healthcheck`` (neutrino-specific: upstream leaves both to the init
system and to oslo.middleware's backends)."""
from __future__ import annotations

from oslo_config import cfg

SUPERVISION_OPTS = [
    cfg.FloatOpt("child_respawn_delay", default=0.5, min=0.0,
                 help="Seconds before a server child (an API worker, the RPC process) "
                      "that keeps dying is started again; doubled after each quick "
                      "death, up to child_respawn_max_delay. A child that ran for "
                      "child_healthy_after seconds is started again at once."),
    cfg.FloatOpt("child_respawn_max_delay", default=30.0, min=0.0,
                 help="The longest wait before a dying server child is started again."),
    cfg.FloatOpt("child_healthy_after", default=10.0, min=0.0,
                 help="Seconds a server child must run for its next death to be "
                      "answered with an immediate restart rather than a longer wait."),
]

HEALTHCHECK_OPTS = [
    cfg.StrOpt("disable_by_file_path", default="/etc/neutron/healthcheck_disable",
               help="While this file exists /healthcheck answers 503 (a server being "
                    "drained); upstream's api-paste.ini names the same file."),
    cfg.FloatOpt("check_timeout", default=2.0, min=0.1,
                 help="Seconds a /healthcheck probe of the database or the message "
                      "bus may take before what it probes is reported down."),
    cfg.FloatOpt("cache_time", default=3.0, min=0.0,
                 help="Seconds an API worker reuses a probe's answer, so that "
                      "frequent health checks do not load the database or the bus."),
]


def register(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(SUPERVISION_OPTS)
    conf.register_opts(HEALTHCHECK_OPTS, "healthcheck")
