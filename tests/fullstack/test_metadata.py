"""Fullstack: instances fetch http://169.254.169.254/ through the metadata path.

One emulated host runs the OVS, DHCP (``enable_isolated_metadata``), L3 and
metadata agents; the compute metadata API is a recording HTTP server in
the test (the one thing mocked). An instance on a network without a router
gets the metadata route to its DHCP port by DHCP (option 121) and is served
by the proxy in the ``qdhcp-`` namespace; an instance behind a router is
served by the router's proxy (nft redirect to ``metadata_port``). Either
way the compute service sees the instance's port ``device_id``, its project
and the HMAC-SHA256 signature. Deleting the router and the network stops
their proxies.
"""
from __future__ import annotations

import hashlib
import hmac
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest

from neutrino.agents.metadata.proxies import ROUTER, MetadataProxies
from neutrino.agents.metadata.shared_client import SharedMetadataProxy
from tests.conftest import Client, Server
from tests.fullstack import cloud
from tests.fullstack.hosts import Fabric, Host, needs_ovs, sh
from tests.metadata.recording import Backend
from tests.rpc.bus import bus
from tests.waiting import wait_for

pytestmark = needs_ovs()
SECRET = "fullstack-secret"
PROJECT = "proj-md"

# udhcpc hook that also applies classless static routes (option 121)
HOOK = """#!/bin/sh
case "$1" in
  deconfig) ip addr flush dev "$interface"; ip link set "$interface" up ;;
  bound|renew)
    ip addr flush dev "$interface"
    ip addr add "$ip/$mask" dev "$interface"
    [ -n "$mtu" ] && ip link set "$interface" mtu "$mtu"
    if [ -n "$staticroutes" ]; then
      set -- $staticroutes
      while [ $# -ge 2 ]; do ip route replace "$1" via "$2" dev "$interface"; shift 2; done
    elif [ -n "$router" ]; then
      ip route replace default via "${router%% *}" dev "$interface"
    fi ;;
esac
exit 0
"""
FETCH = ("import sys, urllib.request\n"
         "r = urllib.request.urlopen('http://169.254.169.254' + sys.argv[1], timeout=5)\n"
         "sys.stdout.write(r.read().decode())\n")


@dataclass
class Env:
    server: Server
    admin: Client
    fabric: Fabric
    host: Host
    backend: Backend
    state: Path


def _conf(host: Host, vhost: str, kind: str, state: Path, extra: str) -> Path:
    path = host.dir / f"{kind}-agent.conf"
    path.write_text(
        f"[DEFAULT]\nhost = {host.hostname}\ntransport_url = {bus(vhost)}\ndebug = true\n"
        f"log_file = {host.dir / (kind + '-agent.log')}\nstate_path = {state}\n"
        f"metadata_proxy_socket = {state / 'metadata_proxy'}\n"
        f"interface_driver = openvswitch\nresync_interval = 1\n{extra}"
        "[AGENT]\nreport_interval = 2\n")
    return path


@pytest.fixture(scope="module")
def env(fabric: Fabric, vhost: str, tmp_path_factory: pytest.TempPathFactory
        ) -> Iterator[Env]:
    backend = Backend().start()
    server = cloud.start_server(tmp_path_factory.mktemp("md-server"), vhost, "router")
    state = fabric.public_dir("md-state")  # one state_path: one socket for all
    try:
        admin = Client(server.url, roles="admin")
        host, peer = fabric.host("m"), fabric.host("p")
        fabric.underlay(host, peer, "10.99.0.5", "10.99.0.6")
        cloud.add_phys_bridge(host)
        cloud.start_agent(fabric, host, cloud.agent_conf(host, vhost, "10.99.0.5"))
        extras = {"dhcp": "enable_isolated_metadata = true\n", "l3": "",
                  "metadata": (f"nova_metadata_host = 127.0.0.1\n"
                               f"nova_metadata_port = {backend.port}\n"
                               f"metadata_proxy_shared_secret = {SECRET}\n")}
        for kind, extra in extras.items():
            cloud.start_agent(fabric, host, _conf(host, vhost, kind, state, extra), kind)
        for agent_type in ("Open vSwitch agent", "DHCP agent", "L3 agent", "Metadata agent"):
            assert wait_for(lambda: cloud.agent_alive(admin, host.hostname, agent_type),
                            60), (agent_type, _logs(host))
        yield Env(server, admin, fabric, host, backend, state)
    finally:
        fabric.stop_processes()
        # the DHCP agent's one proxy outlives it (as dnsmasq) in the agent's namespace
        SharedMetadataProxy(str(state), str(state / "metadata_proxy")).shutdown()
        cloud.remove_agent_namespaces(server)
        server.stop()
        backend.stop()



def _logs(host: Host) -> str:
    out = []
    for name in ("dhcp-agent.log", "l3-agent.log", "metadata-agent.log"):
        path = host.dir / name
        if path.exists():
            lines = [ln for ln in path.read_text().splitlines()
                     if "amqp" not in ln and "kombu" not in ln]
            out.append(f"--- {name}\n" + "\n".join(lines[-30:]))
    return "\n".join(out)


def _lease(env: Env, ns: str) -> str | None:
    hook = env.fabric.root / "udhcpc-md-hook.sh"
    if not hook.exists():
        hook.write_text(HOOK)
        hook.chmod(0o755)
    for _ in range(3):
        done = sh("ip", "netns", "exec", ns, "busybox", "udhcpc", "-i", "eth0", "-f", "-q",
                  "-n", "-t", "5", "-T", "1", "-O", "mtu", "-O", "staticroutes",
                  "-s", str(hook), check=False, timeout=60)
        if done.returncode == 0:
            return sh("ip", "-n", ns, "route", "get", "169.254.169.254").stdout
    return None


def _fetch(ns: str, path: str, tries: int = 40) -> str | None:
    """GET http://169.254.169.254<path> from the instance (the proxy may still be starting)."""
    for _ in range(tries):
        done = sh("ip", "netns", "exec", ns, sys.executable, "-c", FETCH, path, check=False,
                  timeout=15)
        if done.returncode == 0:
            return done.stdout
        wait_for(lambda: False, 0.5)
    return None


def _instance(env: Env, net: dict[str, Any], suffix: str) -> tuple[str, dict[str, Any]]:
    port = cloud.bound_port(env.admin, net, env.host.hostname, project_id=PROJECT)
    ns = env.host.instance(suffix, port, prefix_len=None)
    assert cloud.wait_active(env.admin, port["id"], 60), _logs(env.host)
    return ns, port


def _network_gone(env: Env, net_id: str) -> bool:
    """The DHCP agent has let a deleted network go: no proxy, no namespace
    (the module's teardown stops the agents, which would leave both)."""
    networks = SharedMetadataProxy(str(env.state), str(env.state / "metadata_proxy"))
    return (net_id not in networks.running()
            and f"qdhcp-{net_id}" not in sh("ip", "netns", "list").stdout.split())


def _assert_signed_request_for(env: Env, port: dict[str, Any]) -> None:
    seen = [s for s in env.backend.seen if s.headers.get("X-Instance-ID") == port["device_id"]]
    assert seen, env.backend.seen
    headers = seen[-1].headers
    assert seen[-1].path == "/latest/meta-data/instance-id"
    assert headers["X-Tenant-ID"] == PROJECT
    assert headers["X-Forwarded-For"] == port["fixed_ips"][0]["ip_address"]
    assert headers["X-Instance-ID-Signature"] == hmac.new(
        SECRET.encode(), port["device_id"].encode(), hashlib.sha256).hexdigest()


def test_an_instance_on_an_isolated_network_is_served_from_the_dhcp_namespace(env: Env
                                                                             ) -> None:
    net = cloud.network(env.admin, "md-iso", "10.110.1.0/24")
    ns, port = _instance(env, net, "mi")
    route = _lease(env, ns)
    assert route is not None, _logs(env.host)
    status, body = env.admin.get(f"/v2.0/ports?network_id={net['id']}"
                                 "&device_owner=network:dhcp")
    dhcp_ip = body["ports"][0]["fixed_ips"][0]["ip_address"]
    assert f"via {dhcp_ip}" in route  # option 121 from DHCP
    assert _fetch(ns, "/latest/meta-data/instance-id") == "instance-id", _logs(env.host)
    _assert_signed_request_for(env, port)
    networks = SharedMetadataProxy(str(env.state), str(env.state / "metadata_proxy"))
    assert networks.running() == [net["id"]]
    env.host.unplug("mi")
    assert env.admin.delete(f"/v2.0/ports/{port['id']}")[0] == 204
    assert env.admin.delete(f"/v2.0/networks/{net['id']}")[0] == 204
    assert wait_for(lambda: _network_gone(env, net["id"]), 30), _logs(env.host)


def test_an_instance_behind_a_router_is_served_by_the_router_proxy(env: Env) -> None:
    admin = env.admin
    net = cloud.network(admin, "md-routed", "10.110.2.0/24")
    status, router = admin.post("/v2.0/routers", {"router": {"name": "md-r"}})
    assert status == 201, router
    rid = router["router"]["id"]
    subnet_id = admin.get(f"/v2.0/subnets?network_id={net['id']}")[1]["subnets"][0]["id"]
    assert admin.put(f"/v2.0/routers/{rid}/add_router_interface",
                     {"subnet_id": subnet_id})[0] == 200
    ns, port = _instance(env, net, "mr")
    route = _lease(env, ns)
    assert route is not None and "via 10.110.2.1" in route, (route, _logs(env.host))
    routers = MetadataProxies(str(env.state), str(env.state / "metadata_proxy"), ROUTER)
    assert wait_for(lambda: routers.running() == [rid], 60), _logs(env.host)
    assert _fetch(ns, "/latest/meta-data/instance-id") == "instance-id", _logs(env.host)
    _assert_signed_request_for(env, port)
    # the routed network has no proxy of its own (its subnet is not isolated)
    networks = SharedMetadataProxy(str(env.state), str(env.state / "metadata_proxy"))
    assert net["id"] not in networks.running()
    assert admin.put(f"/v2.0/routers/{rid}/remove_router_interface",
                     {"subnet_id": subnet_id})[0] == 200
    assert admin.delete(f"/v2.0/routers/{rid}")[0] == 204
    assert wait_for(lambda: routers.running() == [], 60), _logs(env.host)
    env.host.unplug("mr")
    assert admin.delete(f"/v2.0/ports/{port['id']}")[0] == 204
    assert admin.delete(f"/v2.0/networks/{net['id']}")[0] == 204
    assert wait_for(lambda: _network_gone(env, net["id"]), 30), _logs(env.host)
