"""RabbitMQ vhost per module (as tests/rpc), a server with l2population on
it, and recording agents on named hosts."""
from __future__ import annotations

import uuid
from pathlib import Path
from typing import Callable, Iterator

import pytest

from neutrino.rpc.servers import together
from tests.agent_notify.recorder import RecordingAgent, bus
from tests.conftest import Client, Server
from tests.rpc.conftest import vhost  # noqa: F401 - the fixture, reused

ML2 = ("[ml2]\ntype_drivers = flat,vlan,vxlan\ntenant_network_types = vxlan\n"
       "mechanism_drivers = openvswitch,l2population\n"
       "[ml2_type_vxlan]\nvni_ranges = 500:600\n")


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, vhost: str) -> Iterator[Server]:  # noqa: F811
    server = Server(tmp_path_factory.mktemp("agent_notify"),
                    extra=f"transport_url = {bus(vhost)}\n{ML2}")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def admin(srv: Server) -> Client:
    return Client(srv.url, roles="admin")


@pytest.fixture
def agents(vhost: str, tmp_path: Path) -> Iterator[Callable[..., RecordingAgent]]:  # noqa: F811
    """``agents(name, tunneling_ip)``: an OVS agent that reported in and records
    every notification it receives."""
    started: list[RecordingAgent] = []

    def start(name: str | None = None, tunneling_ip: str = "192.0.2.1") -> RecordingAgent:
        agent = RecordingAgent(vhost, tmp_path, name or f"host-{uuid.uuid4().hex[:6]}",
                               tunneling_ip)
        started.append(agent)
        agent.start()
        return agent
    yield start
    together(agent.stop for agent in started)  # each waits for its idle listeners
