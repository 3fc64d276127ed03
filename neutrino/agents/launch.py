"""Build an agent from the configuration and run it in the foreground until
it is stopped: what ``neutrino agent <kind>`` runs, and what the
all-in-one runs in threads.

A configuration the agent cannot work with (no or an unknown
``interface_driver``) is a ValueError, which the command reports as one
line naming the option, with exit code 2, like the server.

Each builder imports its agent when called: an agent's modules and their
libraries (ovsdbapp, dnspython, oslo.service) load only in the process that
runs that agent, not in every API worker of a server.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from oslo_config import cfg

from neutrino.conf.agents import l3 as l3_conf
from neutrino.conf.agents import linuxbridge as linuxbridge_conf
from neutrino.conf.agents import loadbalancer as loadbalancer_conf
from neutrino.conf.agents import metering as metering_conf
from neutrino.conf.agents import ovs as ovs_conf


def _dhcp(conf: cfg.ConfigOpts) -> Any:
    # deferred: only the process running this agent loads it (module docstring)
    from neutrino.agents.dhcp.agent import DhcpAgent
    from neutrino.agents.dhcp_rpc import DhcpPluginApi
    return DhcpAgent(conf, DhcpPluginApi(conf, conf.host))


def l3_agent(conf: cfg.ConfigOpts, owned_namespaces: Path | None = None) -> Any:
    """The L3 agent; with ``owned_namespaces`` it counts as its routers only the
    namespaces listed there (see ``OwnRouterNamespaces``)."""
    # deferred: only the process running this agent loads it (module docstring)
    from neutrino.agents import interface
    from neutrino.agents.l3 import agent, linux
    l3_conf.register(conf)
    namespaces = None if owned_namespaces is None else linux.OwnRouterNamespaces(owned_namespaces)
    return agent.L3Agent(conf, interface.load(conf), namespaces=namespaces)


def _loadbalancer(conf: cfg.ConfigOpts) -> Any:
    # deferred: only the process running this agent loads it (module docstring)
    from neutrino.agents import interface
    from neutrino.agents.loadbalancer.agent import LoadBalancerAgent
    from neutrino.agents.loadbalancer.linux import LinuxLbHost
    from neutrino.agents.loadbalancer.rpc import LoadBalancerPluginApi
    loadbalancer_conf.register(conf)
    lb_host = LinuxLbHost(conf.haproxy.loadbalancer_state_path, interface.load(conf),
                          conf.haproxy.send_gratuitous_arp)
    return LoadBalancerAgent(conf, LoadBalancerPluginApi(conf, conf.host), lb_host)


def _metering(conf: cfg.ConfigOpts) -> Any:
    # deferred: only the process running this agent loads it (module docstring)
    from neutrino.agents.metering import agent
    metering_conf.register(conf)
    return agent.MeteringAgent(conf)


def _bgp(conf: cfg.ConfigOpts) -> Any:
    # deferred: only the process running this agent loads it (module docstring)
    from neutrino.agents.bgp import agent
    return agent.BgpDrAgent(conf, agent.speakers_from(conf))


class _UntilStopped:
    """Agents whose loop runs until an event is set (``run(stop)``)."""

    def __init__(self, agent: Any) -> None:
        self.agent, self.event = agent, threading.Event()

    def run(self) -> None:
        self.agent.run(self.event)

    def halt(self) -> None:
        self.event.set()

    def stop(self) -> None:
        getattr(self.agent, "stop", lambda: None)()


def _ovs(conf: cfg.ConfigOpts) -> Any:
    # deferred: only the process running this agent loads it (module docstring)
    from neutrino.agents.ovs import agent
    ovs_conf.register(conf)
    return _UntilStopped(agent.OvsAgent(conf))


def _metadata(conf: cfg.ConfigOpts) -> Any:
    # deferred: only the process running this agent loads it (module docstring)
    from neutrino.agents.metadata.agent import MetadataAgent
    return MetadataAgent(conf)


def _linuxbridge(conf: cfg.ConfigOpts) -> Any:
    # deferred: only the process running this agent loads it (module docstring)
    from neutrino.agents.linuxbridge import agent
    linuxbridge_conf.register(conf)
    return _UntilStopped(agent.LinuxBridgeAgent(conf))


AGENTS = {"bgp": _bgp, "dhcp": _dhcp, "l3": l3_agent, "linuxbridge": _linuxbridge,
          "loadbalancer": _loadbalancer, "metadata": _metadata, "metering": _metering,
          "ovs": _ovs}


class Foreground:
    """Runs agents with either loop shape (``run`` blocking, or ``start`` +
    ``wait``) and stops them on a signal."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent

    def stop(self, signum: int | None, frame: Any) -> None:
        for name in ("halt", "request_stop"):
            if hasattr(self.agent, name):
                getattr(self.agent, name)()
                return

    def run(self) -> None:
        if hasattr(self.agent, "run"):
            self.agent.run()
        else:
            self.agent.start()
            self.agent.wait()
