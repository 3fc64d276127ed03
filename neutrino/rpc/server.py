"""The server's RPC endpoints, served in a process of their own.

``neutrino serve`` starts it next to the API workers when a
``transport_url`` is configured; it shares nothing with them but the
database. Endpoints are grouped by topic as upstream groups them, so an
agent finds the methods it calls where it expects them.
"""
from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import threading
from typing import Any, Callable

from oslo_config import cfg

from neutrino.process import die_with_parent
from neutrino.rpc.servers import stop_all
from neutrino.rpc.transport import rpc_transport

LOG = logging.getLogger(__name__)


PluginEndpoints = Callable[[], dict[str, list[Any]]]
PluginTasks = Callable[[], list[tuple[float, Callable[[], None]]]]


class RpcService:
    """The RPC servers of every topic and the plugins' periodic tasks, in
    threads of the calling process; ``stop`` ends both."""

    def __init__(self, conf: cfg.ConfigOpts, transport: Any,
                 endpoints: dict[str, list[Any]],
                 tasks: list[tuple[float, Callable[[], None]]]) -> None:
        self.conf, self.transport = conf, transport
        self.endpoints, self.tasks = endpoints, tasks
        self.done = threading.Event()
        self.servers: list[Any] = []

    def start(self) -> None:
        # deferred: the server's master, which forks the API workers, imports this module
        import oslo_messaging
        for topic, endpoints in self.endpoints.items():
            target = oslo_messaging.Target(topic=topic, server=self.conf.host)
            server = oslo_messaging.get_rpc_server(self.transport, target, endpoints)
            server.start()
            self.servers.append(server)
            LOG.info("RPC: serving %s on %s", topic, self.conf.host)
        for interval, task in self.tasks:
            threading.Thread(target=_repeat, args=(self.done, interval, task), daemon=True,
                             name=getattr(task, "__name__", "periodic")).start()

    def stop(self) -> None:
        self.done.set()
        stop_all(self.servers)
        self.servers = []


def serve(conf: cfg.ConfigOpts, plugin_endpoints: PluginEndpoints | None = None,
          plugin_tasks: PluginTasks | None = None) -> None:
    """Run the RPC servers (and the plugins' periodic tasks) until SIGTERM;
    the plugins' endpoints are built here, after the fork, so their database
    connections are this process's."""
    transport = rpc_transport(conf)
    service = RpcService(conf, transport, plugin_endpoints() if plugin_endpoints else {},
                         plugin_tasks() if plugin_tasks else [])
    service.start()
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    die_with_parent()
    done.wait()
    # oslo.messaging's executor threads can take long to wind down (or hang
    # on a broker that went away): give them a bounded time, then exit
    # without waiting for them.
    stopper = threading.Thread(target=service.stop, name="rpc-stop", daemon=True)
    stopper.start()
    stopper.join(STOP_GRACE)
    if stopper.is_alive():
        LOG.warning("RPC servers did not stop in %s s; exiting anyway", STOP_GRACE)
    logging.shutdown()
    os._exit(0)


STOP_GRACE = 5.0  # seconds the RPC servers get to stop on SIGTERM


def _repeat(done: threading.Event, interval: float, task: Callable[[], None]) -> None:
    """Run ``task`` every ``interval`` seconds until ``done``; a failing run is
    logged and the next one happens as planned."""
    while not done.wait(interval):
        try:
            task()
        except Exception:  # noqa: BLE001 - a periodic task must outlive one failure
            LOG.exception("periodic task %r failed", task)


def start_process(conf: cfg.ConfigOpts, plugin_endpoints: PluginEndpoints | None = None,
                  plugin_tasks: PluginTasks | None = None) -> multiprocessing.Process:
    """The RPC process, forked before the API workers (no shared connections)."""
    process = multiprocessing.get_context("fork").Process(
        target=serve, args=(conf, plugin_endpoints, plugin_tasks), name="neutrino-rpc",
        daemon=False)
    process.start()
    return process
