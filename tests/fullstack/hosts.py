"""Emulated hypervisors: a network namespace with a private Open vSwitch each.

Every host is a netns running its own ovsdb-server and ovs-vswitchd (the
userspace ``netdev`` datapath: this kernel has no OVS module), reached by
the tools through ``OVS_RUNDIR``. Hosts are joined by an underlay: a veth
pair between two hosts, each end in a standalone OVS bridge carrying the
host's tunnel endpoint address. "Instances" are namespaces with a veth
whose host end is a br-int port tagged as the compute service tags it
(``iface-id``, ``attached-mac``). Every name starts with a per-run prefix,
and ``destroy`` removes exactly what was created, even after a failure.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from neutrino.agents.ovs.ovsctl import OvsCtl

SCHEMA = "/usr/share/openvswitch/vswitch.ovsschema"


def missing_reason() -> str | None:
    """Why these tests cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root (network namespaces, Open vSwitch)"
    for tool in ("ovsdb-server", "ovs-vswitchd", "ovs-vsctl", "ovs-ofctl", "ovsdb-tool", "ip"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian: openvswitch-switch, iproute2)"
    if not Path(SCHEMA).exists():
        return f"{SCHEMA} missing"
    return None


def needs_ovs() -> Any:
    reason = missing_reason()
    return pytest.mark.skipif(reason is not None, reason=reason or "")


@contextlib.contextmanager
def ovs_rundir(path: Path) -> Iterator[None]:
    """This process's OVS tools (``OvsCtl()``, whose default database follows
    ``OVS_RUNDIR``) reach the switch at ``path``; the caller's setting is
    back afterwards, even after a failure."""
    saved = os.environ.get("OVS_RUNDIR")
    os.environ["OVS_RUNDIR"] = str(path)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("OVS_RUNDIR", None)
        else:
            os.environ["OVS_RUNDIR"] = saved


@pytest.fixture(scope="module")
def host(fabric: Fabric) -> Host:
    """The module's one hypervisor, for tests of the switch adapter itself
    (import it with ``ovs``)."""
    return fabric.host("a")


@pytest.fixture
def ovs(host: Host) -> Iterator[OvsCtl]:
    """The real switch adapter on ``host``'s switch, as an agent makes it."""
    with ovs_rundir(host.dir):
        yield OvsCtl()


def sh(*argv: str, check: bool = True, env: dict[str, str] | None = None,
       timeout: float = 30) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(list(argv), capture_output=True, text=True, env=env, timeout=timeout)
    if check and proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {proc.returncode} {proc.stderr.strip()}")
    return proc


class Fabric:
    """Everything one test module creates, so it can all be removed."""

    def __init__(self, root: Path) -> None:
        self.prefix = "f" + uuid.uuid4().hex[:4]  # names stay within 15 chars
        self.root = root
        self.namespaces: list[str] = []
        self.hosts: list[Host] = []
        self.procs: list[subprocess.Popen[bytes]] = []
        # run once the processes are ended: what they left (daemons that detached)
        self.cleanups: list[Callable[[], None]] = []
        self.dirs: list[Path] = []

    def public_dir(self, name: str) -> Path:
        """A directory daemons that drop privileges can read (dnsmasq runs as
        nobody; pytest's own temporary tree is private to root)."""
        path = Path(f"/tmp/{self.prefix}-{name}")
        path.mkdir(mode=0o755)
        path.chmod(0o755)
        self.dirs.append(path)
        return path

    def netns(self, suffix: str) -> str:
        name = f"{self.prefix}-{suffix}"
        sh("ip", "netns", "add", name)
        self.namespaces.append(name)
        sh("ip", "-n", name, "link", "set", "lo", "up")
        return name

    def host(self, name: str) -> "Host":
        host = Host(self, name)
        self.hosts.append(host)
        return host

    def underlay(self, a: "Host", b: "Host", ip_a: str, ip_b: str) -> None:
        """A veth between two hosts; each end in a standalone bridge holding the endpoint IP.
        A host may be on several underlay links (a star through a network node)."""
        ea, eb = f"{self.prefix}u{a.name}{b.name}", f"{self.prefix}u{b.name}{a.name}"
        sh("ip", "link", "add", ea, "netns", a.ns, "type", "veth", "peer", "name", eb,
           "netns", b.ns)
        for host, end, ip in ((a, ea, ip_a), (b, eb, ip_b)):
            br = f"{self.prefix}ul"
            mac = "02:00:%02x:%02x:%02x:%02x" % tuple(int(o) for o in ip.split("."))
            fresh = br not in host.vsctl("list-br").split()
            if fresh:
                host.vsctl("add-br", br, "--", "set", "bridge", br, "datapath_type=netdev",
                           "fail-mode=standalone", f'other_config:hwaddr="{mac}"')
            host.nsx("sysctl", "-qw", f"net.ipv4.conf.{end}.arp_ignore=1",
                     f"net.ipv6.conf.{end}.disable_ipv6=1")
            sh("ip", "-n", host.ns, "link", "set", end, "up")
            host.vsctl("add-port", br, end)
            if fresh:
                sh("ip", "-n", host.ns, "addr", "add", f"{ip}/24", "dev", br)
                sh("ip", "-n", host.ns, "link", "set", br, "up")

    def wire(self, a: "Host", b: "Host", bridge: str) -> None:
        """A "physical" trunk: a veth between the hosts, each end a port of ``bridge``
        (created here, as an operator creates the bridges of bridge_mappings)."""
        ea, eb = f"{self.prefix}p{a.name}", f"{self.prefix}p{b.name}"
        sh("ip", "link", "add", ea, "netns", a.ns, "type", "veth", "peer", "name", eb,
           "netns", b.ns)
        for host, end in ((a, ea), (b, eb)):
            host.vsctl("--may-exist", "add-br", bridge, "--", "set", "bridge", bridge,
                       "datapath_type=netdev", "fail-mode=secure")
            host.nsx("sysctl", "-qw", f"net.ipv6.conf.{end}.disable_ipv6=1")
            sh("ip", "-n", host.ns, "link", "set", end, "up")
            host.vsctl("add-port", bridge, end)

    def stop_processes(self) -> None:
        """End the agents while their bus and server are still there: an
        agent whose RabbitMQ vhost is gone retries to reconnect instead of
        stopping, and is killed only after ``terminate_all``'s grace. Then
        the cleanups, for what those processes started and left behind."""
        terminate_all(self.procs)
        while self.cleanups:
            self.cleanups.pop()()

    def destroy(self) -> None:
        self.stop_processes()
        for host in self.hosts:
            host.stop_ovs()
        for ns in reversed(self.namespaces):
            pids = sh("ip", "netns", "pids", ns, check=False).stdout.split()
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            sh("ip", "netns", "del", ns, check=False)
        for path in self.dirs:
            shutil.rmtree(path, ignore_errors=True)


def terminate_all(procs: list[subprocess.Popen[bytes]], grace: float = 10) -> None:
    """SIGTERM every process still running, then give them ``grace`` seconds
    together (an agent takes seconds to wind down its RPC servers) before
    SIGKILL."""
    running = [proc for proc in procs if proc.poll() is None]
    for proc in running:
        proc.terminate()
    deadline = time.monotonic() + grace
    for proc in running:
        try:
            proc.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Host:
    def __init__(self, fabric: Fabric, name: str) -> None:
        self.fabric, self.name = fabric, name
        self.ns = fabric.netns(f"h{name}")
        self.hostname = self.ns  # what the agent reports and ports are bound to
        self.dir = fabric.root / f"ovs-{name}"
        self.dir.mkdir(parents=True)
        self.env = {**os.environ, "OVS_RUNDIR": str(self.dir), "OVS_LOGDIR": str(self.dir),
                    "OVS_DBDIR": str(self.dir)}
        self.agent: subprocess.Popen[bytes] | None = None
        self.start_ovs()

    def nsx(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return sh("ip", "netns", "exec", self.ns, *argv, check=check, env=self.env)

    def vsctl(self, *args: str) -> str:
        return sh("ovs-vsctl", "--timeout=10", *args, env=self.env).stdout

    def ofctl(self, *args: str) -> str:
        return sh("ovs-ofctl", *args, env=self.env).stdout

    def start_ovs(self) -> None:
        d = str(self.dir)
        db = self.dir / "conf.db"
        if not db.exists():
            sh("ovsdb-tool", "create", str(db), SCHEMA)
        self.nsx("ovsdb-server", str(db), f"--remote=punix:{d}/db.sock",
                 "--remote=db:Open_vSwitch,Open_vSwitch,manager_options",
                 "--pidfile", "--log-file", "--detach")
        sh("ovs-vsctl", "--no-wait", "init", env=self.env)
        self.nsx("ovs-vswitchd", f"unix:{d}/db.sock", "--pidfile", "--log-file", "--detach")

    def stop_ovs(self) -> None:
        for daemon in ("ovs-vswitchd", "ovsdb-server"):
            pidfile = self.dir / f"{daemon}.pid"
            if pidfile.exists():
                try:
                    os.kill(int(pidfile.read_text().strip()), signal.SIGTERM)
                except (ProcessLookupError, ValueError):
                    pass

    def flows(self, bridge: str) -> list[str]:
        out = self.ofctl("--no-stats", "--names", "dump-flows", bridge)
        return [line.strip() for line in out.splitlines() if "actions=" in line]

    def instance(self, suffix: str, port: dict[str, Any], prefix_len: int | None = 24) -> str:
        """A namespace plugged into br-int as the compute service would plug ``port``;
        with ``prefix_len=None`` it has no address yet (to get one by DHCP)."""
        ns = self.fabric.netns(suffix)
        tap = f"{self.fabric.prefix}t{suffix}"[:15]
        sh("ip", "link", "add", tap, "netns", self.ns, "type", "veth", "peer", "name", "eth0",
           "netns", ns)
        sh("ip", "-n", ns, "link", "set", "eth0", "address", port["mac_address"], "mtu",
           "1450", "up")
        if prefix_len is not None:
            ip = port["fixed_ips"][0]["ip_address"]
            sh("ip", "-n", ns, "addr", "add", f"{ip}/{prefix_len}", "dev", "eth0")
        if shutil.which("ethtool"):  # partial checksums break TCP/UDP through netdev OVS
            sh("ip", "netns", "exec", ns, "ethtool", "-K", "eth0", "tx", "off", check=False)
        self.nsx("sysctl", "-qw", f"net.ipv6.conf.{tap}.disable_ipv6=1")
        sh("ip", "-n", self.ns, "link", "set", tap, "up")
        self.vsctl("add-port", "br-int", tap, "--", "set", "interface", tap,
                   f"external_ids:iface-id={port['id']}", "external_ids:iface-status=active",
                   f"external_ids:attached-mac={port['mac_address']}")
        return ns

    def unplug(self, suffix: str) -> None:
        tap = f"{self.fabric.prefix}t{suffix}"[:15]
        self.vsctl("--if-exists", "del-port", "br-int", tap)


# busybox udhcpc runs this with the lease in its environment (Debian ships no hook)
UDHCPC_HOOK = """#!/bin/sh
case "$1" in
  deconfig) ip addr flush dev "$interface"; ip link set "$interface" up ;;
  bound|renew)
    ip addr flush dev "$interface"
    ip addr add "$ip/$mask" dev "$interface"
    [ -n "$mtu" ] && ip link set "$interface" mtu "$mtu"
    [ -n "$router" ] && ip route replace default via "${router%% *}" dev "$interface"
    ;;
esac
exit 0
"""


def dhcp(ns: str, hook_dir: Path, attempts: int = 3) -> str | None:
    """Ask for an address on ``eth0`` of ``ns`` with busybox udhcpc; the leased
    address, or None when no server answered."""
    hook = hook_dir / "udhcpc-hook.sh"
    if not hook.exists():
        hook.write_text(UDHCPC_HOOK)
        hook.chmod(0o755)
    for _ in range(attempts):
        done = sh("ip", "netns", "exec", ns, "busybox", "udhcpc", "-i", "eth0", "-f", "-q",
                  "-n", "-t", "5", "-T", "1", "-O", "mtu", "-s", str(hook), check=False,
                  timeout=60)
        if done.returncode == 0:
            out = sh("ip", "-j", "-n", ns, "-4", "addr", "show", "dev", "eth0").stdout
            for link in json.loads(out or "[]"):
                for addr in link.get("addr_info", []):
                    return str(addr["local"])
    return None


def ping(ns: str, ip: str, tries: int = 5) -> bool:
    for _ in range(tries):
        if sh("ip", "netns", "exec", ns, "ping", "-c1", "-W1", ip, check=False).returncode == 0:
            return True
    return False


TCP_PORT = 8080


def serve_tcp(fabric: "Fabric", ns: str, port: int = TCP_PORT) -> None:
    """A TCP server answering "hello" on ``port`` in ``ns`` until the fabric goes."""
    fabric.procs.append(subprocess.Popen(  # type: ignore[arg-type]
        ["ip", "netns", "exec", ns, "busybox", "nc", "-ll", "-p", str(port), "-e",
         "/bin/echo", "hello"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))


def tcp_answers(ns: str, ip: str, port: int = TCP_PORT) -> bool:
    """Whether a connection from ``ns`` to ``ip:port`` gets ``serve_tcp``'s answer."""
    try:
        out = sh("ip", "netns", "exec", ns, "busybox", "nc", "-w", "2", ip, str(port),
                 check=False, timeout=6).stdout
    except subprocess.TimeoutExpired:
        return False
    return "hello" in out


