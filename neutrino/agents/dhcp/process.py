"""The dnsmasq process of one network (adapter): start it in its namespace,
tell it to re-read its files (SIGHUP re-reads the hosts, addn-hosts and
options files), stop it. The pid file is the only state; a pid is believed
only while ``/proc/<pid>/cmdline`` still names that pid file, so a recycled
pid is never signalled. The metadata proxies are daemons of the same
kind (``name`` says which in errors).
"""
from __future__ import annotations

import os
import signal
import subprocess

from neutrino.agents import netns
from neutrino.agents.pidfile import pid_of, terminate


class DnsmasqError(RuntimeError):
    pass


class DnsmasqProcess:
    def __init__(self, pid_file: str, namespace: str | None, name: str = "dnsmasq") -> None:
        self.pid_file = pid_file
        self.namespace = namespace
        self.name = name

    @property
    def pid(self) -> int | None:
        return pid_of(self.pid_file, f"--pid-file={self.pid_file}")

    @property
    def active(self) -> bool:
        return self.pid is not None

    def start(self, argv: list[str]) -> None:
        """Run dnsmasq; it daemonises once its sockets are bound and the pid
        file written, so a zero exit means it serves. Forked from a thread
        inside the namespace (``netns.run_in``): no ``ip netns exec`` process."""
        def run() -> subprocess.CompletedProcess[str]:
            return subprocess.run(argv, capture_output=True, text=True)
        try:
            done = netns.run_in(self.namespace, run) if self.namespace else run()
        except OSError as exc:  # no such namespace, or no such executable
            raise DnsmasqError(f"{self.name} failed: {exc}") from exc
        if done.returncode:
            raise DnsmasqError(f"{self.name} failed ({done.returncode}): {done.stderr.strip()}")

    def reload(self) -> bool:
        """SIGHUP; False when no dnsmasq runs."""
        pid = self.pid
        if pid is None:
            return False
        os.kill(pid, signal.SIGHUP)
        return True

    def stop(self, timeout: float = 5) -> None:
        pid = self.pid
        if pid is not None:
            terminate(pid, lambda: self.pid is not None, timeout)
