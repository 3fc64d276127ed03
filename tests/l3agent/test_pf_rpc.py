"""Port forwardings reach L3 agents: in the router's sync data
(``_port_forwardings``, the shape ``agents/l3/model`` reads), and each
change tells the router's agent."""
from __future__ import annotations

from typing import Iterator

import pytest

from tests.api import _helpers as h
from tests.conftest import Server
from tests.l3 import _l3
from tests.l3agent.conftest import hosts_of, start_server, synced_once_told


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, vhost: str) -> Iterator[Server]:
    server = start_server(tmp_path_factory.mktemp("pfrpc"), vhost, plugins="router,port_forwarding")
    yield server
    server.stop()


def _behind_a_router(admin, member, agent):
    """A router on ``agent`` with a gateway, an instance port behind it and a
    floating IP of its external network: (router, port, floating IP)."""
    ext, _ = _l3.external_network(admin)
    router = _l3.router(member, external_gateway_info={"network_id": ext["id"]})
    subnet = _l3.private_subnet(member)
    _l3.add_interface(member, router["id"], subnet_id=subnet["id"])
    assert hosts_of(admin, router["id"]) == [agent.host]
    return router, h.port(member, subnet["network_id"]), _l3.floatingip(member, ext["id"])


def test_forwardings_are_in_the_sync_data_and_changes_reach_the_agent(admin, member, l3_agents):
    agent = l3_agents()
    router, port, fip = _behind_a_router(admin, member, agent)
    address = port["fixed_ips"][0]["ip_address"]
    url = f"/v2.0/floatingips/{fip['id']}/port_forwardings"
    agent.recorder.calls.clear()
    status, made = member.post(url, {"port_forwarding": {
        "protocol": "tcp", "internal_port_id": port["id"], "internal_ip_address": address,
        "internal_port": 22, "external_port": 2222}})
    assert status == 201, made
    pf = made["port_forwarding"]
    synced = synced_once_told(agent, router["id"])
    assert synced["_port_forwardings"] == [{
        "id": pf["id"], "floating_ip_address": fip["floating_ip_address"],
        "internal_ip_address": address, "protocol": "tcp", "external_port": 2222,
        "internal_port": 22}]
    agent.recorder.calls.clear()
    status, body = member.put(f"{url}/{pf['id']}", {"port_forwarding": {
        "external_port_range": "8000:8010", "internal_port_range": "9000:9010"}})
    assert status == 200, body
    synced = synced_once_told(agent, router["id"])
    [shown] = synced["_port_forwardings"]
    assert (shown["external_port_range"], shown["internal_port_range"]) == ("8000:8010",
                                                                            "9000:9010")
    agent.recorder.calls.clear()
    assert member.delete(f"{url}/{pf['id']}")[0] == 204
    synced = synced_once_told(agent, router["id"])
    assert synced["_port_forwardings"] == []


def _forwarded_port(admin, member, agent):
    """``_behind_a_router`` with the floating IP forwarding a port to the
    instance port."""
    router, port, fip = _behind_a_router(admin, member, agent)
    agent.recorder.calls.clear()
    status, made = member.post(f"/v2.0/floatingips/{fip['id']}/port_forwardings", {
        "port_forwarding": {"protocol": "tcp", "internal_port_id": port["id"],
                            "internal_ip_address": port["fixed_ips"][0]["ip_address"],
                            "internal_port": 22, "external_port": 2222}})
    assert status == 201, made
    # the agent has had the create's news: later news is the test's own
    assert synced_once_told(agent, router["id"])["_port_forwardings"]
    return router, port, fip


def test_deleting_a_forwardings_port_tells_the_router_s_agent(admin, member, l3_agents):
    agent = l3_agents()
    router, port, fip = _forwarded_port(admin, member, agent)
    agent.recorder.calls.clear()
    assert member.delete(f"/v2.0/ports/{port['id']}")[0] == 204
    assert synced_once_told(agent, router["id"])["_port_forwardings"] == []
    status, body = member.get(f"/v2.0/floatingips/{fip['id']}")
    assert status == 200 and body["floatingip"]["router_id"] is None, body


def test_a_port_losing_the_forwarded_address_tells_the_router_s_agent(admin, member, l3_agents):
    agent = l3_agents()
    router, port, _ = _forwarded_port(admin, member, agent)
    [was] = port["fixed_ips"]
    other = was["ip_address"].rsplit(".", 1)[0] + ".250"
    agent.recorder.calls.clear()
    status, body = member.put(f"/v2.0/ports/{port['id']}", {"port": {"fixed_ips": [
        {"subnet_id": was["subnet_id"], "ip_address": other}]}})
    assert status == 200, body
    assert synced_once_told(agent, router["id"])["_port_forwardings"] == []
