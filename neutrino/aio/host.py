"""This host as the all-in-one finds it: which agents can run, and a private
Open vSwitch for them.

The switch is one ovsdb-server + ovs-vswitchd (userspace ``netdev``
datapath, as on machines without the OVS kernel module) started inside a
namespace of its own, with its run directory under ``state_path``: it never
touches a system Open vSwitch or the host's own interfaces. It is built
fresh on every start (new conf.db) and removed on stop; agents rebuild what
the database asks for with their full sync.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from neutrino.agents import iproute
from neutrino.agents.pidfile import read_pid, terminate

OVS_SCHEMA = "/usr/share/openvswitch/vswitch.ovsschema"
OVS_TOOLS = (("ovsdb-tool", "openvswitch-switch"), ("ovsdb-server", "openvswitch-switch"),
             ("ovs-vswitchd", "openvswitch-switch"), ("ovs-vsctl", "openvswitch-switch"),
             ("ovs-ofctl", "openvswitch-switch"), ("ip", "iproute2"),
             ("nsenter", "util-linux"))
AGENTS = ("ovs", "dhcp", "l3")
# run only when the configuration asks for their service: the load-balancer
# agent when the Octavia API's haproxy provider is enabled
OPTIONAL_AGENTS = ("loadbalancer",)
TITLES = {"ovs": "OVS agent", "dhcp": "DHCP agent", "l3": "L3 agent",
          "loadbalancer": "load-balancer agent"}


def _missing_tool(tools: tuple[tuple[str, str], ...]) -> str | None:
    for tool, package in tools:
        if shutil.which(tool) is None:
            return f"{tool} not found on PATH (Debian package {package})"
    return None


def skipped_agents(euid: int | None = None) -> dict[str, str]:
    """The agents that cannot run here, each with the reason."""
    euid = os.geteuid() if euid is None else euid
    if euid != 0:
        return {kind: "not running as root (namespaces and Open vSwitch need it)"
                for kind in AGENTS + OPTIONAL_AGENTS}
    ovs = _missing_tool(OVS_TOOLS) or (None if Path(OVS_SCHEMA).exists()
                                      else f"{OVS_SCHEMA} missing")
    if ovs:
        return {"ovs": ovs, "dhcp": f"needs Open vSwitch ({ovs})",
                "l3": f"needs Open vSwitch ({ovs})",
                "loadbalancer": f"needs Open vSwitch ({ovs})"}
    out = {}
    dnsmasq = _missing_tool((("dnsmasq", "dnsmasq-base"),))
    if dnsmasq:
        out["dhcp"] = dnsmasq
    nft = _missing_tool((("nft", "nftables"),))
    if nft:
        out["l3"] = nft
    haproxy = _missing_tool((("haproxy", "haproxy"), ("keepalived", "keepalived")))
    if haproxy:
        out["loadbalancer"] = haproxy
    return out


def _run(*argv: str, env: dict[str, str]) -> None:
    done = subprocess.run(list(argv), capture_output=True, text=True, env=env, timeout=60)
    if done.returncode:
        raise RuntimeError(f"{' '.join(argv)}: {done.stderr.strip()}")


class LocalSwitch:
    """The all-in-one's own Open vSwitch, in namespace ``namespace``."""

    def __init__(self, rundir: Path, namespace: str) -> None:
        self.rundir, self.namespace = rundir.resolve(), namespace
        self.env = {**os.environ, "OVS_RUNDIR": str(self.rundir),
                    "OVS_LOGDIR": str(self.rundir), "OVS_DBDIR": str(self.rundir)}

    def _in_ns(self, *argv: str) -> None:
        _run("ip", "netns", "exec", self.namespace, *argv, env=self.env)

    def start(self) -> None:
        """A fresh switch: what a crashed earlier run left is removed first;
        a namespace another process still uses is left alone (an error)."""
        ours = {pid for d in ("ovs-vswitchd", "ovsdb-server")
                if (pid := _pid(self.rundir / f"{d}.pid")) is not None}
        if iproute.namespace_exists(self.namespace):
            others = {int(p) for p in iproute.ip("netns", "pids", self.namespace,
                                                 check=False).split()} - ours
            if others:
                raise RuntimeError(f"namespace {self.namespace} is in use by processes "
                                   f"{sorted(others)} (another all-in-one?); choose "
                                   f"another with [aio] namespace")
        self.stop()
        self.rundir.mkdir(parents=True, exist_ok=True)
        db = self.rundir / "conf.db"
        db.unlink(missing_ok=True)
        _run("ovsdb-tool", "create", str(db), OVS_SCHEMA, env=self.env)
        iproute.ensure_namespace(self.namespace)
        sock = self.rundir / "db.sock"
        self._in_ns("ovsdb-server", str(db), f"--remote=punix:{sock}",
                    "--remote=db:Open_vSwitch,Open_vSwitch,manager_options",
                    "--pidfile", "--log-file", "--detach")
        _run("ovs-vsctl", "--no-wait", "init", env=self.env)
        self._in_ns("ovs-vswitchd", f"unix:{sock}", "--pidfile", "--log-file", "--detach")

    def add_bridge(self, name: str, address: str | None = None) -> None:
        """A ``netdev`` bridge (as an operator creates those of bridge_mappings);
        with ``address``, its own device gets it, up, in the namespace."""
        _run("ovs-vsctl", "--timeout=10", "--may-exist", "add-br", name, "--", "set",
             "bridge", name, "datapath_type=netdev", "fail_mode=secure", env=self.env)
        if address:
            iproute.ip("addr", "replace", address, "dev", name, namespace=self.namespace)
            iproute.ip("link", "set", name, "up", namespace=self.namespace)

    def stop(self) -> None:
        """Daemons stopped (by their pid files), the namespace and every device
        in it deleted; absent is fine."""
        for daemon in ("ovs-vswitchd", "ovsdb-server"):
            pid = _pid(self.rundir / f"{daemon}.pid")
            if pid is not None:
                _terminate(pid)
        if iproute.namespace_exists(self.namespace):
            for pid in iproute.ip("netns", "pids", self.namespace, check=False).split():
                _terminate(int(pid))
            iproute.delete_namespace(self.namespace)


def _pid(path: Path) -> int | None:
    pid = read_pid(path)
    return pid if pid is not None and _alive(pid) else None


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for PID 1 to reap it has stopped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def _terminate(pid: int, within: float = 5.0) -> None:
    terminate(pid, lambda: _alive(pid), within)
