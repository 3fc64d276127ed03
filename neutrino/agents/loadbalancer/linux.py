"""The load-balancer agent's host adapter: namespaces and the VIP device
through ``ip`` and the interface driver, haproxy (Debian's ``haproxy``)
in master-worker mode.

haproxy runs as ``haproxy -W -D``: the master keeps the pid file and the
listening sockets, its worker serves. A reload is SIGUSR2 to the master,
which starts a worker on the new configuration (handing it the listening
sockets through the stats socket's ``expose-fd listeners``) and lets the
old worker finish the connections it has: a change never cuts a download.
A configuration is checked (``haproxy -c``) before it replaces the one in
use, so a bad one leaves the load balancer serving as before.

Each load balancer's files live in ``<loadbalancer_state_path>/<id>/``:
``haproxy.cfg``, ``haproxy.pid``, ``haproxy.sock`` (statistics, read from
outside the namespace: a unix socket is a file), ``ping.sh`` and
``certs/``.
"""
from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from neutrino.agents.interface import InterfaceDriver
from neutrino.agents.l3.linux import LinuxHost, run
from neutrino.agents.loadbalancer import haproxy_config
from neutrino.agents.loadbalancer.host import LbHost
from neutrino.agents.loadbalancer.plan import (
    DEVICE_PREFIX,
    Deployment,
    Observed,
    files_for,
    namespace,
)

LOG = logging.getLogger(__name__)
HAPROXY = "haproxy"
STOP_WAIT_S = 10.0


class HaproxyError(RuntimeError):
    pass


class Haproxy:
    """One load balancer's haproxy master, known by its pid file."""

    def __init__(self, state_dir: Path, ns: str) -> None:
        self.dir = state_dir
        self.ns = ns
        self.config = state_dir / "haproxy.cfg"
        self.pid_file = state_dir / "haproxy.pid"
        self.socket = state_dir / "haproxy.sock"

    def pid(self) -> int | None:
        """The master's pid, believed only while its command line names this
        configuration (a recycled pid is never signalled)."""
        try:
            pid = int(self.pid_file.read_text().split()[0])
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except (OSError, ValueError, IndexError):
            return None
        return pid if str(self.config) in cmdline else None

    def check(self, path: Path) -> None:
        done = subprocess.run([HAPROXY, "-c", "-q", "-f", str(path)], capture_output=True,
                              text=True, timeout=30)
        if done.returncode:
            raise HaproxyError(f"haproxy refuses {path}: {(done.stderr or done.stdout).strip()}")

    def install(self, text: str) -> bool:
        """Put ``text`` in place once haproxy accepts it; whether it changed."""
        if self.config.exists() and self.config.read_text() == text:
            return False
        new = self.config.with_suffix(".new")
        new.write_text(text)
        try:
            self.check(new)
        except HaproxyError:
            new.unlink(missing_ok=True)
            raise
        new.replace(self.config)
        return True

    def start(self) -> None:
        done = subprocess.run(["ip", "netns", "exec", self.ns, HAPROXY, "-W", "-D",
                               "-f", str(self.config), "-p", str(self.pid_file)],
                              capture_output=True, text=True, timeout=30)
        if done.returncode:
            raise HaproxyError(f"haproxy did not start ({done.returncode}): "
                               f"{done.stderr.strip()}")
        deadline = time.monotonic() + STOP_WAIT_S
        while not self.socket.exists() and time.monotonic() < deadline:
            time.sleep(0.05)

    def reload(self) -> None:
        pid = self.pid()
        if pid is None:
            self.start()
            return
        os.kill(pid, signal.SIGUSR2)

    def stop(self) -> None:
        pid = self.pid()
        if pid is None:
            return
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_WAIT_S
        while self.pid() is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        if self.pid() is not None:
            os.kill(pid, signal.SIGKILL)

    def show_stat(self) -> str | None:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(5)
                sock.connect(str(self.socket))
                sock.sendall(b"show stat\n")
                chunks = []
                while chunk := sock.recv(65536):
                    chunks.append(chunk)
        except OSError:
            return None
        return b"".join(chunks).decode(errors="replace")


class LinuxLbHost(LbHost):
    def __init__(self, state_path: str, interface: InterfaceDriver, garps: int = 1,
                 ip: LinuxHost | None = None) -> None:
        self.root = Path(state_path)
        self.interface = interface
        self.garps = garps
        self.ip = ip or LinuxHost()

    def _haproxy(self, lb_id: str) -> Haproxy:
        return Haproxy(self.root / lb_id, namespace(lb_id))

    def observe(self) -> dict[str, Observed]:
        if not self.root.is_dir():
            return {}
        spaces = set(self.ip.namespaces())
        out = {}
        for entry in self.root.iterdir():
            if not entry.is_dir():
                continue
            lb_id, ns = entry.name, namespace(entry.name)
            proc = self._haproxy(lb_id)
            device = None
            if ns in spaces:
                device = next((d for d in self.ip.links(ns) if d.startswith(DEVICE_PREFIX)),
                              None)
            out[lb_id] = Observed(
                namespace=ns in spaces, running=proc.pid() is not None,
                config=proc.config.read_text() if proc.config.exists() else None,
                device=device)
        return out

    def _write_files(self, deployment: Deployment) -> None:
        state = self.root / deployment.lb_id
        certs = Path(files_for(str(state)).certs_dir)
        if certs.exists():  # certificates of listeners gone or replaced go too
            shutil.rmtree(certs)
        for rel, content in deployment.files:
            path = state / rel
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            path.write_text(content)
            path.chmod(0o600)
        ping = Path(files_for(str(state)).ping_script)
        if not ping.exists():
            ping.write_text(haproxy_config.PING_SCRIPT)
            ping.chmod(0o755)

    def build(self, deployment: Deployment) -> None:
        state = self.root / deployment.lb_id
        state.mkdir(parents=True, exist_ok=True, mode=0o700)
        ns = deployment.namespace
        self.ip.ensure_namespace(ns)
        self.interface.plug(deployment.network_id, deployment.port_id, deployment.device,
                            deployment.mac_address, namespace=ns, mtu=deployment.mtu)
        have = self.ip.addresses(ns, deployment.device)
        for cidr in sorted(set(deployment.addresses) - have):
            self.ip.add_address(ns, deployment.device, cidr)
        for cidr in sorted(have - set(deployment.addresses)):
            self.ip.delete_address(ns, deployment.device, cidr)
        for gateway in deployment.gateways:
            default = "default" if ":" not in gateway else "::/0"
            self.ip.replace_route(ns, default, gateway, deployment.device)
        if self.garps:
            self.ip.announce(ns, deployment.device,
                             [a.split("/")[0] for a in deployment.addresses if ":" not in a])
        self._write_files(deployment)
        proc = self._haproxy(deployment.lb_id)
        changed = proc.install(deployment.config)
        if proc.pid() is None:
            proc.start()
        elif changed:
            proc.reload()

    def reload(self, deployment: Deployment) -> None:
        self._write_files(deployment)
        proc = self._haproxy(deployment.lb_id)
        if proc.install(deployment.config) or proc.pid() is None:
            proc.reload()

    def teardown(self, lb_id: str, device: str | None) -> None:
        ns = namespace(lb_id)
        self._haproxy(lb_id).stop()
        spaces = set(self.ip.namespaces())
        if ns in spaces:
            devices = [device] if device else [
                d for d in self.ip.links(ns) if d.startswith(DEVICE_PREFIX)]
            for name in devices:
                self.interface.unplug(name, ns)
            # draining workers of earlier reloads go with the namespace
            for pid in run(["ip", "netns", "pids", ns], check=False).split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (OSError, ValueError):
                    pass
            self.ip.delete_namespace(ns)
        elif device:
            self.interface.unplug(device, None)
        shutil.rmtree(self.root / lb_id, ignore_errors=True)

    def stats(self, lb_id: str) -> str | None:
        return self._haproxy(lb_id).show_stat()
