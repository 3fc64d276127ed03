"""A server with the bgp plugin beside the session's plugins; DR agents with
in-memory speakers on the module's RabbitMQ vhost (``dragent``)."""
from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

from neutrino.agents.bgp.agent import BgpDrAgent
from neutrino.agents.bgp.speaker import MemorySpeakers
from neutrino.service import make_conf
from tests.conftest import Client, Server, serving, with_plugin
from tests.rpc.bus import bus


@pytest.fixture(scope="module")
def bgp_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from serving(tmp_path_factory.mktemp("bgp-server"), with_plugin("bgp"))


@pytest.fixture
def admin(bgp_server: Server) -> Client:
    return Client(bgp_server.url, project=uuid.uuid4().hex, roles="admin,member,reader")


@pytest.fixture
def owner(bgp_server: Server) -> Client:
    return Client(bgp_server.url, project=uuid.uuid4().hex, roles="member,reader")


@pytest.fixture
def other(bgp_server: Server) -> Client:
    return Client(bgp_server.url, project=uuid.uuid4().hex, roles="member,reader")


@pytest.fixture
def dragent(tmp_path: Path, vhost: str) -> Iterator[Any]:
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
