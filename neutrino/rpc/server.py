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

from neutrino import metrics
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
        counted = metrics.active()
        for topic, endpoints in self.endpoints.items():
            target = oslo_messaging.Target(topic=topic, server=self.conf.host)
            if counted is not None:
                endpoints = [CountedEndpoint(counted, topic, e) for e in endpoints]
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


class CountedEndpoint:
    """An RPC endpoint whose served methods count into ``/metrics``; oslo.messaging
    sees the endpoint's own ``target`` and methods through it."""

    def __init__(self, counted: metrics.Metrics, topic: str, endpoint: Any) -> None:
        self._counted, self._topic, self._endpoint = counted, topic, endpoint

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._endpoint, name)
        if name.startswith("_") or name == "target" or not callable(found):
            return found
        calls = self._counted.rpc_calls

        def served(*args: Any, **kwargs: Any) -> Any:
            try:
                result = found(*args, **kwargs)
            except Exception:
                calls.labels(self._topic, name, "error").inc()
                raise
            calls.labels(self._topic, name, "ok").inc()
            return result
        return served


def serve(conf: cfg.ConfigOpts, plugin_endpoints: PluginEndpoints | None = None,
          plugin_tasks: PluginTasks | None = None,
          ready: Callable[[], None] | None = None) -> None:
    """Run the RPC servers (and the plugins' periodic tasks) until SIGTERM;
    the plugins' endpoints are built here, after the fork, so their database
    connections are this process's. ``ready`` is called once they serve.

    The process may be forked with the stops blocked (so that none is lost
    to the parent's handlers): they are let in once ours are set."""
    stopped = _stop_pipe()
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    die_with_parent()
    transport = rpc_transport(conf)
    service = RpcService(conf, transport, plugin_endpoints() if plugin_endpoints else {},
                         plugin_tasks() if plugin_tasks else [])
    service.start()
    if ready is not None:
        ready()
    os.read(stopped, 1)
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


def _stop_pipe() -> int:
    """A pipe that becomes readable on SIGTERM or SIGINT.

    The interpreter itself writes to it, from whichever thread the signal
    lands on; the Python handler does nothing. A handler that set a
    ``threading.Event`` deadlocked when a second stop (a supervised process
    gets one from its parent thread's exit and one from the parent) came
    while the main thread held that event's lock in its ``wait``."""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    signal.set_wakeup_fd(write_end)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: None)
    return read_end


def _repeat(done: threading.Event, interval: float, task: Callable[[], None]) -> None:
    """Run ``task`` every ``interval`` seconds until ``done``; a failing run is
    logged and the next one happens as planned."""
    while not done.wait(interval):
        try:
            task()
        except Exception:  # noqa: BLE001 - a periodic task must outlive one failure
            LOG.exception("periodic task %r failed", task)


def start_process(conf: cfg.ConfigOpts, plugin_endpoints: PluginEndpoints | None = None,
                  plugin_tasks: PluginTasks | None = None,
                  ready: Callable[[], None] | None = None) -> multiprocessing.Process:
    """The RPC process, forked by the master (no connections shared with the
    API workers: those are built after the fork)."""
    process = multiprocessing.get_context("fork").Process(
        target=serve, args=(conf, plugin_endpoints, plugin_tasks, ready), name="neutrino-rpc",
        daemon=False)
    process.start()
    return process
