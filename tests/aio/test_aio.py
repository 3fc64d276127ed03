"""The all-in-one as ``make run`` starts it: ``etc/neutrino-aio.conf`` (plus a
file moving its port, state directory and namespace out of the way), the
in-process bus, and, as root with Open vSwitch, this host's agents.

The README's walk-through is executed as written, with only those names
replaced, and must end in successful pings.
"""
from __future__ import annotations

import ipaddress
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Iterator

import pytest
import requests

from neutrino.aio.host_route import in_the_way, link_for
from tests.conftest import ROOT, Client, free_port
from tests.fullstack.hosts import missing_reason, sh
from tests.waiting import wait_for

AIO_CONF = ROOT / "etc" / "neutrino-aio.conf"
AGENT_TYPES = {"Open vSwitch agent", "DHCP agent", "L3 agent"}


class Aio:
    """``neutrino db upgrade`` then ``neutrino serve``, as the Makefile's ``run``."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.prefix = "a" + uuid.uuid4().hex[:4]
        # dnsmasq drops privileges: its files must be readable by everyone
        self.state = Path(tempfile.mkdtemp(prefix=f"{self.prefix}-"))
        self.state.chmod(0o755)
        self.namespace = f"{self.prefix}-aio"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.override = self.state / "override.conf"
        # an external network (and host link) of its own: its route from the host
        # must not meet another all-in-one's on this machine
        self.octet = _unrouted_octet()
        self.external = f"172.24.{self.octet}."
        self.host_link = f"169.254.{self.octet}.0/30"
        self.override.write_text(
            f"[DEFAULT]\nbind_port = {self.port}\nstate_path = {self.state / 'var'}\n"
            f"[aio]\nnamespace = {self.namespace}\n"
            f"external_address = {self.external}1/24\nhost_link = {self.host_link}\n")
        self.env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
        self.log = self.state / "server.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.foreign_router = ""

    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "neutrino.cmd.main", *args,
                "--config-file", str(AIO_CONF), "--config-file", str(self.override)]

    @property
    def rundir(self) -> Path:
        return self.state / "var" / "ovs"

    def start(self) -> "Aio":
        subprocess.run(self.command("db", "upgrade"), check=True, capture_output=True,
                       env=self.env, cwd=ROOT)
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(self.command("serve"), stdout=log, stderr=log,
                                         env=self.env, cwd=ROOT)

        def up() -> bool:
            if self.proc is None or self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self.output()[-3000:]}")
            try:
                return requests.get(self.url + "/", timeout=1).ok
            except requests.RequestException:
                return False
        assert wait_for(up, 120), self.output()[-3000:]
        return self

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(90)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def destroy(self, extra_namespaces: list[str]) -> None:
        """What a failed test may leave: this server's namespaces, its switch."""
        self.stop()
        for ns in [self.namespace, *extra_namespaces]:
            if ns in sh("ip", "netns", "list", check=False).stdout.split():
                for pid in sh("ip", "netns", "pids", ns, check=False).stdout.split():
                    sh("kill", "-9", pid, check=False)
                sh("ip", "netns", "del", ns, check=False)
        for daemon in ("ovs-vswitchd", "ovsdb-server"):
            pidfile = self.rundir / f"{daemon}.pid"
            if pidfile.exists():
                sh("kill", "-9", pidfile.read_text().strip(), check=False)
        shutil.rmtree(self.state, ignore_errors=True)


def _host_routes() -> list[dict[str, str]]:
    return json.loads(sh("ip", "-4", "-json", "route", "show", "table", "all").stdout or "[]")


def _unrouted_octet() -> int:
    """A third octet X such that the host routes neither 172.24.X.0/24 nor
    169.254.X.0/30."""
    routes = _host_routes()
    while True:
        octet = random.randrange(100, 250)
        wanted = [ipaddress.ip_network(f"172.24.{octet}.0/24"),
                  ipaddress.ip_network(f"169.254.{octet}.0/30")]
        if in_the_way(routes, wanted) is None:
            return octet


def _own_namespaces(admin: Client) -> list[str]:
    ids = [n["id"] for n in admin.get("/v2.0/networks")[1]["networks"]]
    ids += [r["id"] for r in admin.get("/v2.0/routers")[1]["routers"]]
    return [ns for ns in sh("ip", "netns", "list").stdout.split()
            if ns.startswith(("qdhcp-", "qrouter-")) and ns.split("-", 1)[1] in ids]


@pytest.fixture(scope="module")
def aio() -> Iterator[Aio]:
    tools = ("dnsmasq", "nft", "busybox", "ethtool", "ping")
    reason = missing_reason() or next((f"{t} is not installed" for t in tools
                                       if shutil.which(t) is None), None)
    if reason:
        pytest.skip(reason)
    server = Aio()
    # another cloud's router on this machine, there before the all-in-one starts
    server.foreign_router = f"qrouter-{uuid.uuid4()}"
    leftovers: list[str] = [f"{server.prefix}vm1", server.foreign_router]
    try:
        sh("ip", "netns", "add", server.foreign_router)
        server.start()
        yield server
    finally:
        if server.proc is not None and server.proc.poll() is None:
            leftovers += _own_namespaces(Client(server.url))
        server.destroy(leftovers)


def registered(aio: Aio) -> set[str]:
    agents = Client(aio.url).get("/v2.0/agents")[1]["agents"]
    return {a["agent_type"] for a in agents
            if a["alive"] and a["host"] == socket.gethostname()}


def test_the_agents_of_this_host_register(aio: Aio) -> None:
    assert wait_for(lambda: registered(aio) == AGENT_TYPES, 60), aio.output()[-3000:]
    assert "OVS agent, DHCP agent, L3 agent running on host" in aio.output()
    assert f"Open vSwitch in namespace {aio.namespace}" in aio.output()


def _route_to(prefix: str) -> dict[str, str] | None:
    return next((r for r in _host_routes() if r.get("dst") == prefix), None)


def test_the_host_routes_the_external_network_into_the_namespace(aio: Aio) -> None:
    route = _route_to(f"{aio.external}0/24")
    assert route is not None and route["dev"].startswith("naio"), _host_routes()
    assert route["gateway"] == str(ipaddress.ip_network(aio.host_link)[2])
    assert f"host route: {aio.external}0/24 via" in aio.output()


def walkthrough() -> str:
    """The README's walk-through block."""
    readme = (ROOT / "README.md").read_text()
    found = re.search(r"<!-- walk-through[^>]*-->\s*```sh\n(.*?)```", readme, re.S)
    assert found, "README has no walk-through block"
    return found.group(1)


def test_the_readme_walkthrough_ends_in_a_ping(aio: Aio) -> None:
    assert wait_for(lambda: registered(aio) == AGENT_TYPES, 60), aio.output()[-3000:]
    hook = aio.state / "udhcpc-hook"
    script = walkthrough()
    for old, new in (("http://127.0.0.1:9696", aio.url), ("$PWD/var/ovs", str(aio.rundir)),
                     ("neutrino-aio", aio.namespace), ("vm1", f"{aio.prefix}vm1"),
                     ("/tmp/udhcpc-hook", str(hook)), ("172.24.4.", aio.external),
                     (".venv/bin/openstack", str(Path(sys.executable).parent / "openstack"))):
        assert old in script, old
        script = script.replace(old, new)
    done = subprocess.run(["bash", "-e", "-c", script], capture_output=True, text=True,
                          cwd=ROOT, timeout=600)
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:],
                                  aio.output()[-3000:])
    out = done.stdout
    assert "from 10.0.0.1" in out and f"from {aio.external}1" in out, out
    # security groups: the router's and the host's pings went unanswered until
    # the ICMP rule, then the instance and its floating IP answered both
    vm_ip = re.search(r"no answer from (10\.0\.0\.\d+): the default group", out)
    fip = re.search(rf"no answer from ({re.escape(aio.external)}\d+): the default group", out)
    assert vm_ip and fip, out
    after = out[out.index(fip.group(0)):]
    assert f"from {vm_ip.group(1)}: icmp_seq" in after, out
    assert f"from {fip.group(1)}: icmp_seq" in after, out


def test_router_namespaces_it_did_not_make_are_left_alone(aio: Aio) -> None:
    """Its L3 agent's full syncs (at start, and with the walk-through's router)."""
    made = _own_namespaces(Client(aio.url))
    assert any(ns.startswith("qrouter-") for ns in made), made
    assert aio.foreign_router in sh("ip", "netns", "list").stdout.split()


def test_a_second_all_in_one_leaves_a_running_ones_switch_alone(aio: Aio) -> None:
    second = Aio()
    second.override.write_text(second.override.read_text().replace(
        second.namespace, aio.namespace))
    try:
        second.start()
        assert f"namespace {aio.namespace} is in use by processes" in second.output()
        assert "(API only: no agents)" in second.output()
        assert second.stop() == 0
    finally:
        second.destroy([])  # its own (unused) namespace name, never the first one's
    vswitchd = (aio.rundir / "ovs-vswitchd.pid").read_text().strip()
    assert Path(f"/proc/{vswitchd}").exists()
    assert wait_for(lambda: registered(aio) == AGENT_TYPES, 30)


def test_a_stop_removes_the_namespaces_and_the_switch_it_made(aio: Aio) -> None:
    made = _own_namespaces(Client(aio.url))
    assert any(ns.startswith("qdhcp-") for ns in made), made
    assert any(ns.startswith("qrouter-") for ns in made), made
    pids = [(aio.rundir / f"{d}.pid").read_text().strip()
            for d in ("ovs-vswitchd", "ovsdb-server")]
    assert aio.stop() == 0, aio.output()[-3000:]
    left = sh("ip", "netns", "list").stdout.split()
    assert aio.namespace not in left
    assert not set(made) & set(left)
    assert not [p for p in pids if Path(f"/proc/{p}/cmdline").exists()
                and b"ovs" in Path(f"/proc/{p}/cmdline").read_bytes()]
    assert "all-in-one: stopped" in aio.output()
    assert _route_to(f"{aio.external}0/24") is None
    device = link_for(aio.namespace, aio.host_link).host_device
    assert sh("ip", "link", "show", device, check=False).returncode != 0


NOISE = re.compile(r"\b(WARNING|ERROR|CRITICAL)\b|Warning\b|deprecat", re.I)


def test_a_normal_run_logs_no_warning_and_no_banner(aio: Aio) -> None:
    """Start, the walk-through, a stop: nothing an operator would take for a fault."""
    assert aio.proc is not None and aio.proc.poll() is not None  # stopped by now
    noise = [line for line in aio.output().splitlines() if NOISE.search(line)]
    assert not noise, "\n".join(noise)


def test_after_a_restart_a_port_whose_device_went_with_the_stop_is_down(aio: Aio) -> None:
    """The stop deleted the instance's veth with the switch's namespace: the
    restarted OVS agent's full sync reports its port down; the router's and
    DHCP's ports, plugged again by their agents, are active again."""
    admin = Client(aio.url)
    aio.start()
    try:
        ports = admin.get("/v2.0/ports")[1]["ports"]
        vm = next(p for p in ports if p["name"] == f"{aio.prefix}vm1-port")
        assert wait_for(lambda: admin.get(f"/v2.0/ports/{vm['id']}")[1]["port"]["status"]
                        == "DOWN", 60), aio.output()[-3000:]

        def agents_ports_active() -> bool:
            owned = [p for p in admin.get("/v2.0/ports")[1]["ports"]
                     if p["device_owner"] in ("network:dhcp", "network:router_interface")]
            return bool(owned) and all(p["status"] == "ACTIVE" for p in owned)
        assert wait_for(agents_ports_active, 60), admin.get("/v2.0/ports")[1]
    finally:
        assert aio.stop() == 0


def test_a_prefix_the_host_already_routes_is_left_alone() -> None:
    """Another network on this host holds the external prefix: the all-in-one
    says so in one line, adds no route, and serves on."""
    server = Aio()
    mine = f"t{server.prefix}"
    sh("ip", "link", "add", mine, "type", "veth", "peer", "name", f"{mine}p")
    try:
        sh("ip", "addr", "add", f"{server.external}7/24", "dev", mine)
        sh("ip", "link", "set", mine, "up")
        before = _route_to(f"{server.external}0/24")
        assert before is not None and before["dev"] == mine
        server.start()
        assert wait_for(lambda: registered(server) == AGENT_TYPES, 60), server.output()[-3000:]
        assert (f"no route from the host to {server.external}0/24: the host already routes "
                f"{server.external}0/24 dev {mine}") in server.output(), server.output()[-3000:]
        assert _route_to(f"{server.external}0/24") == before
        assert _route_to(server.host_link) is None
        assert server.stop() == 0
        assert _route_to(f"{server.external}0/24") == before
    finally:
        server.destroy([])
        sh("ip", "link", "del", mine, check=False)


def test_without_open_vswitch_it_says_what_it_skipped_and_serves_the_api(
        tmp_path: Path) -> None:
    """ovs-vswitchd is hidden from PATH (every other tool stays reachable)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("ovsdb-tool", "ovsdb-server", "ovs-vsctl", "ovs-ofctl", "ip", "nsenter",
                 "dnsmasq", "nft"):
        where = shutil.which(tool)
        if where:
            (bin_dir / tool).symlink_to(where)
    server = Aio(env={"PATH": str(bin_dir)})
    try:
        server.start()
        out = server.output()
        if os.geteuid() != 0:
            why = "not running as root"
            expected = [f"OVS agent skipped: {why}", f"DHCP agent skipped: {why}",
                        f"L3 agent skipped: {why}"]
        else:
            why = "ovs-vswitchd not found on PATH"
            expected = [f"OVS agent skipped: {why}",
                        f"DHCP agent skipped: needs Open vSwitch ({why}",
                        f"L3 agent skipped: needs Open vSwitch ({why}"]
        for line in expected:
            assert line in out, out[-3000:]
        assert "(API only: no agents)" in out
        admin = Client(server.url)
        assert admin.post("/v2.0/networks", {"network": {"name": "n"}})[0] == 201
        assert admin.get("/v2.0/agents")[1]["agents"] == []
        assert server.namespace not in sh("ip", "netns", "list").stdout.split()
        assert server.stop() == 0
    finally:
        server.destroy([])


def test_a_separate_agent_refuses_the_in_process_bus() -> None:
    done = subprocess.run([sys.executable, "-m", "neutrino.cmd.main", "agent", "ovs",
                           "--config-file", str(AIO_CONF)], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 2
    assert "transport_url: fake:// is the all-in-one's in-process bus" in done.stderr
