"""Upstream Neutron's own agents (PyPI ``neutron``, from the venv the
upstream anchor builds: ``../shared/anchors/upstream-neutron/start.sh``) on
an emulated host, as an operator switching their server to neutrino would
keep running them.

An upstream agent runs inside the host's network namespace, entered with
``nsenter`` (its interface driver finds the internal ports the host's
userspace switch makes there; the namespaces it makes are the machine's,
as neutrino's agents' are), started by one ``start_agent``; a DHCP agent's
dnsmasqs, which outlive it, are ended by PID after it; the
machine's RabbitMQ accepts ``guest`` only from loopback, so the host's
loopback port 5672 is forwarded (socat, through a UNIX socket) to the
machine's. The host lacks what upstream's agents assume of a distribution:
``sudo`` (oslo.privsep calls it even as root) is a pass-through, and
``iptables-save``/``-restore`` (the DHCP agent's UDP checksum rule; nftables
only here) accept and keep nothing, as neutrino's own agent skips that rule;
``conntrack`` (the OVS firewall's flush of the kernel's entries, which a
userspace switch does not use) does nothing.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

from tests import upstream_venv
from tests.fullstack.hosts import Fabric, Host, sh
from tests.waiting import wait_for

VENV = upstream_venv.PATH  # built by the upstream_neutron fixture
SHIMS = {
    "sudo": '#!/bin/sh\nwhile [ "${1#-}" != "$1" ]; do shift; done\nexec "$@"\n',
    "iptables-save": "#!/bin/sh\nexit 0\n",
    "ip6tables-save": "#!/bin/sh\nexit 0\n",
    "iptables-restore": "#!/bin/sh\ncat >/dev/null\nexit 0\n",
    "ip6tables-restore": "#!/bin/sh\ncat >/dev/null\nexit 0\n",
    # the OVS firewall flushes kernel conntrack entries of changed rules; a
    # userspace (netdev) switch keeps its own, which the tool never sees
    "conntrack": "#!/bin/sh\nexit 0\n",
}


def missing_reason() -> str | None:
    """Why upstream's agents cannot run here, or None (their venv is the
    ``upstream_neutron`` fixture's, built when missing)."""
    if shutil.which("socat") is None:
        return "socat is not installed (Debian: socat)"
    return None


def enter(host: Host) -> list[str]:
    """The prefix that runs a command in ``host``'s network namespace only
    (nsenter, as neutrino's interface driver enters a host's switch). Not
    ``ip netns exec``: its private mount namespace would hide the namespaces
    an agent makes (``qdhcp-``) from the machine, and so from the cleanup."""
    return ["nsenter", f"--net=/run/netns/{host.ns}"]


def forward_bus(fabric: Fabric, host: Host) -> None:
    """The host's 127.0.0.1:5672 reaches the machine's RabbitMQ (once a host)."""
    sock = host.dir / "amqp.sock"
    if sock.exists():
        return
    outside = subprocess.Popen(["socat", f"UNIX-LISTEN:{sock},fork,unlink-early",
                                "TCP:127.0.0.1:5672"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    fabric.procs.append(outside)
    assert wait_for(sock.exists, 10)
    inside = subprocess.Popen([*enter(host), "socat",
                               "TCP-LISTEN:5672,bind=127.0.0.1,reuseaddr,fork",
                               f"UNIX-CONNECT:{sock}"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    fabric.procs.append(inside)


def shim_dir(host: Host) -> Path:
    path = host.dir / "upstream-bin"
    path.mkdir(exist_ok=True)
    for name, text in SHIMS.items():
        (path / name).write_text(text)
        (path / name).chmod(0o755)
    return path


def state_dir(host: Host, kind: str) -> Path:
    """Where upstream's ``kind`` agent of ``host`` keeps its state (a
    ``Fabric.public_dir``, made with the agent's file)."""
    return Path(f"/tmp/{host.fabric.prefix}-{host.name}-up{kind}")


def agent_conf(host: Host, vhost: str, kind: str, sections: str, defaults: str = "") -> Path:
    """Upstream's ``kind`` agent's file: what every agent of ``host`` says
    (its host name, the bus on the host's loopback, its log and state
    directory, its lock path), ``defaults`` (more ``[DEFAULT]`` lines) and
    ``sections``."""
    state = host.fabric.public_dir(f"{host.name}-up{kind}")
    assert state == state_dir(host, kind)
    (state / "lock").mkdir()
    path = host.dir / f"upstream-{kind}-agent.conf"
    path.write_text(
        f"[DEFAULT]\nhost = {host.hostname}\n"
        f"transport_url = rabbit://guest:guest@127.0.0.1:5672/{vhost}\n"
        f"debug = true\nlog_file = {host.dir / f'upstream-{kind}-agent.log'}\n"
        f"state_path = {state}\n{defaults}{sections}"
        f"[oslo_concurrency]\nlock_path = {state / 'lock'}\n")
    return path


def switch(host: Host) -> str:
    """The host's switch as an upstream agent's ``[ovs]`` section names it."""
    return f"ovsdb_connection = unix:{host.dir / 'db.sock'}\nintegration_bridge = br-int\n"


def start_agent(fabric: Fabric, host: Host, kind: str, binary: str,
                conf: Path) -> subprocess.Popen[bytes]:
    """Upstream's ``binary`` inside ``host``'s network namespace, reaching
    the bus through the host's loopback, the shims first on its ``PATH``."""
    forward_bus(fabric, host)
    env = {**host.env, "PATH": f"{shim_dir(host)}:{VENV / 'bin'}:{os.environ['PATH']}"}
    with open(host.dir / f"upstream-{kind}-agent.out", "ab") as out:
        proc = subprocess.Popen([*enter(host), str(VENV / "bin" / binary),
                                 "--config-file", str(conf)],
                                stdout=out, stderr=out, env=env, cwd=str(host.dir))
    fabric.procs.append(proc)
    return proc


def dhcp_agent_conf(host: Host, vhost: str) -> Path:
    return agent_conf(host, vhost, "dhcp", "[AGENT]\nroot_helper =\nreport_interval = 2\n"
                      f"[OVS]\n{switch(host)}",
                      defaults="interface_driver = openvswitch\nresync_interval = 2\n")


def start_dhcp_agent(fabric: Fabric, host: Host, vhost: str) -> subprocess.Popen[bytes]:
    """``neutron-dhcp-agent`` inside ``host``'s namespace. Its dnsmasqs
    detach from it: once the agent is ended, those it started (its pid
    files say which) are ended too."""
    proc = start_agent(fabric, host, "dhcp", "neutron-dhcp-agent", dhcp_agent_conf(host, vhost))
    fabric.cleanups.append(lambda: end_dnsmasqs(host))
    return proc


def dnsmasq_pids(host: Host) -> list[int]:
    """The dnsmasqs upstream's DHCP agent of ``host`` started that still run:
    the pids in its networks' pid files whose command line names that file."""
    pids = []
    for pid_file in (state_dir(host, "dhcp") / "dhcp").glob("*/pid"):
        try:
            pid = int(pid_file.read_text().strip())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except (OSError, ValueError):
            continue
        if "dnsmasq" in cmdline and str(pid_file) in cmdline:
            pids.append(pid)
    return pids


def end_dnsmasqs(host: Host) -> None:
    """SIGKILL each, then wait until none runs (a signal is delivered, and
    the process gone, a moment after ``kill`` returns)."""
    for pid in dnsmasq_pids(host):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    wait_for(lambda: not dnsmasq_pids(host), 10)


def ovs_agent_conf(host: Host, vhost: str, local_ip: str,
                   firewall_driver: str = "openvswitch") -> Path:
    """Upstream's OVS agent of ``host``: VXLAN from ``local_ip``, the host's
    userspace switch (netdev) reached on its own database socket, and its
    OpenFlow controller on the host's loopback."""
    return agent_conf(host, vhost, "ovs",
                      "[agent]\nroot_helper =\nreport_interval = 2\npolling_interval = 1\n"
                      "tunnel_types = vxlan\n"
                      f"[ovs]\n{switch(host)}local_ip = {local_ip}\ndatapath_type = netdev\n"
                      f"[securitygroup]\nfirewall_driver = {firewall_driver}\n")


def start_ovs_agent(fabric: Fabric, host: Host, vhost: str,
                    local_ip: str) -> subprocess.Popen[bytes]:
    """``neutron-openvswitch-agent`` inside ``host``'s namespace (which holds
    ``local_ip``: the agent refuses a tunnel address no interface has)."""
    host.nsx("ip", "link", "set", "lo", "up")
    host.nsx("ip", "addr", "replace", f"{local_ip}/32", "dev", "lo")
    return start_agent(fabric, host, "ovs", "neutron-openvswitch-agent",
                       ovs_agent_conf(host, vhost, local_ip))


def log_tail(host: Host, name: str, lines: int = 40) -> str:
    path = host.dir / name
    if not path.exists():
        return f"(no {name})"
    found = [ln for ln in path.read_text().splitlines()
             if "ERROR" in ln or "WARNING" in ln or "Traceback" in ln or not ln[:4].isdigit()]
    return f"--- {name}\n" + "\n".join(found[-lines:]) + "\n" + sh(
        "ip", "netns", "list").stdout


def _anchor() -> Path:
    """The upstream anchor: ``UPSTREAM_ANCHOR``, else ``../shared/anchors``
    beside the clone (or beside the directory of worktrees holding it)."""
    if os.environ.get("UPSTREAM_ANCHOR"):
        return Path(os.environ["UPSTREAM_ANCHOR"])
    repo = Path(__file__).resolve().parents[2]
    found = [up / "shared" / "anchors" / "upstream-neutron" for up in repo.parents[:2]]
    return next((path for path in found if path.exists()), found[0])


ANCHOR = _anchor()


def server_missing_reason() -> str | None:
    """Why upstream's server cannot run here, or None."""
    reason = missing_reason()
    if reason:
        return reason
    if not (ANCHOR / "start.sh").exists():
        return f"{ANCHOR / 'start.sh'} missing (the upstream anchor)"
    if sh("mysqladmin", "ping", check=False).returncode != 0:
        return "MariaDB is not running (the anchor's database)"
    return None


class UpstreamServer:
    """Upstream's API (the anchor's ``start.sh``: uwsgi, MariaDB) and its
    ``neutron-rpc-server`` on a RabbitMQ vhost, with a database, a port and
    directories of their own; ``stop`` removes them."""

    def __init__(self, fabric: Fabric, vhost: str, port: int) -> None:
        self.fabric, self.port = fabric, port
        self.root = fabric.public_dir("upstream")
        self.db = f"neutron_{fabric.prefix}"
        self.env = {**os.environ, "NEUTRON_VENV": str(VENV), "ANCHOR_ROOT": str(self.root),
                    "NEUTRON_PORT": str(port), "DB_NAME": self.db, "WRITE_READY": "0",
                    "TRANSPORT_URL": f"rabbit://guest:guest@127.0.0.1:5672/{vhost}",
                    "TENANT_NETWORK_TYPES": "vxlan", "SERVICE_PLUGINS": "router"}
        self.conf_dir = self.root / "neutron" / "etc"
        self.url = f"http://127.0.0.1:{port}"
        self.rpc: subprocess.Popen[bytes] | None = None

    def start(self) -> "UpstreamServer":
        done = subprocess.run(["bash", str(ANCHOR / "start.sh")], env=self.env,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        # the anchor serves no agents (no RPC workers): this server does
        workers = self.conf_dir / "rpc-workers.conf"
        workers.write_text("[DEFAULT]\nrpc_workers = 1\nrpc_state_report_workers = 1\n")
        with open(self.root / "rpc-server.log", "ab") as out:
            self.rpc = subprocess.Popen(
                [str(VENV / "bin" / "neutron-rpc-server"),
                 "--config-file", str(self.conf_dir / "neutron.conf"),
                 "--config-file", str(self.conf_dir / "ml2_conf.ini"),
                 "--config-file", str(workers)],
                stdout=out, stderr=out, env=self.env, start_new_session=True)
        return self

    def stop(self) -> None:
        if self.rpc is not None and self.rpc.poll() is None:
            os.killpg(self.rpc.pid, signal.SIGTERM)  # its session: the workers it forked
            try:
                self.rpc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.rpc.pid, signal.SIGKILL)
                self.rpc.wait(10)
        subprocess.run(["bash", str(ANCHOR / "stop.sh")], env=self.env,
                       capture_output=True, timeout=120)
        subprocess.run(["mysql", "-uroot", "-e", f"DROP DATABASE IF EXISTS `{self.db}`"],
                       capture_output=True, timeout=60)

    def log_tail(self, lines: int = 30) -> str:
        path = self.root / "rpc-server.log"
        found = [ln for ln in (path.read_text().splitlines() if path.exists() else [])
                 if "ERROR" in ln or "WARNING" in ln or "Traceback" in ln]
        return "--- rpc-server.log\n" + "\n".join(found[-lines:])
