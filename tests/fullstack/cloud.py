"""A small cloud for fullstack tests: a neutrino server and OVS agents on emulated hosts."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import ROOT, Client, Server
from tests.fullstack.hosts import Fabric, Host, sh
from tests.rpc.bus import bus
from tests.waiting import wait_for

ML2 = ("[ml2]\ntype_drivers = flat,vlan,vxlan\ntenant_network_types = vxlan\n"
       "mechanism_drivers = openvswitch\nextension_drivers = port_security\n[ml2_type_vxlan]\nvni_ranges = 1000:1100\n"
       "[ml2_type_vlan]\nnetwork_vlan_ranges = physnet1\n")
PHYS_BRIDGE = "br-phys"


def start_server(tmp: Path, vhost: str, service_plugins: str = "",
                 mechanism_drivers: str = "openvswitch", extension_drivers: str = "port_security"
                 ) -> Server:
    plugins = f"service_plugins = {service_plugins}\n" if service_plugins else ""
    ml2 = ML2.replace("mechanism_drivers = openvswitch",
                      f"mechanism_drivers = {mechanism_drivers}").replace(
        "extension_drivers = port_security", f"extension_drivers = {extension_drivers}")
    return Server(tmp, extra=f"transport_url = {bus(vhost)}\n{plugins}{ml2}").start()


def agent_conf(host: Host, vhost: str, local_ip: str, firewall_driver: str = "noop",
               agent_options: str = "") -> Path:
    """The OVS agent's file; ``agent_options``: more ``[agent]`` lines."""
    path = host.dir / "agent.conf"
    path.write_text(
        f"[DEFAULT]\nhost = {host.hostname}\ntransport_url = {bus(vhost)}\ndebug = true\n"
        f"log_file = {host.dir / 'agent.log'}\n"
        f"[ovs]\nlocal_ip = {local_ip}\ndatapath_type = netdev\n"
        f"bridge_mappings = physnet1:{PHYS_BRIDGE}\n"
        "[agent]\ntunnel_types = vxlan\npolling_interval = 0.5\nreport_interval = 2\n"
        f"{agent_options}"
        f"[securitygroup]\nfirewall_driver = {firewall_driver}\n")
    return path


def service_agent_conf(host: Host, vhost: str, kind: str, defaults: str = "",
                       agent: str = "") -> Path:
    """A DHCP or L3 agent of ``host``: devices through the OVS interface driver;
    ``defaults``: more ``[DEFAULT]`` lines, ``agent``: more ``[AGENT]`` ones."""
    state = host.fabric.public_dir(f"{host.name}-{kind}")
    path = host.dir / f"{kind}-agent.conf"
    path.write_text(
        f"[DEFAULT]\nhost = {host.hostname}\ntransport_url = {bus(vhost)}\ndebug = true\n"
        f"log_file = {host.dir / (kind + '-agent.log')}\nstate_path = {state}\n"
        f"interface_driver = openvswitch\nresync_interval = 1\n{defaults}"
        f"[AGENT]\nreport_interval = 2\n{agent}")
    return path


def start_agent(fabric: Fabric, host: Host, conf: Path, kind: str = "ovs"
                ) -> subprocess.Popen[bytes]:
    """``neutrino agent <kind>`` for ``host``; it runs in the root namespace (it reaches
    the bus on loopback) and manages the host's private OVS through OVS_RUNDIR."""
    env = {**host.env, "PYTHONPATH": str(ROOT)}
    out_name = "agent.out" if kind == "ovs" else f"{kind}-agent.out"
    with open(host.dir / out_name, "ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "tests.fullstack.agent_main", "agent", kind,
                                 "--config-file", str(conf)], stdout=out, stderr=out, env=env,
                                cwd=str(host.dir))
    fabric.procs.append(proc)
    if kind == "ovs":
        host.agent = proc
    return proc


def stop_agent(host: Host) -> None:
    if host.agent is not None and host.agent.poll() is None:
        host.agent.terminate()
        host.agent.wait(20)


def agent_alive(admin: Client, hostname: str, agent_type: str | None = None) -> bool:
    status, body = admin.get(f"/v2.0/agents?host={hostname}")
    return status == 200 and any(a["alive"] for a in body["agents"]
                                 if agent_type is None or a["agent_type"] == agent_type)


def status_of(admin: Client, port_id: str) -> str:
    return admin.get(f"/v2.0/ports/{port_id}")[1]["port"]["status"]


def network(admin: Client, name: str, cidr: str) -> dict[str, Any]:
    status, net = admin.post("/v2.0/networks", {"network": {"name": name}})
    assert status == 201, net
    status, sub = admin.post("/v2.0/subnets", {"subnet": {
        "network_id": net["network"]["id"], "ip_version": 4, "cidr": cidr}})
    assert status == 201, sub
    return net["network"]


def bound_port(admin: Client, net: dict[str, Any], hostname: str,
               **attrs: Any) -> dict[str, Any]:
    status, body = admin.post("/v2.0/ports", {"port": {
        "network_id": net["id"], "binding:host_id": hostname, "device_owner": "compute:nova",
        "device_id": os.urandom(8).hex(), **attrs}})
    assert status == 201, body
    assert body["port"]["binding:vif_type"] == "ovs", body
    return body["port"]


def wait_active(admin: Client, port_id: str, timeout: float = 30) -> bool:
    return bool(wait_for(lambda: status_of(admin, port_id) == "ACTIVE", timeout))


def add_phys_bridge(host: Host) -> None:
    """The operator's bridge of ``bridge_mappings`` on ``host`` (physnet1)."""
    host.vsctl("--may-exist", "add-br", PHYS_BRIDGE, "--", "set", "bridge", PHYS_BRIDGE,
               "datapath_type=netdev", "fail-mode=secure")


def external_host(fabric: Fabric, node: Host, *addresses: str) -> str:
    """A namespace on the flat physnet1 (a veth into the network node's
    br-phys) with ``addresses`` (``ip/prefix``; IPv6 ones without DAD)."""
    ns = fabric.netns("ext")
    end = f"{fabric.prefix}x"
    sh("ip", "link", "add", end, "netns", node.ns, "type", "veth", "peer", "name", "eth0",
       "netns", ns)
    for address in addresses:
        sh("ip", "-n", ns, "addr", "add", address, "dev", "eth0",
           *(("nodad",) if ":" in address else ()))
    sh("ip", "-n", ns, "link", "set", "eth0", "up")
    sh("ip", "netns", "exec", ns, "ethtool", "-K", "eth0", "tx", "off", check=False)
    node.nsx("sysctl", "-qw", f"net.ipv6.conf.{end}.disable_ipv6=1")
    sh("ip", "-n", node.ns, "link", "set", end, "up")
    node.vsctl("add-port", PHYS_BRIDGE, end)
    return ns


def delete_namespace(ns: str) -> None:
    """A namespace and the processes in it (dnsmasq, proxies, keepalived)."""
    for pid in sh("ip", "netns", "pids", ns, check=False).stdout.split():
        sh("kill", "-9", pid, check=False)
    sh("ip", "netns", "del", ns, check=False)


def remove_agent_namespaces(server: Server) -> None:
    """What the agents leave when a test fails before deleting through the API
    (killed agents clean nothing): this cloud's qdhcp-/qrouter- namespaces."""
    admin = Client(server.url, roles="admin")
    ids = [n["id"] for n in admin.get("/v2.0/networks")[1].get("networks", [])]
    ids += [r["id"] for r in admin.get("/v2.0/routers")[1].get("routers", [])]
    for ns in sh("ip", "netns", "list").stdout.split():
        if ns.startswith(("qdhcp-", "qrouter-")) and ns.split("-", 1)[1] in ids:
            delete_namespace(ns)


def security_group(admin: Client, name: str) -> str:
    status, body = admin.post("/v2.0/security-groups", {"security_group": {"name": name}})
    assert status == 201, body
    return str(body["security_group"]["id"])


# -- routers: what the L3 scenarios (DVR, HA, IPv6, NDP proxy) share --------------------

def external_switch(fabric: Fabric, nodes: list[Host], address: str) -> str:
    """The external host: a bridge carrying ``address`` (``ip/prefix``) with a
    veth leg into each node's physnet1 bridge."""
    ns = fabric.netns("ext")
    sh("ip", "-n", ns, "link", "add", "brx", "type", "bridge")
    sh("ip", "-n", ns, "addr", "add", address, "dev", "brx")
    sh("ip", "-n", ns, "link", "set", "brx", "up")
    for node in nodes:
        end = f"{fabric.prefix}x{node.name}"
        sh("ip", "link", "add", end, "netns", node.ns, "type", "veth", "peer",
           "name", f"leg{node.name}", "netns", ns)
        sh("ip", "-n", ns, "link", "set", f"leg{node.name}", "master", "brx", "up")
        node.nsx("sysctl", "-qw", f"net.ipv6.conf.{end}.disable_ipv6=1")
        sh("ip", "-n", node.ns, "link", "set", end, "up")
        node.vsctl("add-port", PHYS_BRIDGE, end)
    return ns


def start_l3_agent(fabric: Fabric, host: Host, vhost: str, defaults: str = "") -> Any:
    """An L3 agent on ``host``, its namespaces suffixed with the host's name
    (several hosts share this kernel); ``defaults``: more ``[DEFAULT]`` lines."""
    conf = service_agent_conf(host, vhost, "l3", defaults=defaults)
    host.env["NEUTRINO_NS_SUFFIX"] = host.hostname
    return start_agent(fabric, host, conf, "l3")


def wait_agents(admin: Client, hosts: list[Host], agent_type: str,
                timeout: float = 120) -> None:
    for host in hosts:
        assert wait_for(lambda: agent_alive(admin, host.hostname, agent_type), timeout), \
            f"{agent_type} on {host.hostname} not alive"


def router_namespaces(hosts: list[Host], prefixes: tuple[str, ...] = ("qrouter-",)
                      ) -> list[str]:
    """The router namespaces (``prefixes``) the L3 agents of ``hosts`` made."""
    return [ns for ns in sh("ip", "netns", "list").stdout.split()
            if ns.startswith(prefixes) and any(ns.endswith("@" + h.hostname) for h in hosts)]


def external_network(admin: Client, name: str, cidr: str, gateway_ip: str
                     ) -> dict[str, Any]:
    """A flat external network on physnet1 with one subnet, no DHCP."""
    status, ext = admin.post("/v2.0/networks", {"network": {
        "name": name, "router:external": True, "provider:network_type": "flat",
        "provider:physical_network": "physnet1"}})
    assert status == 201, ext
    status, body = admin.post("/v2.0/subnets", {"subnet": {
        "network_id": ext["network"]["id"], "ip_version": 4, "cidr": cidr,
        "gateway_ip": gateway_ip, "enable_dhcp": False}})
    assert status == 201, body
    return dict(ext["network"])


def subnet_id(admin: Client, net: dict[str, Any]) -> str:
    return str(admin.get(f"/v2.0/subnets?network_id={net['id']}")[1]["subnets"][0]["id"])


def add_interfaces(admin: Client, router_id: str, nets: list[dict[str, Any]]) -> None:
    for net in nets:
        status, body = admin.put(f"/v2.0/routers/{router_id}/add_router_interface",
                                 {"subnet_id": subnet_id(admin, net)})
        assert status == 200, body


def audit(server: Server, *args: str) -> subprocess.CompletedProcess[str]:
    """``neutrino audit`` with the server's own configuration."""
    return subprocess.run(server.command("audit", *args), capture_output=True, text=True,
                          timeout=180, cwd=server.tmp)


def wait_audit_clean(server: Server, timeout: float = 60) -> None:
    """Until the audit finds nothing to say (the agents finish their passes
    at their own pace); its last output in the AssertionError after
    ``timeout``."""
    if not wait_for(lambda: audit(server).returncode == 0, timeout):
        raise AssertionError(audit(server).stdout)


def audit_lines(server: Server, *words: str) -> list[str]:
    """The lines of an audit that name one of ``words`` (a router's id, an
    external network's: the other agents of a fabric may have differences
    of their own)."""
    return [line for line in audit(server).stdout.splitlines()
            if any(word in line for word in words)]


def log_lines(host: Host, name: str, last: int, errors_only: bool = False) -> list[str]:
    """neutrino's own last lines of ``host``'s log ``name`` (for a failure's message)."""
    path = host.dir / name
    if not path.exists():
        return []
    lines = [ln for ln in path.read_text().splitlines() if " neutrino." in ln
             and (not errors_only or "ERROR" in ln or "Error" in ln)]
    return lines[-last:]
