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
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from tests.conftest import ROOT, Client, create_database, free_port
from tests.fullstack import cloud as fullstack
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
            agents = {}
            for name, host in hosts.items():
                agents.update(_start_agents(fabric, host, sessions[name.rstrip("1")],
                                            blocks[f"hosts-{name.rstrip('1')}-agents"][1]))
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
            assert fullstack.wait_active(admin, vm_port["id"], 90), _logs(tmp_path)
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
            _troubleshoot(Cloud(blocks, sessions, hosts, admin, fabric, tmp_path, agents),
                          vm, outside, vm_port)
            fabric.stop_processes()
    finally:
        try:
            fabric.stop_processes()
            if server is not None:
                fullstack.remove_agent_namespaces(SimpleNamespace(url=url))  # type: ignore[arg-type]
                terminate_all([server], grace=30)
        finally:
            fabric.destroy()
            drop()  # type: ignore[operator]


@dataclass
class Cloud:
    blocks: dict[str, tuple[str, str]]
    sessions: dict[str, Session]
    hosts: dict[str, Host]
    admin: Client
    fabric: Fabric
    tmp: Path
    agents: dict[tuple[str, str], subprocess.Popen[bytes]]

    def run(self, host: str, block: str) -> str:
        return self.sessions[host].run(self.blocks[block][1])


def _troubleshoot(cloud: Cloud, vm: str, outside: str, vm_port: dict[str, Any]) -> None:
    """The guide's "Troubleshooting by symptom": each symptom provoked on
    this cloud, then its blocks run and what they show checked."""
    admin, compute, network = cloud.admin, cloud.hosts["compute1"], cloud.hosts["network1"]
    # a port bound to compute1 that nothing plugged stays DOWN
    net = admin.get(f"/v2.0/networks/{vm_port['network_id']}")[1]["network"]
    unplugged = fullstack.bound_port(admin, net, compute.hostname, name="vm2-port")
    assert unplugged["status"] == "DOWN", unplugged
    shown = cloud.run("controller", "trouble-port-status")
    assert "DOWN" in shown and compute.hostname in shown, shown
    assert cloud.run("compute", "trouble-port-plugged").strip() == ""

    # the floating IP gets no traffic once its group lets no ping in
    status, rules = admin.get("/v2.0/security-group-rules?protocol=icmp&security_group_id="
                              + vm_port["security_groups"][0])
    assert status == 200 and len(rules["security_group_rules"]) == 1, rules
    admin.delete(f"/v2.0/security-group-rules/{rules['security_group_rules'][0]['id']}")
    assert wait_for(lambda: not ping(outside, FLOATING, tries=1), 30)
    cloud.run("network", "trouble-fip-router")  # its greps fail the block if NAT is missing
    traced = cloud.run("controller", "trouble-fip-trace")
    assert "verdict: model denied" in traced and "hosts denied" in traced, traced
    assert "no ingress rule" in traced and "DISAGREES" not in traced, traced
    assert "host: dropped" in traced and "exit status 1" in traced, traced
    listed = cloud.run("controller", "trouble-fip-rules")
    assert vm_port["security_groups"][0] in listed and "icmp" not in listed.lower(), listed
    cloud.run("controller", "trouble-fip-fix")
    assert wait_for(lambda: ping(outside, FLOATING, tries=1), 60), _logs(cloud.tmp)

    # the floating IP's address removed behind the L3 agent's back: the audit
    # names it, its repair puts it back (the port nothing plugged, which the
    # audit would name too, is gone first)
    assert admin.delete(f"/v2.0/ports/{unplugged['id']}")[0] == 204
    router = admin.get("/v2.0/routers?name=demo-router")[1]["routers"][0]["id"]
    ns = f"qrouter-{router}"
    device = next(line.split()[1] for line in sh("ip", "-n", ns, "-o", "addr").stdout.splitlines()
                  if f" {FLOATING}/32 " in line)
    sh("ip", "-n", ns, "addr", "del", f"{FLOATING}/32", "dev", device)
    audited = cloud.run("controller", "trouble-audit")
    assert f"router {router} lacks address {FLOATING}" in audited, audited
    assert "exit status 1" in audited, audited
    repaired = cloud.run("controller", "trouble-audit-repair")
    assert "repaired: no differences" in repaired, repaired
    assert wait_for(lambda: ping(outside, FLOATING, tries=1), 60), _logs(cloud.tmp)

    # the compute node's OVS agent and the network node's DHCP agent die
    # (with the network's dnsmasq): the agents go dead, the instance gets no lease
    for host, kind in ((compute, "ovs"), (network, "dhcp")):
        proc = cloud.agents[(host.name, kind)]
        proc.kill()
        proc.wait()
    qdhcp = f"qdhcp-{net['id']}"
    for pid in sh("ip", "netns", "pids", qdhcp, check=False).stdout.split():
        sh("kill", "-9", pid, check=False)
    assert wait_for(lambda: not fullstack.agent_alive(admin, compute.hostname, "Open vSwitch agent")
                    and not fullstack.agent_alive(admin, network.hostname, "DHCP agent"), 150)
    assert dhcp(vm, cloud.fabric.root, attempts=1) is None
    agents = cloud.run("controller", "trouble-agents").strip().splitlines()
    assert f"Open vSwitch agent {compute.hostname} False" in agents, agents
    assert f"DHCP agent {network.hostname} False" in agents, agents
    assert f"L3 agent {network.hostname} True" in agents, agents
    assert agents[-1] == "OK", agents
    dead = cloud.run("controller", "trouble-agents-metrics").strip().splitlines()
    assert len(dead) == 2, dead
    assert any(compute.hostname in line and "Open vSwitch agent" in line for line in dead), dead
    assert any(network.hostname in line and "DHCP agent" in line for line in dead), dead
    hosting = cloud.run("controller", "trouble-dhcp-agent").strip()
    assert hosting == f"{network.hostname} False", hosting
    assert cloud.run("network", "trouble-dhcp-server").strip() == ""

    # started again as the guide starts them, the lease comes back
    for name, kind in (("compute1", "ovs"), ("network1", "dhcp")):
        short = name.rstrip("1")
        line = next(ln for ln in cloud.blocks[f"hosts-{short}-agents"][1].splitlines()
                    if f"neutrino agent {kind} " in ln)
        cloud.agents.update(_start_agents(cloud.fabric, cloud.hosts[name],
                                          cloud.sessions[short], line))
    assert wait_for(lambda: fullstack.agent_alive(admin, compute.hostname, "Open vSwitch agent")
                    and fullstack.agent_alive(admin, network.hostname, "DHCP agent"), 90)
    assert wait_for(lambda: dhcp(vm, cloud.fabric.root, attempts=1)
                    == vm_port["fixed_ips"][0]["ip_address"], 90), _logs(cloud.tmp)
    assert "dnsmasq" in cloud.run("network", "trouble-dhcp-server")


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


def _start_agents(fabric: Fabric, host: Host, session: Session, block: str
                  ) -> dict[tuple[str, str], subprocess.Popen[bytes]]:
    """The block's agents, as ``(host's name, kind) -> process``."""
    started = {}
    for line in session.text(block).strip().splitlines():
        argv = shlex.split(line)
        assert argv[:2] == ["neutrino", "agent"], line
        with open(session.tmp / f"agent-{argv[2]}.log", "ab") as out:
            proc = subprocess.Popen([sys.executable, "-m", "tests.fullstack.agent_main",
                                     *argv[1:]], stdout=out, stderr=out, cwd=host.dir,
                                    env=session.env)
        fabric.procs.append(proc)
        started[(host.name, argv[2])] = proc
    return started


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
