"""What every agent does besides its job: say who it is and that it lives.

An agent reports its state on start (``start_flag``) and then every
``[AGENT] report_interval`` seconds; the server keeps the heartbeat and the
agents API shows the agent alive while reports keep coming. A report that
fails (server or bus down) is logged and retried at the next interval: the
agent keeps doing its job meanwhile.
"""
from __future__ import annotations

import abc
import datetime as dt
import logging
import threading
import time
from typing import Any, Callable, TypeVar

import oslo_messaging
from oslo_config import cfg

from neutrino import metrics
from neutrino.conf.agents import common as agent_conf
from neutrino.rpc import topics
from neutrino.rpc.admin_context import admin_context
from neutrino.rpc.servers import stop_all
from neutrino.rpc.transport import rpc_transport

LOG = logging.getLogger(__name__)

# Seconds a report waits for its answer until the server has answered once: one
# sent before the server's consumers are bound is dropped by the broker.
FIRST_REPORT_TIMEOUT = 5.0
T = TypeVar("T")


class Agent(abc.ABC):
    """Base of the agents: identity, configuration and the state-report loop."""

    agent_type: str = ""
    binary: str = ""
    topic: str = ""

    def __init__(self, conf: cfg.ConfigOpts, host: str | None = None) -> None:
        agent_conf.register(conf)
        self.conf = conf
        self.host = host or conf.host
        self._transport: Any = None
        self._client: Any = None
        self._start_flag = True
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._servers: list[Any] = []  # RPC servers of ``listen``
        self._server_transport: Any = None
        self._revived = threading.Event()

    @abc.abstractmethod
    def configurations(self) -> dict[str, Any]:
        """What the server needs to know of this agent (bridge mappings, ...)."""

    def availability_zone(self) -> str | None:
        return None

    def state(self) -> dict[str, Any]:
        return {"binary": self.binary, "host": self.host, "topic": self.topic,
                "agent_type": self.agent_type, "configurations": self.configurations(),
                "availability_zone": self.availability_zone(),
                "start_flag": self._start_flag}

    def _rpc(self) -> Any:
        if self._client is None:
            self._transport = rpc_transport(self.conf)
            target = oslo_messaging.Target(topic=topics.REPORTS, version="1.0")
            self._client = oslo_messaging.get_rpc_client(self._transport, target)
        return self._client

    def report_state(self, timeout: float | None = None) -> str | None:
        """Send one report; the server's verdict (new, alive, revived) or None."""
        now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")
        try:
            client = self._rpc() if timeout is None else self._rpc().prepare(timeout=timeout)
            answer = client.call(admin_context(), "report_state",
                                 agent_state={"agent_state": self.state()}, time=now)
        except Exception:  # noqa: BLE001 - retried at the next interval
            if self._stop.is_set():  # the stop closed the transport under the report
                LOG.debug("%s on %s: state report ended by the stop", self.agent_type,
                          self.host)
            else:
                LOG.exception("%s on %s: state report failed", self.agent_type, self.host)
            return None
        first, self._start_flag = self._start_flag, False
        if first:
            self.first_reported()
        if answer == "revived":
            self.revived()
        return answer

    def first_reported(self) -> None:
        """The server has this agent now (its first report answered). An
        agent whose first sync asks the server to schedule work to it
        (networks, routers) syncs again here: a sync that ran before the
        report was answered found no agent to schedule to, as upstream's
        agents do their full sync after the first successful report."""

    def revived(self) -> None:
        """The server had taken this agent for dead: casts meant for it meanwhile
        were lost and the server may have moved its work elsewhere, so an agent
        that keeps state starts over from a full sync (as upstream's do).
        Called from the reporting thread; polling agents ask ``revival_seen``."""
        LOG.info("%s on %s: the server had taken it for dead; full resync next",
                 self.agent_type, self.host)
        self._revived.set()

    def revival_seen(self) -> bool:
        """Whether the server revived this agent since the last time asked."""
        if not self._revived.is_set():
            return False
        self._revived.clear()
        return True

    def register(self, within: float = 120.0, attempt: float = FIRST_REPORT_TIMEOUT) -> str:
        """Report until the server answers, so the agent exists before it is used.

        A report sent before the server's RPC consumers are bound is dropped by
        the broker and would wait out the whole response timeout; short
        attempts repeated keep a slow server start from losing the agent."""
        deadline = time.monotonic() + within
        while True:
            answer = self.report_state(timeout=attempt)
            if answer is not None:
                return answer
            if time.monotonic() >= deadline:
                raise TimeoutError(f"{self.agent_type} on {self.host}: the server did not "
                                   f"answer a state report within {within:.0f}s")
            time.sleep(0.5)

    def start_reporting(self) -> None:
        interval = self.conf.AGENT.report_interval
        if not interval:
            return

        def loop() -> None:
            # Until the server has answered once, attempts are short: a report
            # sent before the server's consumers are bound is dropped by the
            # broker and would otherwise hold the agent unregistered for the
            # whole RPC response timeout.
            while not self._stop.is_set():
                self.report_state(timeout=FIRST_REPORT_TIMEOUT if self._start_flag else None)
                self._stop.wait(interval)
        self._thread = threading.Thread(target=loop, name="state-report", daemon=True)
        self._thread.start()

    def listen(self, topic: str, endpoints: list[Any]) -> None:
        """Serve ``endpoints`` on ``topic`` for this host (its own queue and the
        topic's fanout) until ``stop_listening``."""
        if self._server_transport is None:
            self._server_transport = rpc_transport(self.conf)
        server = oslo_messaging.get_rpc_server(
            self._server_transport, oslo_messaging.Target(topic=topic, server=self.host),
            endpoints)
        server.start()
        self._servers.append(server)

    def stop_listening(self) -> None:
        servers, self._servers = self._servers, []
        stop_all(servers)
        if self._server_transport is not None:
            self._server_transport.cleanup()
            self._server_transport = None

    def stop(self) -> None:
        self.stop_listening()
        self.stop_reporting()

    def stop_reporting(self) -> None:
        """No more heartbeats (the server will see the agent die); what it
        serves through ``listen`` goes on until ``stop_listening``."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
        if self._transport is not None:
            self._transport.cleanup()
            self._transport = None
            self._client = None


# How often a pass's wait looks at ``stop`` while it waits for a wake-up.
STOP_CHECK_S = 0.25


def timed_pass(agent: str, step: Callable[[], T]) -> T:
    """``step()``, its duration counted into the process's metrics when on."""
    counted = metrics.active()
    if counted is None:
        return step()
    started = time.perf_counter()
    try:
        return step()
    finally:
        counted.agent_pass_seconds.labels(agent).observe(time.perf_counter() - started)


def count_resync(agent: str) -> None:
    counted = metrics.active()
    if counted is not None:
        counted.agent_resyncs.labels(agent).inc()


def count_wired(agent: str, devices: int) -> None:
    counted = metrics.active()
    if counted is not None and devices:
        counted.agent_devices_wired.labels(agent).inc(devices)


def poll(stop: threading.Event, interval: float, step: Callable[[], Any],
         resync: Callable[[], None], wake: threading.Event | None = None,
         agent: str = "agent") -> None:
    """Run ``step`` every ``interval`` seconds until ``stop``; a pass that
    fails is logged and ``resync`` makes the next one start over in full.
    ``wake`` (set when something on the host or from the server changed)
    starts the next pass at once; what changed while a pass ran wakes the
    one after it. ``interval`` stays the longest wait: a wake-up is news,
    never the only way to converge."""
    while not stop.is_set():
        started = time.monotonic()
        if wake is not None:
            wake.clear()
        try:
            reported = timed_pass(agent, step)
        except Exception:  # noqa: BLE001 - the next pass retries
            LOG.exception("reconcile pass failed; resyncing")
            count_resync(agent)
            resync()
        else:
            if isinstance(reported, dict):
                count_wired(agent, len(reported.get("up", ())))
        deadline = started + interval
        if wake is None:
            stop.wait(max(0.0, deadline - time.monotonic()))
            continue
        while not stop.is_set() and (left := deadline - time.monotonic()) > 0:
            if wake.wait(min(left, STOP_CHECK_S)):
                break
