"""``neutrino agent <kind>``: run one agent in the foreground until SIGTERM/SIGINT."""
from __future__ import annotations

import signal
from typing import Any

from oslo_config import cfg


def _dhcp(conf: cfg.ConfigOpts) -> Any:
    from neutrino.agents.dhcp.agent import DhcpAgent
    from neutrino.agents.dhcp_rpc import DhcpPluginApi
    return DhcpAgent(conf, DhcpPluginApi(conf, conf.host))


AGENTS = {"dhcp": _dhcp}


def run(kind: str, conf: cfg.ConfigOpts) -> None:
    agent = AGENTS[kind](conf)

    def halt(signum: int, frame: Any) -> None:
        agent.halt()
    signal.signal(signal.SIGTERM, halt)
    signal.signal(signal.SIGINT, halt)
    try:
        agent.run()
    finally:
        agent.stop()
