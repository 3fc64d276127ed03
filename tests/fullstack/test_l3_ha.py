"""Fullstack: an HA router on two network nodes, keepalived electing where it is active.

Hosts ``a`` and ``b`` are network nodes (OVS and L3 agents), ``c`` a
compute host; a VXLAN underlay joins all three. The external network is a
flat physnet1 whose "switch" is a Linux bridge in the external host's
namespace, with a leg into each network node's br-phys. Each L3 agent
names its router namespaces ``qrouter-<id>@<host>`` (see agent_main), as
two hosts share this machine's namespaces. ``trace --live`` asks the
router's active host, before and after a failover.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.conftest import Client, Server
from tests.fullstack import cloud
from tests.fullstack.hosts import Fabric, Host, needs_ovs, ping, sh, terminate_all
from tests.rpc.bus import bus
from tests.waiting import wait_for

pytestmark = needs_ovs()
LOCAL_IPS = {"a": "10.97.0.1", "b": "10.97.0.2", "c": "10.97.0.3"}
EXT_HOST_IP = "172.24.6.1"


@dataclass
class Cloud:
    admin: Client
    fabric: Fabric
    hosts: dict[str, Host]
    ext_ns: str
    router: dict[str, Any]
    vm: str
    port: dict[str, Any]
    traced: dict[str, str]  # what the trace tests saw: the first active host
    server: Server


def states(admin: Client, router_id: str) -> dict[str, str]:
    status, body = admin.get(f"/v2.0/routers/{router_id}/l3-agents")
    assert status == 200, body
    return {a["host"]: a.get("ha_state") for a in body["agents"]}


def active_hosts(admin: Client, router_id: str) -> list[str]:
    return sorted(h for h, s in states(admin, router_id).items() if s == "active")


@pytest.fixture(scope="module")
def ha_cloud(fabric: Fabric, vhost: str, tmp_path_factory: pytest.TempPathFactory
             ) -> Iterator[Cloud]:
    server = Server(tmp_path_factory.mktemp("l3ha-server"), extra=(
        f"transport_url = {bus(vhost)}\nservice_plugins = router,trace\n"
        "router_auto_schedule = true\nmax_l3_agents_per_router = 2\n" + cloud.ML2)).start()
    hosts = {n: fabric.host(n) for n in LOCAL_IPS}
    l3_procs: list[Any] = []
    try:
        admin = Client(server.url, roles="admin")
        a, b, c = hosts["a"], hosts["b"], hosts["c"]
        for x, y in ((a, b), (a, c)):  # a star: a mesh of standalone bridges loops
            fabric.underlay(x, y, LOCAL_IPS[x.name], LOCAL_IPS[y.name])
        for host in hosts.values():
            cloud.add_phys_bridge(host)
        ext_ns = cloud.external_switch(fabric, [a, b], f"{EXT_HOST_IP}/24")
        for name, host in hosts.items():
            cloud.start_agent(fabric, host, cloud.agent_conf(host, vhost, LOCAL_IPS[name]))
        l3_procs = [cloud.start_l3_agent(fabric, node, vhost, "ha_vrrp_advert_int = 1\n")
                    for node in (a, b)]
        cloud.wait_agents(admin, list(hosts.values()), "Open vSwitch agent")
        cloud.wait_agents(admin, [a, b], "L3 agent")

        ext = cloud.external_network(admin, "ha-ext", "172.24.6.0/24", EXT_HOST_IP)
        net = cloud.network(admin, "ha-tenant", "10.101.1.0/24")
        status, router = admin.post("/v2.0/routers", {"router": {
            "name": "ha-r", "ha": True,
            "external_gateway_info": {"network_id": ext["id"]}}})
        assert status == 201, router
        router = router["router"]
        cloud.add_interfaces(admin, router["id"], [net])
        port = cloud.bound_port(admin, net, c.hostname)
        vm = c.instance("v1", port)
        sh("ip", "-n", vm, "route", "replace", "default", "via", "10.101.1.1")
        yield Cloud(admin, fabric, hosts, ext_ns, router, vm, port, {}, server)
    finally:
        terminate_all(l3_procs)  # then nothing puts the routers back
        for ns in cloud.router_namespaces(list(hosts.values())):
            cloud.delete_namespace(ns)  # and keepalived, started by our agents
        fabric.stop_processes()
        server.stop()


def _log_tail(cl: Cloud) -> str:
    out = [sh("ip", "netns", "list").stdout, str(states(cl.admin, cl.router["id"]))]
    ports = cl.admin.get("/v2.0/ports?device_owner=network:router_ha_interface")[1]["ports"]
    out += [f"{p['id']} {p['status']} {p['binding:host_id']} {p['binding:vif_type']}"
            for p in ports]
    for node in ("a", "b"):
        out.append(cl.hosts[node].vsctl("show"))
        out += cl.hosts[node].flows("br-int")
    for ns in cloud.router_namespaces(list(cl.hosts.values())):
        out.append(sh("ip", "-n", ns, "-br", "addr").stdout)
    for node in ("a", "b"):
        out.append(f"--- {node}")
        out += cloud.log_lines(cl.hosts[node], "l3-agent.log", 25)
    return "\n".join(out)


def test_one_agent_is_active_and_the_instance_reaches_the_external_host(ha_cloud: Cloud
                                                                         ) -> None:
    cl = ha_cloud
    rid = cl.router["id"]
    assert wait_for(lambda: len(states(cl.admin, rid)) == 2, 60), _log_tail(cl)
    assert wait_for(lambda: len(active_hosts(cl.admin, rid)) == 1, 60), _log_tail(cl)
    assert sorted(states(cl.admin, rid).values()) == ["active", "standby"]
    assert wait_for(lambda: ping(cl.vm, EXT_HOST_IP, tries=1), 60), _log_tail(cl)
    # no split brain: the standby hears the master's adverts (the ping took a while)
    assert len(active_hosts(cl.admin, rid)) == 1, _log_tail(cl)


def _trace_out(cl: Cloud) -> dict[str, Any]:
    """``trace --live`` of a ping from the instance to the external host."""
    status, body = cl.admin.post("/v2.0/trace", {"trace": {
        "port_id": cl.port["id"], "destination_ip": EXT_HOST_IP, "protocol": "icmp",
        "live": True}})
    assert status == 200, body
    return dict(body["trace"]["live"])


def _router_leg(live: dict[str, Any]) -> dict[str, Any]:
    return next(h for h in live["hosts"] if h["leg"] == "router")


def test_trace_live_asks_the_router_s_active_host(ha_cloud: Cloud) -> None:
    cl = ha_cloud
    rid = cl.router["id"]
    assert wait_for(lambda: len(active_hosts(cl.admin, rid)) == 1, 60), _log_tail(cl)
    assert wait_for(lambda: ping(cl.vm, EXT_HOST_IP, tries=1), 60), _log_tail(cl)
    active = active_hosts(cl.admin, rid)[0]
    live = _trace_out(cl)
    router = _router_leg(live)
    assert (router["host"], router["asked"]) == (active, "qrouter"), live
    assert router["namespace"] == f"qrouter-{rid}@{active}", router
    assert live["agrees"], live
    snat = next(h for h in live["hops"] if h["kind"] == "snat")
    assert (snat["live"]["host"], snat["live"]["verdict"]) == (active, "passed"), snat
    cl.traced["active"] = active


def _device_of(ns: str, cidr: str) -> str:
    """The device holding ``cidr`` in ``ns`` (every host's copy has the same names)."""
    return next(line.split()[1] for line in sh("ip", "-n", ns, "-o", "addr").stdout.splitlines()
                if f" {cidr} " in line)


def test_audit_names_a_vip_gone_from_the_active_and_held_by_the_standby(ha_cloud: Cloud
                                                                         ) -> None:
    """The database knows which host is active: a VIP removed there behind
    keepalived's back and added on the standby (a split brain) are both
    named, and ``--repair`` has each agent put keepalived's state back."""
    cl = ha_cloud
    rid = cl.router["id"]
    assert wait_for(lambda: len(active_hosts(cl.admin, rid)) == 1, 60), _log_tail(cl)
    [active] = active_hosts(cl.admin, rid)
    [standby] = [h for h in states(cl.admin, rid) if h != active]
    # a healthy HA cloud audits clean: every host wires the router's ports
    cloud.wait_audit_clean(cl.server)
    vip = "10.101.1.1/24"
    active_ns, standby_ns = f"qrouter-{rid}@{active}", f"qrouter-{rid}@{standby}"
    device = _device_of(active_ns, vip)
    sh("ip", "-n", active_ns, "addr", "del", vip, "dev", device)
    sh("ip", "-n", standby_ns, "addr", "add", vip, "dev", device)
    found = cloud.audit_lines(cl.server, rid)
    assert f"{active}: router {rid} (active here) lacks address 10.101.1.1" in found, found
    assert (f"{standby}: router {rid} (standby here) holds address 10.101.1.1, which only "
            "the active host may (split brain)") in found, found
    repaired = cloud.audit(cl.server, "--repair", "--wait", "30")
    assert f"{active}: resync asked of the L3 agent" in repaired.stdout, repaired.stdout
    assert f"{standby}: resync asked of the L3 agent" in repaired.stdout, repaired.stdout
    assert wait_for(lambda: not cloud.audit_lines(cl.server, rid), 30), \
        cloud.audit(cl.server).stdout
    assert vip in sh("ip", "-n", active_ns, "-o", "addr").stdout
    assert vip not in sh("ip", "-n", standby_ns, "-o", "addr").stdout
    assert wait_for(lambda: ping(cl.vm, EXT_HOST_IP, tries=1), 60), _log_tail(cl)


def test_when_the_active_node_loses_its_ha_link_the_other_takes_over(ha_cloud: Cloud
                                                                      ) -> None:
    cl = ha_cloud
    rid = cl.router["id"]
    actives = active_hosts(cl.admin, rid)
    if len(actives) != 1:
        pytest.skip("needs the election scenario")
    old = actives[0]
    ns = f"qrouter-{rid}@{old}"
    links = sh("ip", "-o", "-n", ns, "link", "show").stdout
    ha_dev = [ln.split(":")[1].strip().split("@")[0] for ln in links.splitlines()
              if ln.split(":")[1].strip().startswith("ha-")]
    assert len(ha_dev) == 1, links
    started = time.monotonic()
    sh("ip", "-n", ns, "link", "set", ha_dev[0], "down")
    assert wait_for(lambda: active_hosts(cl.admin, rid) not in ([], [old]), 60), _log_tail(cl)
    new = active_hosts(cl.admin, rid)
    assert len(new) == 1 and new != [old]
    shown = time.monotonic() - started
    assert states(cl.admin, rid)[old] == "standby"
    assert wait_for(lambda: ping(cl.vm, EXT_HOST_IP, tries=1), 60), _log_tail(cl)
    print(f"ha- link down -> new active shown by the API: {shown:.2f} s, "
          f"-> ping through it again: {time.monotonic() - started:.2f} s")


def test_after_a_failover_trace_live_asks_the_new_active_host(ha_cloud: Cloud) -> None:
    cl = ha_cloud
    rid = cl.router["id"]
    first = cl.traced.get("active")
    if first is None or states(cl.admin, rid).get(first) != "standby":
        pytest.skip("needs the failover scenario")
    new = active_hosts(cl.admin, rid)
    assert len(new) == 1 and new != [first], states(cl.admin, rid)
    assert wait_for(lambda: ping(cl.vm, EXT_HOST_IP, tries=1), 60), _log_tail(cl)
    live = _trace_out(cl)
    assert _router_leg(live)["host"] == new[0], live
    assert live["agrees"], live


def test_deleting_the_router_stops_keepalived_and_removes_its_namespaces(ha_cloud: Cloud
                                                                          ) -> None:
    cl = ha_cloud
    rid = cl.router["id"]
    confs = [Path(f"/tmp/{cl.fabric.prefix}-{n}-l3/ha_confs/{rid}") for n in ("a", "b")]
    pids = [int((c / "keepalived.pid").read_text()) for c in confs]
    net = cl.admin.get("/v2.0/networks?name=ha-tenant")[1]["networks"][0]
    subnet_id = cl.admin.get(f"/v2.0/subnets?network_id={net['id']}")[1]["subnets"][0]["id"]
    assert cl.admin.put(f"/v2.0/routers/{rid}/remove_router_interface",
                        {"subnet_id": subnet_id})[0] == 200
    assert cl.admin.delete(f"/v2.0/routers/{rid}")[0] == 204

    def leftovers() -> list[str]:
        return ([ns for ns in sh("ip", "netns", "list").stdout.split() if rid in ns]
                + [str(c) for c in confs if c.exists()]
                + [f"keepalived {p}" for p in pids if Path(f"/proc/{p}").exists()])
    assert wait_for(lambda: not leftovers(), 60), leftovers()
