"""The namespace metadata proxies one agent runs (adapter over their pid files).

The L3 agent runs one per router (``--router-id``), the DHCP agent one per
network with isolated metadata (``--network-id``); pid files are
``<state_path>/external/pids/<id>.pid`` as upstream's. A proxy is believed
running only while its process still names that pid file and this kind of
id, so one agent never stops the other's. ``ensure`` restarts a proxy
whose command line differs (another port or socket); ``reap`` stops the
ones of routers or networks no longer served (a resync after a restart).
"""
from __future__ import annotations

import os
import sys

from neutrino.agents.dhcp.process import DnsmasqProcess
from neutrino.agents.pidfile import cmdline

ROUTER, NETWORK = "router", "network"


class MetadataProxies:
    def __init__(self, state_path: str, socket_path: str, kind: str) -> None:
        if kind not in (ROUTER, NETWORK):
            raise ValueError(kind)
        self.pids_dir = os.path.join(os.path.abspath(state_path), "external", "pids")
        self.socket_path = os.path.abspath(socket_path)
        self.kind = kind

    def pid_file(self, uuid: str) -> str:
        return os.path.join(self.pids_dir, f"{uuid}.pid")

    def argv(self, uuid: str, bind_address: str, port: int) -> list[str]:
        pid_file = self.pid_file(uuid)
        return [sys.executable, "-m", "neutrino.agents.metadata.ns_proxy",
                f"--{self.kind}-id={uuid}", f"--bind-address={bind_address}",
                f"--port={port}", f"--socket={self.socket_path}", f"--pid-file={pid_file}",
                f"--log-file={pid_file[:-4]}.log"]

    def _process(self, uuid: str, namespace: str | None = None) -> DnsmasqProcess:
        return DnsmasqProcess(self.pid_file(uuid), namespace, name="metadata proxy")

    def _cmdline(self, uuid: str) -> list[str] | None:
        pid = self._process(uuid).pid
        if pid is None:
            return None
        args = cmdline(pid)
        return args if args is not None and f"--{self.kind}-id={uuid}" in args else None

    def running(self) -> list[str]:
        """The ids whose proxy of this kind runs."""
        try:
            names = os.listdir(self.pids_dir)
        except FileNotFoundError:
            return []
        ids = [n[:-4] for n in names if n.endswith(".pid")]
        return sorted(i for i in ids if self._cmdline(i) is not None)

    def ensure(self, uuid: str, namespace: str | None, bind_address: str, port: int) -> None:
        wanted = self.argv(uuid, bind_address, port)
        have = self._cmdline(uuid)
        if have is not None and have[1:] == wanted[1:]:
            return
        if have is not None:
            self._process(uuid).stop()
        os.makedirs(self.pids_dir, exist_ok=True)
        self._process(uuid, namespace).start(wanted)

    def stop(self, uuid: str) -> None:
        if self._cmdline(uuid) is not None:
            self._process(uuid).stop()
        for path in (self.pid_file(uuid), self.pid_file(uuid)[:-4] + ".log"):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass

    def reap(self, keep: set[str]) -> list[str]:
        """Stop the proxies of ids not in ``keep``; which were stopped."""
        gone = [i for i in self.running() if i not in keep]
        for uuid in gone:
            self.stop(uuid)
        return gone
