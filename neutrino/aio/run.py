"""``neutrino serve`` with ``transport_url = fake://``: everything in one process.

Start order: RPC endpoints on the in-process bus, the private Open vSwitch,
the agents, then the API; a stop (SIGTERM/SIGINT) goes the other way. An
agent this host cannot run is skipped with one line saying why, and the API
is served anyway.
"""
from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from oslo_config import cfg

from neutrino.aio import host, host_route
from neutrino.aio.agents import LocalAgents, agent_conf_factory
from neutrino.aio.wsgi import ThreadedWsgi
from neutrino.conf import aio as aio_conf
from neutrino.conf.agents import ovs as ovs_conf
from neutrino.rpc import server as rpc_server
from neutrino.rpc.transport import close_in_process, rpc_transport
from neutrino.service import RpcPlugins, StartupError, build_wsgi

LOG = logging.getLogger(__name__)


def say(line: str) -> None:
    print(f"neutrino all-in-one: {line}", file=sys.stderr, flush=True)


def rpc_service(conf: cfg.ConfigOpts, api: Any) -> Any:
    """The RPC endpoints ``neutrino serve`` runs in its RPC process, here in
    threads, over the plugins the API uses."""
    plugins = RpcPlugins(conf, api.directory.all_plugins())
    return rpc_server.RpcService(conf, rpc_transport(conf), plugins.endpoints(), plugins.tasks())


def _switch(conf: cfg.ConfigOpts, agent_conf: cfg.ConfigOpts) -> host.LocalSwitch:
    """The private switch, its bridges of bridge_mappings, and OVS_RUNDIR set
    so that this process's agents (and their OVS tools) manage it."""
    ovs_conf.register(agent_conf)
    switch = host.LocalSwitch(Path(conf.aio.ovs_rundir), conf.aio.namespace)
    switch.start()
    os.environ.update({k: switch.env[k] for k in ("OVS_RUNDIR", "OVS_LOGDIR", "OVS_DBDIR")})
    for bridge in ovs_conf.bridge_mappings(agent_conf).values():
        address = (conf.aio.external_address or None
                   if bridge == conf.aio.external_bridge else None)
        switch.add_bridge(bridge, address)
    return switch


def host_route_of(conf: cfg.ConfigOpts) -> host_route.HostRoute | None:
    """The route from the host into the external network, if configured; an
    invalid ``host_link`` or ``external_address`` stops start-up."""
    if not (conf.aio.route_from_host and conf.aio.external_address) \
            or ":" in conf.aio.external_address:  # IPv4 only
        return None
    try:
        return host_route.HostRoute(conf.aio.namespace, conf.aio.external_address,
                                    conf.aio.host_link)
    except ValueError as exc:
        raise StartupError(f"[aio] host_link / external_address: {exc}") from None


def _route_from_host(route: host_route.HostRoute) -> host_route.HostRoute | None:
    """The route added, or one line saying why not (the API and agents run on)."""
    try:
        route.start()
    except host_route.Refused as exc:
        say(f"no route from the host to {route.prefix}: {exc}; floating IPs answer only "
            f"inside the namespace (ip netns exec {route.namespace} ping ...), or choose "
            f"another [aio] external_address / host_link")
        return None
    except Exception as exc:  # noqa: BLE001 - serve without it
        LOG.exception("routing %s from the host failed", route.prefix)
        say(f"no route from the host to {route.prefix}: {exc}")
        return None
    say(f"host route: {route.prefix} via {route.link.inner_address.ip} "
        f"dev {route.link.host_device}")
    return route


def _asked_for(conf: cfg.ConfigOpts, kind: str) -> bool:
    """Whether the configuration uses an optional agent's service."""
    if kind != "loadbalancer":
        return False
    try:
        return "haproxy" in (conf.octavia.enabled_provider_drivers or {})
    except (cfg.NoSuchOptError, cfg.NoSuchGroupError):
        return False


def _start_agents(conf: cfg.ConfigOpts) -> tuple[host.LocalSwitch | None, LocalAgents | None]:
    """The switch and the agents this host can run; one line per agent skipped."""
    skipped = host.skipped_agents()
    wanted = [*host.AGENTS, *(k for k in host.OPTIONAL_AGENTS if _asked_for(conf, k))]
    for kind in wanted:
        if kind in skipped:
            say(f"{host.TITLES[kind]} skipped: {skipped[kind]}")
    kinds = [k for k in wanted if k not in skipped]
    if not kinds:
        return None, None
    make_conf = agent_conf_factory(conf)
    switch = None
    try:
        switch = _switch(conf, make_conf())
        agents = LocalAgents(kinds, make_conf)
        agents.start()
    except Exception as exc:  # noqa: BLE001 - serve the API anyway
        LOG.exception("starting the agents failed")
        say(f"agents skipped: starting them failed: {exc}")
        if switch is not None:
            switch.stop()
        return None, None
    say(f"{', '.join(host.TITLES[k] for k in kinds)} running on host {conf.host}; "
        f"Open vSwitch in namespace {conf.aio.namespace}, OVS_RUNDIR={switch.rundir}")
    return switch, agents


def run(conf: cfg.ConfigOpts, api: Any) -> None:
    aio_conf.register(conf)
    # from here on a stop request waits for the start to finish, then undoes it
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    started: list[Any] = []  # what to stop, in start order
    try:
        try:  # bound first: a second all-in-one on the same port stops here
            http = ThreadedWsgi(build_wsgi(conf, api), conf.bind_host, conf.bind_port,
                                read_timeout=conf.request_read_timeout)
        except OSError as exc:
            raise StartupError(f"cannot listen on {conf.bind_host}:{conf.bind_port}: "
                               f"{exc}") from None
        route = host_route_of(conf)
        rpc = rpc_service(conf, api)
        rpc.start()
        started.append(rpc)
        switch, agents = _start_agents(conf)
        started += [part for part in (switch, agents) if part is not None]
        if switch is not None and route is not None:
            started += [part for part in (_route_from_host(route),) if part is not None]
        started.append(http.start())
        say(f"API on http://{conf.bind_host}:{conf.bind_port}"
            + ("" if agents else " (API only: no agents)"))
        while not done.wait(1.0):
            pass
        say("stopping")
    finally:
        for part in reversed(started):
            part.stop()
        close_in_process()
        api.plugin.db.dispose()
        say("stopped")
