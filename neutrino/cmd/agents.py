"""``neutrino agent <kind>``: build an agent from the configuration
(``neutrino.agents.launch``) and run it in the foreground until
SIGTERM/SIGINT."""
from __future__ import annotations

import signal

from oslo_config import cfg

from neutrino import metrics
from neutrino.agents.launch import AGENTS, Foreground
from neutrino.rpc.transport import in_process


def run(kind: str, conf: cfg.ConfigOpts) -> None:
    if in_process(conf):
        raise ValueError("[DEFAULT] transport_url: fake:// is the all-in-one's in-process bus; "
                         "its agents run inside `neutrino serve` (a separate agent needs a "
                         "broker, e.g. rabbit://)")
    agent = AGENTS[kind](conf)
    if conf.metrics.enabled:
        metrics.activate()
        if conf.metrics.agent_bind_port:
            metrics.serve_http(conf.metrics.agent_bind_host, conf.metrics.agent_bind_port)
    foreground = Foreground(agent)
    signal.signal(signal.SIGTERM, foreground.stop)
    signal.signal(signal.SIGINT, foreground.stop)
    try:
        foreground.run()
    finally:
        agent.stop()
