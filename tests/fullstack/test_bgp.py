"""Fullstack: BGP dynamic routing with a real BGP router as the peer.

A neutrino server, the BGP DR agent as a process of its own (GoBGP's
gobgpd as its speaker) and BIRD in a namespace of its own as the peer
router, on a link that is also the external network's subnet (as an
upstream peer router sits on the provider network): the session comes up
with an MD5 password, and BIRD's kernel routing table gains a floating
IP's host route (next hop the router's gateway address) when the floating
IP is associated and loses it when it is released; a project subnet of the
external network's address scope behind the router is there while the
router's interface is. A restarted agent advertises the routes again and
leaves no speaker behind.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.conftest import ROOT, Client, Server
from tests.fullstack.hosts import Fabric, sh
from tests.rpc.bus import bus
from tests.waiting import wait_for

LOCAL_AS, PEER_AS = 64512, 64513
PASSWORD = "s3cret"
ML2 = ("[ml2]\ntype_drivers = flat,vlan,vxlan\ntenant_network_types = vxlan\n"
       "mechanism_drivers = openvswitch\n[ml2_type_flat]\nflat_networks = *\n"
       "[ml2_type_vxlan]\nvni_ranges = 1000:1100\n")

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not all(shutil.which(t) for t in ("gobgpd", "gobgp", "bird", "birdc")),
    reason="needs root, gobgpd and BIRD (Debian: gobgpd, bird2)")

BIRD_CONF = """router id {peer};
protocol device {{ }}
protocol kernel {{ ipv4 {{ export all; import none; }}; }}
protocol bgp neutrino {{
  local {peer} as {peer_as};
  neighbor {speaker} as {local_as};
  password "{password}";
  ipv4 {{ import all; export none; }};
}}
"""


@dataclass
class Bgp:
    server: Server
    admin: Client
    fabric: Fabric
    peer_ns: str
    bird_ctl: Path
    subnet: str  # the link and external subnet, "a.b.c"
    agent_conf: Path
    state: Path
    agent: subprocess.Popen[bytes] | None = None

    def start_agent(self) -> None:
        with open(self.state / "agent.out", "ab") as out:
            self.agent = subprocess.Popen(
                [sys.executable, "-m", "neutrino.cmd.main", "agent", "bgp", "--config-file",
                 str(self.agent_conf)], stdout=out, stderr=out, cwd=str(self.state),
                env={**os.environ, "PYTHONPATH": str(ROOT)})
        self.fabric.procs.append(self.agent)

    def stop_agent(self) -> None:
        if self.agent is not None and self.agent.poll() is None:
            self.agent.terminate()
            self.agent.wait(30)

    def routes(self) -> str:
        return sh("ip", "-n", self.peer_ns, "-4", "route", "show", "proto", "bird").stdout

    def established(self) -> bool:
        out = sh("birdc", "-s", str(self.bird_ctl), "show", "protocols", "neutrino",
                 check=False).stdout
        return "Established" in out

    def log(self) -> str:
        text = ""
        for name in ("agent.log", "agent.out"):
            path = self.state / name
            if path.exists():
                text += path.read_text()[-3000:]
        return text


def _gobgpds(state: Path) -> list[int]:
    pids = []
    for pidfile in state.glob("bgp/*/gobgpd.pid"):
        try:
            pid = int(pidfile.read_text())
            if b"gobgpd" in Path(f"/proc/{pid}/cmdline").read_bytes():
                pids.append(pid)
        except (OSError, ValueError):
            pass
    return pids


@pytest.fixture(scope="module")
def env(fabric: Fabric, vhost: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bgp]:
    octet = int(fabric.prefix[1:], 16) % 200 + 20
    subnet = f"100.127.{octet}"
    speaker_ip, peer_ip = f"{subnet}.250", f"{subnet}.251"
    server = Server(tmp_path_factory.mktemp("fullstack-bgp"), extra=(
        f"transport_url = {bus(vhost)}\nservice_plugins = router,bgp\n{ML2}")).start()
    state = fabric.public_dir("bgp")
    try:
        admin = Client(server.url, project=uuid.uuid4().hex, roles="admin")
        peer_ns = fabric.netns("bgp")
        link = f"{fabric.prefix}bg"
        sh("ip", "link", "add", link, "type", "veth", "peer", "name", "eth0", "netns", peer_ns)
        sh("ip", "addr", "add", f"{speaker_ip}/24", "dev", link)
        sh("ip", "link", "set", link, "up")
        sh("ip", "-n", peer_ns, "addr", "add", f"{peer_ip}/24", "dev", "eth0")
        sh("ip", "-n", peer_ns, "link", "set", "eth0", "up")
        bird_conf, bird_ctl = state / "bird.conf", state / "bird.ctl"
        bird_conf.write_text(BIRD_CONF.format(peer=peer_ip, peer_as=PEER_AS, speaker=speaker_ip,
                                              local_as=LOCAL_AS, password=PASSWORD))
        sh("ip", "netns", "exec", peer_ns, "bird", "-c", str(bird_conf), "-s", str(bird_ctl),
           "-P", str(state / "bird.pid"))
        agent_conf = state / "bgp-agent.conf"
        agent_conf.write_text(
            f"[DEFAULT]\nhost = {fabric.prefix}-bgp\ntransport_url = {bus(vhost)}\n"
            f"debug = true\nlog_file = {state / 'agent.log'}\nstate_path = {state}\n"
            f"periodic_interval = 5\n[AGENT]\nreport_interval = 2\n"
            f"[BGP]\nbgp_router_id = {speaker_ip}\nbgp_listen_port = -1\n")
        bgp = Bgp(server, admin, fabric, peer_ns, bird_ctl, subnet, agent_conf, state)
        bgp.start_agent()
        yield bgp
    finally:
        fabric.stop_processes()
        for pid in _gobgpds(state):  # an agent killed before it could end its speakers
            os.kill(pid, signal.SIGKILL)
        server.stop()
        sh("ip", "link", "del", f"{fabric.prefix}bg", check=False)


def _made(client: Client, path: str, key: str, **attrs: Any) -> dict[str, Any]:
    status, body = client.post(path, {key: attrs})
    assert status == 201, body
    return dict(body[key])


def test_the_peer_learns_floating_ips_and_scoped_subnets_as_they_come_and_go(env: Bgp) -> None:
    admin, net = env.admin, env.subnet
    assert wait_for(lambda: any(a["alive"] for a in admin.get(
        "/v2.0/agents?agent_type=BGP dynamic routing agent")[1]["agents"]), 60), env.log()

    scope = _made(admin, "/v2.0/address-scopes", "address_scope", name="bgp", ip_version=4)
    ext_pool = _made(admin, "/v2.0/subnetpools", "subnetpool", name="ext",
                     prefixes=[f"{net}.0/24"], default_prefixlen=24,
                     address_scope_id=scope["id"])
    inner_pool = _made(admin, "/v2.0/subnetpools", "subnetpool", name="inner",
                       prefixes=["10.177.0.0/16"], default_prefixlen=24,
                       address_scope_id=scope["id"])
    ext = _made(admin, "/v2.0/networks", "network", name="provider",
                **{"router:external": True, "provider:network_type": "flat",
                   "provider:physical_network": "bgpnet"})
    _made(admin, "/v2.0/subnets", "subnet", network_id=ext["id"], ip_version=4,
          cidr=f"{net}.0/24", subnetpool_id=ext_pool["id"], gateway_ip=f"{net}.1",
          allocation_pools=[{"start": f"{net}.10", "end": f"{net}.100"}])
    inner = _made(admin, "/v2.0/networks", "network", name="inner")
    inner_sub = _made(admin, "/v2.0/subnets", "subnet", network_id=inner["id"], ip_version=4,
                      subnetpool_id=inner_pool["id"], cidr="10.177.5.0/24")
    router = _made(admin, "/v2.0/routers", "router", name="r",
                   external_gateway_info={"network_id": ext["id"]})
    gateway = router["external_gateway_info"]["external_fixed_ips"][0]["ip_address"]

    speaker = _made(admin, "/v2.0/bgp-speakers", "bgp_speaker", local_as=LOCAL_AS,
                    ip_version=4, name="fullstack")
    peer = _made(admin, "/v2.0/bgp-peers", "bgp_peer", peer_ip=f"{net}.251",
                 remote_as=PEER_AS, auth_type="md5", password=PASSWORD)
    sid = speaker["id"]
    admin.put(f"/v2.0/bgp-speakers/{sid}/add_bgp_peer", {"bgp_peer_id": peer["id"]})
    admin.put(f"/v2.0/bgp-speakers/{sid}/add_gateway_network", {"network_id": ext["id"]})
    assert wait_for(env.established, 60), env.log()

    admin.put(f"/v2.0/routers/{router['id']}/add_router_interface",
              {"subnet_id": inner_sub["id"]})
    scoped = f"10.177.5.0/24 via {gateway}"
    assert wait_for(lambda: scoped in env.routes(), 30), (env.routes(), env.log())

    port = _made(admin, "/v2.0/ports", "port", network_id=inner["id"])
    fip = _made(admin, "/v2.0/floatingips", "floatingip", floating_network_id=ext["id"])
    host_route = f"{fip['floating_ip_address']} via {gateway}"
    assert host_route not in env.routes()
    admin.put(f"/v2.0/floatingips/{fip['id']}", {"floatingip": {"port_id": port["id"]}})
    assert wait_for(lambda: host_route in env.routes(), 30), (env.routes(), env.log())
    admin.put(f"/v2.0/floatingips/{fip['id']}", {"floatingip": {"port_id": None}})
    assert wait_for(lambda: host_route not in env.routes(), 30), env.routes()
    admin.put(f"/v2.0/floatingips/{fip['id']}", {"floatingip": {"port_id": port["id"]}})
    assert wait_for(lambda: host_route in env.routes(), 30), env.routes()

    # a restarted agent ends its speaker and advertises everything again
    env.stop_agent()
    assert wait_for(lambda: host_route not in env.routes(), 30), env.routes()
    assert _gobgpds(env.state) == []
    env.start_agent()
    assert wait_for(lambda: host_route in env.routes() and scoped in env.routes(), 60), (
        env.routes(), env.log())

    assert admin.delete(f"/v2.0/floatingips/{fip['id']}")[0] == 204
    assert wait_for(lambda: host_route not in env.routes(), 30), env.routes()
    admin.put(f"/v2.0/routers/{router['id']}/remove_router_interface",
              {"subnet_id": inner_sub["id"]})
    assert wait_for(lambda: scoped not in env.routes(), 30), env.routes()

    assert admin.delete(f"/v2.0/bgp-speakers/{sid}")[0] == 204
    assert wait_for(lambda: not env.established() and not _gobgpds(env.state), 30), env.log()
