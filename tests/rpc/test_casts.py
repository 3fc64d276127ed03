"""Casts and fanouts from the server reach agents listening on RabbitMQ."""
from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, Iterator

import oslo_messaging
import pytest

from neutrino.rpc.casts import Casts
from neutrino.rpc.servers import stop_all
from neutrino.rpc.transport import rpc_transport
from tests.rpc.bus import agent_conf


class Recorder:
    target = oslo_messaging.Target(version="1.0")

    def __init__(self, name: str) -> None:
        self.name, self.calls = name, []
        self.seen = threading.Event()

    def port_update(self, context: Any, **kwargs: Any) -> None:
        self.calls.append(("port_update", kwargs))
        self.seen.set()


@pytest.fixture
def agents(tmp_path: Path, vhost: str) -> Iterator[dict[str, Recorder]]:
    """Two hosts' agents listening on topic ``t``."""
    recorders, servers = {}, []
    for host in ("h1", "h2"):
        recorder = Recorder(host)
        server = oslo_messaging.get_rpc_server(
            rpc_transport(agent_conf(tmp_path, vhost, host)),
            oslo_messaging.Target(topic="t", server=host), [recorder])
        server.start()
        recorders[host], servers = recorder, servers + [server]
    time.sleep(0.5)  # let the consumers bind their queues
    yield recorders
    stop_all(servers)
    for server in servers:
        server.transport.cleanup()


def test_a_cast_to_one_host_reaches_only_that_hosts_agent(
        tmp_path: Path, vhost: str, agents: dict[str, Recorder]) -> None:
    casts = Casts(agent_conf(tmp_path, vhost, "server"))
    assert casts.cast("t", "port_update", server="h2", port={"id": "p"})
    assert agents["h2"].seen.wait(20)
    assert agents["h2"].calls == [("port_update", {"port": {"id": "p"}})]
    time.sleep(0.5)
    assert agents["h1"].calls == []


def test_a_fanout_reaches_every_agent(tmp_path: Path, vhost: str,
                                      agents: dict[str, Recorder]) -> None:
    casts = Casts(agent_conf(tmp_path, vhost, "server"))
    assert casts.cast("t", "port_update", fanout=True, port={"id": "q"})
    assert all(r.seen.wait(20) for r in agents.values())
    assert [r.calls for r in agents.values()] == [[("port_update", {"port": {"id": "q"}})]] * 2


def test_without_a_bus_nothing_is_sent(tmp_path: Path) -> None:
    casts = Casts(agent_conf(tmp_path, None, "h"))
    assert casts.enabled is False
    assert casts.cast("t", "port_update", fanout=True) is False
