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
only here) accept and keep nothing, as neutrino's own agent skips that rule.
"""
from __future__ import annotations

import os
import shutil
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
}


def missing_reason() -> str | None:
    """Why upstream's agents cannot run here, or None."""
    for binary in ("neutron-dhcp-agent", "privsep-helper"):
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


def log_tail(host: Host, name: str, lines: int = 40) -> str:
    path = host.dir / name
    if not path.exists():
        return f"(no {name})"
    found = [ln for ln in path.read_text().splitlines()
             if "ERROR" in ln or "WARNING" in ln or "Traceback" in ln or not ln[:4].isdigit()]
    return f"--- {name}\n" + "\n".join(found[-lines:]) + "\n" + sh(
        "ip", "netns", "list").stdout
