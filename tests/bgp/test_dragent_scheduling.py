"""``bgp_dragent_scheduler`` and the DR agent over RabbitMQ: a speaker goes to
a live DR agent (one speaker per agent), the admin moves it through
``/v2.0/agents/{id}/bgp-drinstances``, and the agent (in-memory speakers)
follows every change the server casts: peers, floating IPs associated and
released, the speaker unhosted and deleted."""
from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

from neutrino.agents.bgp.agent import BgpDrAgent
from neutrino.agents.bgp.speaker import MemorySpeakers
from neutrino.service import make_conf
from tests.conftest import Client, Server
from tests.rpc.bus import bus
from tests.rpc.conftest import vhost  # noqa: F401 - the module's own vhost
from tests.waiting import wait_for

AGENT_TYPE = "BGP dynamic routing agent"
ML2 = ("[ml2]\ntype_drivers = flat,vlan,vxlan\ntenant_network_types = vxlan\n"
       "mechanism_drivers = openvswitch\n[ml2_type_vxlan]\nvni_ranges = 500:600\n"
       "[ml2_type_flat]\nflat_networks = *\n")


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, vhost: str) -> Iterator[Server]:  # noqa: F811
    server = Server(tmp_path_factory.mktemp("bgp-rpc"), extra=(
        f"transport_url = {bus(vhost)}\nservice_plugins = router,bgp\n{ML2}")).start()
    yield server
    server.stop()


@pytest.fixture
def admin(srv: Server) -> Client:
    return Client(srv.url, project=uuid.uuid4().hex, roles="admin,member,reader")


@pytest.fixture
def dragent(tmp_path: Path, vhost: str) -> Iterator[Any]:  # noqa: F811
    """``make()``: a DR agent on a host of its own, registered and running."""
    made: list[BgpDrAgent] = []

    def make() -> tuple[BgpDrAgent, MemorySpeakers]:
        host = f"bgp-{uuid.uuid4().hex[:8]}"
        path = tmp_path / f"{host}.conf"
        path.write_text(f"[DEFAULT]\nhost = {host}\ntransport_url = {bus(vhost)}\n"
                        f"periodic_interval = 3600\n[AGENT]\nreport_interval = 1\n"
                        f"[BGP]\nbgp_router_id = 192.0.2.1\n")
        speakers = MemorySpeakers()
        agent = BgpDrAgent(make_conf(["--config-file", str(path)]), speakers)
        made.append(agent)
        agent.register()
        agent.start()
        return agent, speakers
    yield make
    for agent in made:
        agent.stop()


def _made(client: Client, path: str, key: str, **attrs: Any) -> dict[str, Any]:
    status, body = client.post(path, {key: attrs})
    assert status == 201, body
    return dict(body[key])


def _agent_id(admin: Client, host: str) -> str:
    status, body = admin.get(f"/v2.0/agents?host={host}&agent_type={AGENT_TYPE}")
    assert status == 200 and len(body["agents"]) == 1, body
    return str(body["agents"][0]["id"])


def test_a_speaker_follows_its_agent_and_the_floating_ips_it_advertises(
        admin: Client, dragent: Any) -> None:
    agent, speakers = dragent()
    agent_id = _agent_id(admin, agent.host)
    speaker = _made(admin, "/v2.0/bgp-speakers", "bgp_speaker", local_as=64512, ip_version=4)
    sid = speaker["id"]
    status, body = admin.get(f"/v2.0/bgp-speakers/{sid}/bgp-dragents")
    assert status == 200 and [a["id"] for a in body["agents"]] == [agent_id], body
    assert body["agents"][0]["agent_type"] == AGENT_TYPE
    status, body = admin.get(f"/v2.0/agents/{agent_id}/bgp-drinstances")
    assert status == 200 and [s["id"] for s in body["bgp_speakers"]] == [sid], body
    assert wait_for(lambda: sid in speakers.running, 20)

    peer = _made(admin, "/v2.0/bgp-peers", "bgp_peer", peer_ip="192.0.2.2", remote_as=64513,
                 auth_type="md5", password="s3cret")
    admin.put(f"/v2.0/bgp-speakers/{sid}/add_bgp_peer", {"bgp_peer_id": peer["id"]})
    assert wait_for(lambda: "192.0.2.2" in speakers.running[sid].peers, 20)
    assert speakers.running[sid].peers["192.0.2.2"].password == "s3cret"

    ext = _made(admin, "/v2.0/networks", "network", name="ext",
                **{"router:external": True, "provider:network_type": "flat",
                   "provider:physical_network": "public"})
    _made(admin, "/v2.0/subnets", "subnet", network_id=ext["id"], ip_version=4,
          cidr="198.51.100.0/24")
    net = _made(admin, "/v2.0/networks", "network", name="inside")
    sub = _made(admin, "/v2.0/subnets", "subnet", network_id=net["id"], ip_version=4,
                cidr="10.8.0.0/24")
    router = _made(admin, "/v2.0/routers", "router",
                   external_gateway_info={"network_id": ext["id"]})
    admin.put(f"/v2.0/routers/{router['id']}/add_router_interface", {"subnet_id": sub["id"]})
    gateway = router["external_gateway_info"]["external_fixed_ips"][0]["ip_address"]
    admin.put(f"/v2.0/bgp-speakers/{sid}/add_gateway_network", {"network_id": ext["id"]})
    port = _made(admin, "/v2.0/ports", "port", network_id=net["id"])
    fip = _made(admin, "/v2.0/floatingips", "floatingip", floating_network_id=ext["id"],
                port_id=port["id"])
    route = f"{fip['floating_ip_address']}/32"
    assert wait_for(lambda: speakers.running[sid].routes.get(route) == gateway, 20), (
        speakers.running[sid])
    admin.put(f"/v2.0/floatingips/{fip['id']}", {"floatingip": {"port_id": None}})
    assert wait_for(lambda: route not in speakers.running[sid].routes, 20)
    admin.put(f"/v2.0/floatingips/{fip['id']}", {"floatingip": {"port_id": port["id"]}})
    assert wait_for(lambda: route in speakers.running[sid].routes, 20)
    admin.delete(f"/v2.0/floatingips/{fip['id']}")
    assert wait_for(lambda: route not in speakers.running[sid].routes, 20)

    admin.put(f"/v2.0/bgp-speakers/{sid}/remove_bgp_peer", {"bgp_peer_id": peer["id"]})
    assert wait_for(lambda: not speakers.running[sid].peers, 20)

    assert admin.delete(f"/v2.0/agents/{agent_id}/bgp-drinstances/{sid}")[0] == 204
    assert wait_for(lambda: sid not in speakers.running, 20)
    assert admin.get(f"/v2.0/bgp-speakers/{sid}/bgp-dragents")[1] == {"agents": []}
    status, body = admin.delete(f"/v2.0/agents/{agent_id}/bgp-drinstances/{sid}")
    assert status == 404 and body["NeutronError"]["type"] == "DrAgentNotHostingBgpSpeaker"
    status, body = admin.post(f"/v2.0/agents/{agent_id}/bgp-drinstances",
                              {"bgp_speaker_id": sid})
    assert (status, body) == (201, None)
    assert wait_for(lambda: sid in speakers.running, 20)
    other = _made(admin, "/v2.0/bgp-speakers", "bgp_speaker", local_as=64600, ip_version=4)
    status, body = admin.post(f"/v2.0/agents/{agent_id}/bgp-drinstances",
                              {"bgp_speaker_id": other["id"]})
    assert status == 409 and body["NeutronError"]["type"] == "DrAgentAssociationError", body
    assert admin.delete(f"/v2.0/bgp-speakers/{sid}")[0] == 204
    assert wait_for(lambda: sid not in speakers.running, 20)
    admin.delete(f"/v2.0/bgp-speakers/{other['id']}")


def test_the_scheduler_api_is_the_admins(admin: Client, srv: Server) -> None:
    member = Client(srv.url, project=uuid.uuid4().hex, roles="member,reader")
    speaker = _made(admin, "/v2.0/bgp-speakers", "bgp_speaker", local_as=64512, ip_version=4)
    missing = str(uuid.uuid4())
    for method, path, body in (
            ("GET", f"/v2.0/agents/{missing}/bgp-drinstances", None),
            ("POST", f"/v2.0/agents/{missing}/bgp-drinstances",
             {"bgp_speaker_id": speaker["id"]}),
            ("DELETE", f"/v2.0/agents/{missing}/bgp-drinstances/{speaker['id']}", None),
            ("GET", f"/v2.0/bgp-speakers/{speaker['id']}/bgp-dragents", None)):
        status, answer = member.req(method, path, body)
        assert status == 403, (method, path, answer)
    status, body = admin.get(f"/v2.0/agents/{missing}/bgp-drinstances")
    assert status == 404 and body["NeutronError"]["type"] == "AgentNotFound", body
    status, body = admin.post(f"/v2.0/agents/{missing}/bgp-drinstances",
                              {"bgp_speaker_id": speaker["id"]})
    assert status == 404 and body["NeutronError"]["type"] == "AgentNotFound", body
    status, body = admin.post(f"/v2.0/agents/{missing}/bgp-drinstances", {})
    assert status == 400, body
    admin.delete(f"/v2.0/bgp-speakers/{speaker['id']}")


def test_a_speaker_made_before_any_agent_goes_to_the_first_that_reports(
        admin: Client, dragent: Any) -> None:
    # the agents of earlier tests, stopped but not yet dead, take nothing more
    for old in admin.get(f"/v2.0/agents?agent_type={AGENT_TYPE}")[1]["agents"]:
        admin.put(f"/v2.0/agents/{old['id']}", {"agent": {"admin_state_up": False}})
    speaker = _made(admin, "/v2.0/bgp-speakers", "bgp_speaker", local_as=64700, ip_version=4)
    assert admin.get(f"/v2.0/bgp-speakers/{speaker['id']}/bgp-dragents")[1] == {"agents": []}
    agent, speakers = dragent()
    assert wait_for(lambda: speaker["id"] in speakers.running, 30)
    status, body = admin.get(f"/v2.0/bgp-speakers/{speaker['id']}/bgp-dragents")
    assert [a["host"] for a in body["agents"]] == [agent.host]
    admin.delete(f"/v2.0/bgp-speakers/{speaker['id']}")
    assert wait_for(lambda: not speakers.running, 20)
