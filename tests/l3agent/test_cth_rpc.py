"""Conntrack helpers reach L3 agents: in the router's sync data
(``_conntrack_helpers``), and each change tells the router's agent."""
from __future__ import annotations

from typing import Iterator

import pytest

from tests.conftest import Server
from tests.l3 import _l3
from tests.l3agent.conftest import hosts_of, start_server, synced_once_told


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, vhost: str) -> Iterator[Server]:
    server = start_server(tmp_path_factory.mktemp("cthrpc"), vhost,
                          "allowed_conntrack_helpers = tftp:udp,ftp:tcp\n",
                          plugins="router,conntrack_helper")
    yield server
    server.stop()


def test_helpers_are_in_the_sync_data_and_changes_reach_the_agent(admin, member, l3_agents):
    agent = l3_agents()
    router = _l3.router(member)
    _l3.add_interface(member, router["id"], subnet_id=_l3.private_subnet(member)["id"])
    assert hosts_of(admin, router["id"]) == [agent.host]
    url = f"/v2.0/routers/{router['id']}/conntrack_helpers"
    agent.recorder.calls.clear()
    status, made = member.post(url, {"conntrack_helper": {"helper": "tftp", "protocol": "udp",
                                                          "port": 69}})
    assert status == 201, made
    cth = made["conntrack_helper"]
    synced = synced_once_told(agent, router["id"])
    assert synced["_conntrack_helpers"] == [{**cth, "router_id": router["id"]}]
    # The option is the server's: a helper it does not name is refused.
    status, body = member.post(url, {"conntrack_helper": {"helper": "sip", "protocol": "udp",
                                                          "port": 5060}})
    assert status == 400 and body["NeutronError"]["type"] == "ConntrackHelperNotAllowed"
    agent.recorder.calls.clear()
    assert member.put(f"{url}/{cth['id']}", {"conntrack_helper": {"port": 6969}})[0] == 200
    synced = synced_once_told(agent, router["id"])
    assert [c["port"] for c in synced["_conntrack_helpers"]] == [6969]
    agent.recorder.calls.clear()
    assert member.delete(f"{url}/{cth['id']}")[0] == 204
    synced = synced_once_told(agent, router["id"])
    assert synced["_conntrack_helpers"] == []
