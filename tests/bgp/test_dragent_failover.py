"""A DR agent's speaker moves to a live agent once the agent is dead (a server
with a short ``agent_down_time``, whose periodic rescheduling runs often)."""
from __future__ import annotations

import uuid
from typing import Any, Iterator

import pytest

from tests.bgp.helpers import AGENT_TYPE, ML2, made
from tests.conftest import Client, Server
from tests.rpc.bus import bus
from tests.rpc.conftest import vhost  # noqa: F401 - the module's own vhost
from tests.waiting import wait_for


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, vhost: str) -> Iterator[Server]:  # noqa: F811
    server = Server(tmp_path_factory.mktemp("bgp-failover"), extra=(
        f"transport_url = {bus(vhost)}\nservice_plugins = router,bgp\n"
        f"agent_down_time = 3\n{ML2}")).start()
    yield server
    server.stop()


@pytest.fixture
def admin(srv: Server) -> Client:
    return Client(srv.url, project=uuid.uuid4().hex, roles="admin,member,reader")


def test_a_dead_agents_speaker_moves_to_a_live_one(
        admin: Client, dragent: Any) -> None:
    for old in admin.get(f"/v2.0/agents?agent_type={AGENT_TYPE}")[1]["agents"]:
        admin.put(f"/v2.0/agents/{old['id']}", {"agent": {"admin_state_up": False}})
    first, first_speakers = dragent()
    speaker = made(admin, "/v2.0/bgp-speakers", "bgp_speaker", local_as=64800, ip_version=4)
    assert wait_for(lambda: speaker["id"] in first_speakers.running, 20)
    second, second_speakers = dragent()
    first.stop()
    assert wait_for(lambda: speaker["id"] in second_speakers.running, 40)
    status, body = admin.get(f"/v2.0/bgp-speakers/{speaker['id']}/bgp-dragents")
    assert [a["host"] for a in body["agents"]] == [second.host], body
    admin.delete(f"/v2.0/bgp-speakers/{speaker['id']}")
