"""This host's agents as threads of the all-in-one process.

Each agent gets its own configuration object read from the server's files,
as a separate ``neutrino agent <kind>`` process would, so agents register
their options without meeting each other's. They are built and stopped
exactly as that command does (``neutrino.agents.launch``). Stopping also
removes what the DHCP, L3 and load-balancer agents made on the host
(qdhcp-/qrouter-/qlbaas- namespaces, dnsmasq, haproxy, their devices), since the private switch those devices
hang on goes away with the all-in-one; the next start rebuilds them from
the database.
"""
from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any, Callable

from oslo_config import cfg

from neutrino.agents import launch
from neutrino.service import make_conf

LOG = logging.getLogger(__name__)


def _l3(conf: cfg.ConfigOpts) -> Any:
    return launch.l3_agent(conf, Path(conf.state_path) / "aio-router-namespaces")


BUILDERS = {**launch.AGENTS, "l3": _l3}


class LocalAgent:
    def __init__(self, kind: str, conf: cfg.ConfigOpts) -> None:
        self.kind = kind
        self.agent = BUILDERS[kind](conf)
        self.runner = launch.Foreground(self.agent)
        self.thread = threading.Thread(target=self._run, name=f"{kind}-agent", daemon=True)

    def _run(self) -> None:
        try:
            self.runner.run()
        except Exception:  # noqa: BLE001 - the others and the API keep serving
            LOG.exception("%s agent stopped on an error", self.kind)

    def stop(self) -> None:
        self.runner.stop(None, None)
        self.thread.join(60)
        self.agent.stop()
        self._remove_host_state()

    def _remove_host_state(self) -> None:
        inner = getattr(self.agent, "agent", self.agent)
        try:
            if self.kind == "dhcp":
                for network_id in list(inner.networks):
                    inner.disable(network_id)
            elif self.kind == "l3":
                for router_id in list(inner.routers.applied):
                    if inner.vpn is not None:  # its charon, before its namespace
                        inner.vpn.router_removed(router_id)
                    inner.routers.remove(router_id)
            elif self.kind == "loadbalancer":
                for lb_id in list(inner.lb_host.observe()):
                    inner.lb_host.teardown(lb_id, None)
        except Exception:  # noqa: BLE001 - the next start's full sync cleans up
            LOG.exception("%s agent: removing its namespaces failed", self.kind)


class LocalAgents:
    def __init__(self, kinds: list[str], make_conf: Callable[[], cfg.ConfigOpts]) -> None:
        self.agents = [LocalAgent(kind, make_conf()) for kind in kinds]

    def start(self) -> None:
        for agent in self.agents:
            agent.thread.start()

    def stop(self) -> None:
        for agent in reversed(self.agents):  # L3 and DHCP before the L2 agent
            agent.stop()


def agent_conf_factory(conf: cfg.ConfigOpts) -> Callable[[], cfg.ConfigOpts]:
    """A fresh configuration from the same files and directories as ``conf``."""
    args: list[str] = []
    for path in conf.config_file or []:
        args += ["--config-file", path]
    for path in conf.config_dir or []:
        args += ["--config-dir", path]

    def make() -> Any:
        return make_conf(args)
    return make
