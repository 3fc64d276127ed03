"""The agent's handle on its one shared metadata proxy (adapter over files).

``ensure``/``stop`` write or remove the network's file in the proxy's
desired directory and, when that changed anything, send the proxy SIGHUP
(starting it first if none runs); a converge that changes nothing costs a
file read and no signal. ``wanted`` is what this host should serve (so a
restarted agent finds networks it served before), ``running`` what the
proxy reports it listens for. Files live under
``<state_path>/external/``, beside the per-router proxies' pid files.
"""
from __future__ import annotations

import os
import signal
import sys
import threading

from neutrino.agents.dhcp.process import DnsmasqProcess
from neutrino.agents.files import read_text, write_atomic
from neutrino.agents.pidfile import cmdline

NAME = "metadata-namespaces"


class SharedMetadataProxy:
    def __init__(self, state_path: str, socket_path: str) -> None:
        external = os.path.join(os.path.abspath(state_path), "external")
        self.desired_dir = os.path.join(external, NAME)
        self.served_file = os.path.join(external, f"{NAME}.served")
        self.pid_file = os.path.join(external, "pids", f"{NAME}.pid")
        self.socket_path = os.path.abspath(socket_path)
        # the sync's threads converge networks in parallel: one of them starts the proxy
        self._starting = threading.Lock()

    def argv(self) -> list[str]:
        return [sys.executable, "-m", "neutrino.agents.metadata.shared_proxy",
                f"--desired-dir={self.desired_dir}", f"--served-file={self.served_file}",
                f"--socket={self.socket_path}", f"--pid-file={self.pid_file}",
                f"--log-file={self.pid_file[:-4]}.log"]

    def _process(self) -> DnsmasqProcess:
        return DnsmasqProcess(self.pid_file, None, name="metadata proxy")

    def _pid(self) -> int | None:
        """The proxy's pid if it runs with this command line (another
        metadata socket: it is stopped and started again)."""
        proc = self._process()
        pid = proc.pid
        if pid is None:
            return None
        args = cmdline(pid)
        if args is not None and args[1:] == self.argv()[1:]:
            return pid
        proc.stop()
        return None

    def _signal(self) -> None:
        with self._starting:
            pid = self._pid()
            if pid is None:
                os.makedirs(os.path.dirname(self.pid_file), exist_ok=True)
                self._process().start(self.argv())  # it reads every file as it starts
                return
        try:
            os.kill(pid, signal.SIGHUP)
        except ProcessLookupError:  # it ended since: start one
            self._signal()

    def ensure(self, uuid: str, namespace: str, bind_address: str, port: int) -> None:
        spec = f"{namespace}\n{bind_address}\n{port}\n"
        path = os.path.join(self.desired_dir, uuid)
        if read_text(path) == spec and self._pid() is not None:
            return
        os.makedirs(self.desired_dir, exist_ok=True)
        write_atomic(path, spec)
        self._signal()

    def stop(self, uuid: str) -> None:
        try:
            os.unlink(os.path.join(self.desired_dir, uuid))
        except FileNotFoundError:
            return
        if self._pid() is not None:
            self._signal()

    def wanted(self) -> list[str]:
        try:
            names = os.listdir(self.desired_dir)
        except FileNotFoundError:
            return []
        return sorted(n for n in names if not n.endswith(".tmp"))

    def running(self) -> list[str]:
        """The networks the proxy listens for (none when it is not running)."""
        if self._process().pid is None:
            return []
        return sorted((read_text(self.served_file) or "").split())

    def shutdown(self) -> None:
        """Stop the proxy process (its files stay: a new one serves them again)."""
        self._process().stop()
