"""The host side of security-group logging: read br-int's packet-ins, write
the log file.

``ovs-ofctl monitor <bridge> 65534`` is a service connection to the
switch that asks for whole packets and prints each packet-in; a thread
reads them, keeps those the rate limit allows (``netlog.RateLimit`` on the
monotonic clock) and writes upstream's line for each to ``[network_log]
local_output_log_base`` (reopened if rotated away), or to syslog without
one. The agent hands it the cookies of its log flows after every pass. A
monitor that dies is started again while the agent runs.
"""
from __future__ import annotations

import logging
import logging.handlers
import subprocess
import threading
import time
from typing import Callable, Iterable, Iterator

from neutrino.agents.ovs import netlog

LOG = logging.getLogger(__name__)
# Upstream's logger name, so the lines read as upstream's driver writes them.
PACKETS = "neutron.services.logapi.drivers.openvswitch.ovs_firewall_log"
FORMAT = "%(asctime)s.%(msecs)03d %(process)d %(levelname)s %(name)s [-] %(message)s"
DATE_FORMAT = "%Y-%m-%d %H:%M:%S"
RESTART_WAIT = 1.0

LineSource = Callable[[], Iterable[str]]


def packet_logger(path: str | None) -> logging.Logger:
    """The logger the packet lines go to: the file, else syslog; never the
    agent's own log."""
    logger = logging.getLogger(PACKETS)
    logger.propagate = False
    logger.setLevel(logging.INFO)
    for old in list(logger.handlers):
        logger.removeHandler(old)
        old.close()
    handler: logging.Handler = (logging.handlers.WatchedFileHandler(path) if path
                                else logging.handlers.SysLogHandler("/dev/log"))
    handler.setFormatter(logging.Formatter(FORMAT, DATE_FORMAT))
    logger.addHandler(handler)
    return logger


class OfctlMonitor:
    """``ovs-ofctl monitor``'s output lines, while its process lives."""

    def __init__(self, bridge: str) -> None:
        self.bridge = bridge
        self.proc: subprocess.Popen[str] | None = None

    def __call__(self) -> Iterator[str]:
        # Line-buffered (ovs-ofctl's output to a pipe otherwise waits for a full
        # buffer); its diagnostics share the pipe, which the parser skips: with
        # stderr sent to /dev/null no packet-in was printed.
        self.proc = subprocess.Popen(
            ["stdbuf", "-oL", "ovs-ofctl", "monitor", self.bridge, "65534"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True)
        assert self.proc.stdout is not None
        yield from self.proc.stdout
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class PacketLog:
    """Packet-ins of log flows to log lines, rate-limited."""

    def __init__(self, rate: int, burst: int, logger: logging.Logger,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = netlog.RateLimit.full(rate, burst)
        self.logger = logger
        self.clock = clock
        self.cookies: dict[int, netlog.CookieEntry] = {}

    def handle(self, lines: Iterable[str]) -> None:
        for pkt in netlog.packet_ins(lines):
            allowed, self.limit = self.limit.take(self.clock())
            if not allowed:
                continue
            entry = self.cookies.get(pkt.cookie)
            if entry is None:
                self.logger.warning(netlog.record(None, pkt))
            else:
                self.logger.info(netlog.record(entry, pkt))


class PacketLogReader:
    """The thread that feeds ``PacketLog`` from a line source, restarting it."""

    def __init__(self, log: PacketLog, source: LineSource,
                 stop_source: Callable[[], None] = lambda: None) -> None:
        self.log = log
        self.source = source
        self.stop_source = stop_source
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="packet-log", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.log.handle(self.source())
            except Exception:  # noqa: BLE001 - the monitor is started again
                LOG.exception("reading packet-ins failed")
            self._stop.wait(RESTART_WAIT)

    def stop(self) -> None:
        self._stop.set()
        self.stop_source()
        self._thread.join(10)
