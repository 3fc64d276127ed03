"""``docs/operators-guide.md``, "Three hosts: a controller, a network node,
a compute node", run block by block on the fullstack suite's emulated hosts.

The controller is this machine's root namespace (PostgreSQL, RabbitMQ and
``neutrino serve`` on loopback); the network node and the compute node are
emulated hosts (a namespace and an Open vSwitch each) joined by a veth
underlay carrying the guide's tunnel addresses; the outside host sits on
the network node's ``eth1`` (a veth in the guide's ``br-ex``). Each host's
files are the guide's, written under a directory of the host's own.

Only what must differ on a test machine is replaced: the controller's
addresses (loopback), the database and RabbitMQ URLs (a private database
and virtual host), the paths, the hosts' names (the emulated hosts'), the
external interface's name, and the datapath (``netdev``: no kernel
module). The agents run as ``tests/fullstack/agent_main.py`` runs them (the
L3 agent's namespaces kept apart from other tests' routers); the compute
service's part, plugging the instance into ``br-int``, is the fabric's.
"""
from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from tests.conftest import ROOT, Client, create_database, free_port
from tests.fullstack import cloud
from tests.fullstack.hosts import Fabric, Host, dhcp, needs_ovs, ping, sh, terminate_all
from tests.guide.blocks import Session, guide_blocks, wait_up
from tests.rpc.bus import bus
from tests.rpc.conftest import fresh_vhost
from tests.waiting import wait_for

pytestmark = needs_ovs()
TUNNEL = {"network1": "10.0.1.21", "compute1": "10.0.1.31"}
OUTSIDE = "172.24.4.1"
FLOATING = "172.24.4.100"


def test_an_instance_on_the_compute_node_reaches_the_outside_through_the_network_node(
        tmp_path: Path) -> None:
    blocks = guide_blocks()
    fabric = Fabric(tmp_path / "fabric")
    (tmp_path / "fabric").mkdir()
    database, drop = create_database("postgresql", tmp_path)
    server: subprocess.Popen[bytes] | None = None
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    try:
        with fresh_vhost() as vhost:
            hosts = {"network1": fabric.host("n"), "compute1": fabric.host("c")}
            fabric.underlay(hosts["network1"], hosts["compute1"], TUNNEL["network1"],
                            TUNNEL["compute1"])
            eth1, outside = _outside_host(fabric, hosts["network1"])
            common = [
                ("postgresql+psycopg://neutron:db-secret@192.0.2.10/neutron", database),
                ("rabbit://neutron:rabbit-secret@192.0.2.10:5672/", bus(vhost)),
                ("bind_port = 9696", f"bind_port = {port}"),
                ("192.0.2.10:9696", f"127.0.0.1:{port}"),
                ("192.0.2.10", "127.0.0.1"),
                ("datapath_type=system", "datapath_type=netdev"),
                ("datapath_type = system", "datapath_type = netdev"),
                ("network1", hosts["network1"].hostname),
                ("compute1", hosts["compute1"].hostname),
                ("add-port br-ex eth1", f"add-port br-ex {eth1}"),
            ]
            sessions = {"controller": _session(tmp_path / "controller", common, None)}
            for name, host in hosts.items():
                sessions[name.rstrip("1")] = _session(tmp_path / name, common, host)
            _write_files(blocks, sessions)

            controller = sessions["controller"]
            upgraded = controller.run(blocks["hosts-controller-db"][1])
            assert upgraded.startswith("database at "), upgraded
            serve = shlex.split(controller.text(blocks["hosts-controller-serve"][1]).strip())
            assert serve[:2] == ["neutrino", "serve"], serve
            log = tmp_path / "controller" / "server.log"
            with open(log, "ab") as out:
                server = subprocess.Popen(serve, stdout=out, stderr=out, cwd=controller.tmp,
                                          env=controller.env)
            wait_up(f"{url}/", server, log)
            admin = Client(url, roles="admin")

            sessions["network"].run(blocks["hosts-network-bridges"][1])
            for name, host in hosts.items():
                _start_agents(fabric, host, sessions[name.rstrip("1")],
                              blocks[f"hosts-{name.rstrip('1')}-agents"][1])
            expected = {("Open vSwitch agent", hosts["network1"].hostname),
                        ("DHCP agent", hosts["network1"].hostname),
                        ("L3 agent", hosts["network1"].hostname),
                        ("Metadata agent", hosts["network1"].hostname),
                        ("Open vSwitch agent", hosts["compute1"].hostname)}
            assert wait_for(lambda: _alive(admin) == expected, 90), (
                _alive(admin), _logs(tmp_path))
            listed = controller.run(blocks["hosts-controller-agents"][1])
            assert len([line for line in listed.splitlines() if line.endswith(" True")]) == 5, (
                listed)

            controller.run(blocks["hosts-controller-use"][1])
            vm_port = admin.get("/v2.0/ports?name=vm1-port")[1]["ports"][0]
            assert vm_port["binding:host_id"] == hosts["compute1"].hostname, vm_port
            vm = hosts["compute1"].instance("vm1", vm_port, prefix_len=None)
            assert cloud.wait_active(admin, vm_port["id"], 90), _logs(tmp_path)
            leased = dhcp(vm, fabric.root)
            assert leased == vm_port["fixed_ips"][0]["ip_address"], _logs(tmp_path)
            # the router's gateway and SNAT are wired once the L3 agent has run
            assert wait_for(lambda: ping(vm, OUTSIDE, tries=1), 90), _logs(tmp_path)
            (tmp_path / "instance").mkdir()
            Session(tmp_path / "instance", common, netns=vm).run(
                blocks["hosts-instance-ping"][1])

            controller.run(blocks["hosts-controller-fip"][1])
            assert wait_for(lambda: ping(outside, FLOATING, tries=1), 90), _logs(tmp_path)
            (tmp_path / "outside").mkdir()
            Session(tmp_path / "outside", common, netns=outside).run(
                blocks["hosts-outside-ping"][1])
            fabric.stop_processes()
    finally:
        try:
            fabric.stop_processes()
            if server is not None:
                cloud.remove_agent_namespaces(SimpleNamespace(url=url))  # type: ignore[arg-type]
                terminate_all([server], grace=30)
        finally:
            fabric.destroy()
            drop()  # type: ignore[operator]


def _session(root: Path, common: list[tuple[str, str]], host: Host | None) -> Session:
    """A host's shell: its files under ``root``, its Open vSwitch in reach."""
    root.mkdir(parents=True, exist_ok=True)
    state = root / "var"
    if host is not None:  # dnsmasq, run as nobody, reads the DHCP agent's files
        state = host.fabric.public_dir(f"{host.name}-state")
    session = Session(root, [("/etc/neutron", str(root / "etc")),
                             ("/var/lib/neutron", str(state)), *common])
    if host is not None:
        session.env.update({k: host.env[k] for k in ("OVS_RUNDIR", "OVS_LOGDIR", "OVS_DBDIR")})
        session.env["PYTHONPATH"] = str(ROOT)
    return session


def _write_files(blocks: dict[str, tuple[str, str]], sessions: dict[str, Session]) -> None:
    for name, (path, text) in blocks.items():
        if name.startswith("hosts-") and "-conf" in name:
            session = sessions[name.split("-")[1]]
            target = Path(session.text(path))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(session.text(text))


def _start_agents(fabric: Fabric, host: Host, session: Session, block: str) -> None:
    for line in session.text(block).strip().splitlines():
        argv = shlex.split(line)
        assert argv[:2] == ["neutrino", "agent"], line
        with open(session.tmp / f"agent-{argv[2]}.log", "ab") as out:
            fabric.procs.append(subprocess.Popen(  # type: ignore[arg-type]
                [sys.executable, "-m", "tests.fullstack.agent_main", *argv[1:]],
                stdout=out, stderr=out, cwd=host.dir, env=session.env))


def _outside_host(fabric: Fabric, node: Host) -> tuple[str, str]:
    """A machine on the external network: a namespace whose veth's other end
    is the network node's ``eth1`` (the guide puts it in ``br-ex``)."""
    ns = fabric.netns("out")
    end = f"{fabric.prefix}x"
    sh("ip", "link", "add", end, "netns", node.ns, "type", "veth", "peer", "name", "eth0",
       "netns", ns)
    sh("ip", "-n", ns, "addr", "add", f"{OUTSIDE}/24", "dev", "eth0")
    sh("ip", "-n", ns, "link", "set", "eth0", "up")
    sh("ip", "netns", "exec", ns, "ethtool", "-K", "eth0", "tx", "off", check=False)
    node.nsx("sysctl", "-qw", f"net.ipv6.conf.{end}.disable_ipv6=1")
    sh("ip", "-n", node.ns, "link", "set", end, "up")
    return end, ns


def _alive(admin: Client) -> set[tuple[str, str]]:
    status, body = admin.get("/v2.0/agents")
    agents: list[dict[str, Any]] = body.get("agents", []) if status == 200 else []
    return {(a["agent_type"], a["host"]) for a in agents if a["alive"]}


def _logs(tmp: Path) -> str:
    out = [sh("ip", "netns", "list").stdout]
    for path in sorted(tmp.glob("*/agent-*.log")):
        lines = [ln for ln in path.read_text(errors="replace").splitlines()
                 if "amqp" not in ln and "kombu" not in ln]
        out.append(f"--- {path.parent.name}/{path.name}\n" + "\n".join(lines[-30:]))
    return "\n".join(out)
