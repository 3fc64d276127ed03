"""Keeping the server's children running: what a child's death is called
in the log, how long to wait before starting it again, and the watch over
the RPC process (the API workers are watched by granian's master, see
``cmd/serve.py``).

A child that dies after a healthy run is started again at once; one that
keeps dying soon after its start waits longer each time, up to a cap, so
that a misconfiguration does not fork in a tight loop, and every death is
logged at ERROR with how the child ended.
"""
from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import threading
import time
from multiprocessing.connection import wait
from typing import Any, Callable

from oslo_config import cfg

from neutrino import metrics

LOG = logging.getLogger(__name__)

# A stop (SIGTERM, SIGINT) sent to a child before it sets its own handlers
# would run the master's, inherited with the fork, and be lost there.
STOPS = {signal.SIGTERM, signal.SIGINT}


def exit_status(exitcode: int | None) -> str:
    """How a child ended, as multiprocessing reports it (a negative code is
    the signal that killed it)."""
    if exitcode is None:
        return "unknown exit status"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = str(-exitcode)
        return f"killed by signal {name}"
    return f"exit code {exitcode}"


class Backoff:
    """The wait before a child's next start: none after a healthy run,
    then doubling from ``first`` to ``cap`` for as long as each run ends
    before ``healthy_after``."""

    def __init__(self, first: float, cap: float, healthy_after: float) -> None:
        self.first, self.cap, self.healthy_after = first, cap, healthy_after
        self.quick_deaths = 0

    @classmethod
    def from_conf(cls, conf: cfg.ConfigOpts) -> "Backoff":
        return cls(conf.child_respawn_delay, conf.child_respawn_max_delay,
                   conf.child_healthy_after)

    def fresh(self) -> "Backoff":
        """The same rule for another child, which has not died yet."""
        return Backoff(self.first, self.cap, self.healthy_after)

    def after_death(self, ran_for: float) -> float:
        """The wait before starting again a child that ran ``ran_for`` seconds."""
        if ran_for >= self.healthy_after:
            self.quick_deaths = 0
            return 0.0
        self.quick_deaths += 1
        if self.quick_deaths == 1:
            return 0.0
        return min(self.cap, self.first * 2 ** (self.quick_deaths - 2))


def start_with_stops_held(start: Callable[[], Any]) -> Any:
    """Fork with the stops blocked: the child starts with them blocked (the
    mask is inherited) and lets them in once its own handlers are set; this
    thread gets a stop that came meanwhile as soon as the fork is done."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
    try:
        return start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


class RunningFlag:
    """Whether a supervised child runs, in memory shared with every process
    forked after it is made: the master writes it, the API workers read it
    for ``/healthcheck``."""

    def __init__(self) -> None:
        self._value = multiprocessing.get_context("fork").RawValue("b", 0)

    def set(self, running: bool) -> None:
        self._value.value = 1 if running else 0

    def __bool__(self) -> bool:
        return bool(self._value.value)


class Supervised:
    """One child process of the master, started again whenever it dies until
    ``stop``; watched from a thread of the master. ``running`` goes down
    when the child dies; the child raises it once it serves."""

    def __init__(self, name: str, start: Callable[[], multiprocessing.Process],
                 backoff: Backoff, running: RunningFlag | None = None) -> None:
        self.name, self._start, self.backoff = name, start, backoff
        self.running = running if running is not None else RunningFlag()
        self.process: multiprocessing.Process | None = None
        self._stopping = threading.Event()
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._watch, name=f"supervise-{name}",
                                        daemon=True)

    def start(self) -> "Supervised":
        self._spawn()
        self._thread.start()
        return self

    def _spawn(self) -> None:
        self.process = start_with_stops_held(self._start)
        self.started = time.monotonic()
        LOG.info("%s started (pid %s)", self.name, self.process.pid)

    def _watch(self) -> None:
        while not self._stopping.is_set():
            assert self.process is not None
            wait([self.process.sentinel, self._wake_r])
            if self._stopping.is_set():
                return
            self.process.join()
            self.running.set(False)
            delay = self.backoff.after_death(time.monotonic() - self.started)
            LOG.error("%s (pid %s) died: %s; starting it again in %.1f s", self.name,
                      self.process.pid, exit_status(self.process.exitcode), delay)
            metrics.process_died(self.process.pid)
            if wait([self._wake_r], delay) or self._stopping.is_set():
                return
            self._spawn()

    def stop(self, grace: float) -> None:
        """Stop watching, then the child: SIGTERM, and SIGKILL after ``grace``."""
        self._stopping.set()
        os.write(self._wake_w, b"x")
        if self._thread.is_alive():
            self._thread.join()
        process = self.process
        if process is None or process.exitcode is not None:
            return
        process.terminate()
        process.join(grace)
        if process.is_alive():
            LOG.error("the %s did not stop in %s s; killed", self.name, grace)
            process.kill()
            process.join()
