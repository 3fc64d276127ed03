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
outside the namespace: a unix socket is a file; under ``/run/neutrino-lbaas``
when the state directory is too deep for a socket's path), ``ping.sh``,
``certs/`` and ``udp.nft`` (the UDP listeners' table as last applied).

UDP and SCTP listeners are nftables' table ``inet neutrino_lb`` in the namespace,
replaced in one ``nft -f`` transaction; the namespace forwards (the
datagrams go on to the members). Their members' checks run in the
namespace as ``python -m neutrino.agents.loadbalancer.probe``.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from neutrino.agents.interface import InterfaceDriver
from neutrino.agents.l3.linux import LinuxHost, run
from neutrino.agents.loadbalancer import haproxy_config, health, keepalived, nft_udp
from neutrino.agents.loadbalancer.host import LbHost
from neutrino.agents.loadbalancer.plan import (
    DEVICE_PREFIX,
    Deployment,
    Observed,
    files_for,
    namespace,
    stats_socket,
)
from neutrino.agents.loadbalancer.udp_health import Check
from neutrino.agents.pidfile import pid_of, terminate

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
        self.socket = Path(stats_socket(str(state_dir)))

    def pid(self) -> int | None:
        """The master's pid (see ``_pid_of``)."""
        return pid_of(self.pid_file, str(self.config))

    def check(self, path: Path) -> None:
        done = subprocess.run([HAPROXY, "-c", "-f", str(path)], capture_output=True,
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
        self.socket.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
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
        """SIGUSR2 to the master; returns once the new worker answers (the old
        one, finishing its connections, no longer takes new ones), so a change
        reported done is in effect."""
        pid = self.pid()
        if pid is None:
            self.start()
            return
        before = self.worker_pid()
        os.kill(pid, signal.SIGUSR2)
        deadline = time.monotonic() + STOP_WAIT_S
        while time.monotonic() < deadline:
            now = self.worker_pid()
            if now is not None and now != before:
                return
            time.sleep(0.05)
        LOG.warning("haproxy of %s: no new worker after a reload", self.ns)

    def worker_pid(self) -> int | None:
        """The pid of the worker answering the stats socket."""
        for line in (self._ask("show info") or "").splitlines():
            if line.startswith("Pid:"):
                try:
                    return int(line.split(":", 1)[1])
                except ValueError:
                    return None
        return None

    def stop(self) -> None:
        pid = self.pid()
        if pid is not None:
            terminate(pid, lambda: self.pid() is not None, STOP_WAIT_S)

    def show_stat(self) -> str | None:
        return self._ask("show stat")

    def _ask(self, command: str) -> str | None:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(5)
                sock.connect(str(self.socket))
                sock.sendall(command.encode() + b"\n")
                chunks = []
                while chunk := sock.recv(65536):
                    chunks.append(chunk)
        except OSError:
            return None
        return b"".join(chunks).decode(errors="replace")


class KeepalivedProcess:
    """The keepalived of an ACTIVE_STANDBY load balancer, beside its haproxy."""

    def __init__(self, state_dir: Path, ns: str) -> None:
        self.ns = ns
        self.config = state_dir / "keepalived.conf"
        self.pid_file = state_dir / "keepalived.pid"
        self.vrrp_pid_file = state_dir / "keepalived-vrrp.pid"
        self.check = state_dir / "check.sh"

    def pid(self) -> int | None:
        return pid_of(self.pid_file, str(self.config))

    def ensure(self, text: str, haproxy_pid_file: Path) -> None:
        """Running with ``text``: started, or told to re-read it when it changed."""
        self.check.write_text(keepalived.check_script(str(haproxy_pid_file)))
        self.check.chmod(0o700)
        changed = not self.config.exists() or self.config.read_text() != text
        if changed:
            self.config.write_text(text)
        pid = self.pid()
        if pid is None:
            run(["ip", "netns", "exec", self.ns, "keepalived", "-P", "-f", str(self.config),
                 "-p", str(self.pid_file), "-r", str(self.vrrp_pid_file)])
        elif changed:
            os.kill(pid, signal.SIGHUP)


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
            vrrp = KeepalivedProcess(entry, ns)
            out[lb_id] = Observed(
                namespace=ns in spaces, running=proc.pid() is not None,
                config=proc.config.read_text() if proc.config.exists() else None,
                device=device,
                keepalived=vrrp.config.read_text() if vrrp.pid() is not None else None,
                udp=(entry / "udp.nft").read_text() if (entry / "udp.nft").exists() else "")
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
            if deployment.vip and cidr.split("/")[0] == deployment.vip:
                continue  # keepalived's, on the master
            self.ip.delete_address(ns, deployment.device, cidr)
        for gateway in deployment.gateways:
            default = "default" if ":" not in gateway else "::/0"
            self.ip.replace_route(ns, default, gateway, deployment.device)
        if self.garps:
            self.ip.announce(ns, deployment.device,
                             [a.split("/")[0] for a in deployment.addresses if ":" not in a])
        if deployment.keepalived:  # the backup's haproxy binds the VIP it does not hold
            run(["ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.ip_nonlocal_bind=1"])
        self._write_files(deployment)
        proc = self._haproxy(deployment.lb_id)
        changed = proc.install(deployment.config)
        if proc.pid() is None:
            proc.start()
        elif changed:
            proc.reload()
        if deployment.keepalived:
            KeepalivedProcess(state, ns).ensure(deployment.keepalived, proc.pid_file)
        self._apply_udp(deployment)
        self._remember_vip(deployment)

    def reload(self, deployment: Deployment) -> None:
        self._write_files(deployment)
        proc = self._haproxy(deployment.lb_id)
        if proc.install(deployment.config) or proc.pid() is None:
            proc.reload()
        if deployment.keepalived:
            KeepalivedProcess(self.root / deployment.lb_id, deployment.namespace).ensure(
                deployment.keepalived, proc.pid_file)
        self._apply_udp(deployment)
        self._remember_vip(deployment)

    def _apply_udp(self, deployment: Deployment) -> None:
        """The UDP listeners' table as the deployment has it (none: removed)."""
        ns, path = deployment.namespace, self.root / deployment.lb_id / "udp.nft"
        if deployment.udp:
            self.ip.enable_forwarding(ns)
            counts = health.nft_counters(self._counters(ns)) if path.exists() else {}
            run(["ip", "netns", "exec", ns, "nft", "-f", "-"],
                stdin=nft_udp.replace_script(nft_udp.with_counters(deployment.udp, counts)))
            path.write_text(deployment.udp)
        elif path.exists():
            run(["ip", "netns", "exec", ns, "nft", "delete", "table", nft_udp.FAMILY,
                 nft_udp.TABLE], check=False)
            path.unlink()

    def _remember_vip(self, deployment: Deployment) -> None:
        """Which address makes this host the master (statistics come from it only)."""
        path = self.root / deployment.lb_id / "vip"
        if deployment.vip:
            path.write_text(deployment.vip)
        else:
            path.unlink(missing_ok=True)

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
        self._haproxy(lb_id).socket.unlink(missing_ok=True)
        shutil.rmtree(self.root / lb_id, ignore_errors=True)

    def _master(self, lb_id: str) -> bool:
        """Whether this host holds the VIP (always, but in an ACTIVE_STANDBY pair)."""
        vip = self.root / lb_id / "vip"
        if vip.exists():
            address = vip.read_text().strip()
            held = run(["ip", "-n", namespace(lb_id), "-o", "addr", "show"], check=False)
            return f" {address}/" in held
        return True

    def stats(self, lb_id: str) -> str | None:
        """haproxy's statistics; of an ACTIVE_STANDBY pair only the master's
        (the backup's would overwrite its counters with its own idle ones)."""
        if not self._master(lb_id):
            return None
        return self._haproxy(lb_id).show_stat()

    def probe(self, lb_id: str, checks: list[Check]) -> dict[str, bool]:
        if not checks:
            return {}
        argv = ["ip", "netns", "exec", namespace(lb_id), sys.executable, "-m",
                "neutrino.agents.loadbalancer.probe"]
        wait = max(c.timeout for c in checks) + 10
        done = subprocess.run(argv, input=json.dumps([dataclasses.asdict(c) for c in checks]),
                              capture_output=True, text=True, timeout=wait)
        if done.returncode:
            raise RuntimeError(f"probes of {lb_id} failed: {done.stderr.strip()}")
        return {str(k): bool(v) for k, v in json.loads(done.stdout or "{}").items()}

    @staticmethod
    def _counters(ns: str) -> str:
        return run(["ip", "netns", "exec", ns, "nft", "-j", "list", "counters", "table",
                    nft_udp.FAMILY, nft_udp.TABLE], check=False)

    def udp_stats(self, lb_id: str) -> tuple[str, str] | None:
        if not (self.root / lb_id / "udp.nft").exists() or not self._master(lb_id):
            return None
        ns = namespace(lb_id)
        counters = self._counters(ns)
        flows = run(["ip", "netns", "exec", ns, "cat", "/proc/net/nf_conntrack"], check=False)
        return counters, flows
