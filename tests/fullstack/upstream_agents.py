"""Upstream Neutron's own agents (PyPI ``neutron``, from the venv the
upstream anchor builds: ``../shared/anchors/upstream-neutron/start.sh``) on
an emulated host, as an operator switching their server to neutrino would
keep running them.

An upstream agent runs inside the host's namespace (its interface driver
finds the internal ports the host's userspace switch makes there); the
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

from tests.fullstack.hosts import Fabric, Host, sh
from tests.waiting import wait_for

VENV = Path(os.environ.get("NEUTRON_VENV", "/tmp/anchors/neutron-venv"))
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
    """Why upstream's agents cannot run here, or None."""
    for binary in ("neutron-dhcp-agent", "neutron-openvswitch-agent", "privsep-helper"):
        if not (VENV / "bin" / binary).exists():
            return (f"{VENV / 'bin' / binary} missing: upstream's agents come from the "
                    "anchor's venv (bash ../shared/anchors/upstream-neutron/start.sh, or "
                    "NEUTRON_VENV naming one with neutron 29 installed)")
    if shutil.which("socat") is None:
        return "socat is not installed (Debian: socat)"
    return None


def forward_bus(fabric: Fabric, host: Host) -> None:
    """The host's 127.0.0.1:5672 reaches the machine's RabbitMQ."""
    sock = host.dir / "amqp.sock"
    outside = subprocess.Popen(["socat", f"UNIX-LISTEN:{sock},fork,unlink-early",
                                "TCP:127.0.0.1:5672"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    fabric.procs.append(outside)
    assert wait_for(sock.exists, 10)
    inside = subprocess.Popen(["ip", "netns", "exec", host.ns, "socat",
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


def dhcp_agent_conf(host: Host, vhost: str) -> Path:
    state = host.fabric.public_dir(f"{host.name}-updhcp")
    (state / "lock").mkdir()
    path = host.dir / "upstream-dhcp-agent.conf"
    path.write_text(
        f"[DEFAULT]\nhost = {host.hostname}\n"
        f"transport_url = rabbit://guest:guest@127.0.0.1:5672/{vhost}\n"
        f"debug = true\nlog_file = {host.dir / 'upstream-dhcp-agent.log'}\n"
        f"state_path = {state}\ninterface_driver = openvswitch\nresync_interval = 2\n"
        "[AGENT]\nroot_helper =\nreport_interval = 2\n"
        f"[OVS]\novsdb_connection = unix:{host.dir / 'db.sock'}\nintegration_bridge = br-int\n"
        f"[oslo_concurrency]\nlock_path = {state / 'lock'}\n")
    return path


def start_dhcp_agent(fabric: Fabric, host: Host, vhost: str) -> subprocess.Popen[bytes]:
    """``neutron-dhcp-agent`` inside ``host``'s namespace."""
    forward_bus(fabric, host)
    conf = dhcp_agent_conf(host, vhost)
    env = {**host.env, "PATH": f"{shim_dir(host)}:{VENV / 'bin'}:{os.environ['PATH']}"}
    with open(host.dir / "upstream-dhcp-agent.out", "ab") as out:
        proc = subprocess.Popen(["ip", "netns", "exec", host.ns,
                                 str(VENV / "bin" / "neutron-dhcp-agent"),
                                 "--config-file", str(conf)],
                                stdout=out, stderr=out, env=env, cwd=str(host.dir))
    fabric.procs.append(proc)
    return proc


def ovs_agent_conf(host: Host, vhost: str, local_ip: str,
                   firewall_driver: str = "openvswitch") -> Path:
    """Upstream's OVS agent of ``host``: VXLAN from ``local_ip``, the host's
    userspace switch (netdev) reached on its own database socket, and its
    OpenFlow controller on the host's loopback."""
    state = host.fabric.public_dir(f"{host.name}-upovs")
    (state / "lock").mkdir()
    path = host.dir / "upstream-ovs-agent.conf"
    path.write_text(
        f"[DEFAULT]\nhost = {host.hostname}\n"
        f"transport_url = rabbit://guest:guest@127.0.0.1:5672/{vhost}\n"
        f"debug = true\nlog_file = {host.dir / 'upstream-ovs-agent.log'}\n"
        f"state_path = {state}\n"
        "[agent]\nroot_helper =\nreport_interval = 2\npolling_interval = 1\n"
        "tunnel_types = vxlan\n"
        f"[ovs]\novsdb_connection = unix:{host.dir / 'db.sock'}\nintegration_bridge = br-int\n"
        f"local_ip = {local_ip}\ndatapath_type = netdev\n"
        f"[securitygroup]\nfirewall_driver = {firewall_driver}\n"
        f"[oslo_concurrency]\nlock_path = {state / 'lock'}\n")
    return path


def start_ovs_agent(fabric: Fabric, host: Host, vhost: str,
                    local_ip: str) -> subprocess.Popen[bytes]:
    """``neutron-openvswitch-agent`` inside ``host``'s namespace (which holds
    ``local_ip``: the agent refuses a tunnel address no interface has)."""
    if not (host.dir / "amqp.sock").exists():
        forward_bus(fabric, host)
    host.nsx("ip", "link", "set", "lo", "up")
    host.nsx("ip", "addr", "replace", f"{local_ip}/32", "dev", "lo")
    conf = ovs_agent_conf(host, vhost, local_ip)
    env = {**host.env, "PATH": f"{shim_dir(host)}:{VENV / 'bin'}:{os.environ['PATH']}"}
    with open(host.dir / "upstream-ovs-agent.out", "ab") as out:
        proc = subprocess.Popen(["ip", "netns", "exec", host.ns,
                                 str(VENV / "bin" / "neutron-openvswitch-agent"),
                                 "--config-file", str(conf)],
                                stdout=out, stderr=out, env=env, cwd=str(host.dir))
    fabric.procs.append(proc)
    return proc


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
    if not (VENV / "bin" / "uwsgi").exists() or not (VENV / "bin" / "neutron-rpc-server").exists():
        return f"{VENV} has no uwsgi or neutron-rpc-server (the anchor's start.sh installs them)"
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
