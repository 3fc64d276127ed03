"""The namespace proxy as a real daemon (here on 127.0.0.1 of the test's
own namespace): what it passes to the agent's socket (its own identity
headers, never the client's), what it returns, and the process handling
the agents rely on (start, keep, restart on change, stop, reap)."""
from __future__ import annotations

import http.client
import os
import uuid
from pathlib import Path
from typing import Iterator

import pytest

from neutrino.agents.metadata.proxies import NETWORK, ROUTER, MetadataProxies
from tests.conftest import free_port
from tests.metadata.recording import FakeAgent


@pytest.fixture
def proxies(tmp_path: Path, agent_socket: FakeAgent) -> Iterator[MetadataProxies]:
    routers = MetadataProxies(str(tmp_path / "state"), agent_socket.server_address, ROUTER)
    yield routers
    routers.reap(set())


def get(port: int, path: str, headers: dict[str, str]) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path, headers=headers)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def test_the_proxy_stamps_its_router_and_the_client_address_over_forged_ones(
        proxies: MetadataProxies, agent_socket: FakeAgent) -> None:
    router_id, port = str(uuid.uuid4()), free_port()
    proxies.ensure(router_id, None, "127.0.0.1", port)
    status, body = get(port, "/latest/meta-data/instance-id?q=1", {
        "X-Forwarded-For": "10.0.0.99", "X-Neutron-Router-ID": "forged",
        "X-Neutron-Network-ID": "forged-too", "Accept": "text/plain"})
    assert (status, body) == (200, b"seen /latest/meta-data/instance-id?q=1")
    [seen] = agent_socket.seen
    assert seen["X-Forwarded-For"] == "127.0.0.1"
    assert seen["X-Neutron-Router-ID"] == router_id
    assert "X-Neutron-Network-ID" not in seen
    assert seen["Accept"] == "text/plain"


def test_a_network_proxy_names_its_network(tmp_path: Path, agent_socket: FakeAgent) -> None:
    networks = MetadataProxies(str(tmp_path / "state"), agent_socket.server_address, NETWORK)
    network_id, port = str(uuid.uuid4()), free_port()
    networks.ensure(network_id, None, "127.0.0.1", port)
    try:
        assert get(port, "/", {})[0] == 200
        assert agent_socket.seen[0]["X-Neutron-Network-ID"] == network_id
        assert "X-Neutron-Router-ID" not in agent_socket.seen[0]
    finally:
        networks.reap(set())


def test_without_an_agent_the_proxy_answers_503(proxies: MetadataProxies,
                                                agent_socket: FakeAgent) -> None:
    port = free_port()
    proxies.ensure(str(uuid.uuid4()), None, "127.0.0.1", port)
    agent_socket.shutdown()
    agent_socket.server_close()
    os.unlink(agent_socket.server_address)
    assert get(port, "/", {})[0] == 503


def test_ensure_keeps_a_running_proxy_and_restarts_a_changed_one(
        proxies: MetadataProxies) -> None:
    router_id = str(uuid.uuid4())
    first_port, second_port = free_port(), free_port()
    proxies.ensure(router_id, None, "127.0.0.1", first_port)
    pid = Path(proxies.pid_file(router_id)).read_text().strip()
    proxies.ensure(router_id, None, "127.0.0.1", first_port)
    assert Path(proxies.pid_file(router_id)).read_text().strip() == pid
    proxies.ensure(router_id, None, "127.0.0.1", second_port)
    assert Path(proxies.pid_file(router_id)).read_text().strip() != pid
    assert not Path(f"/proc/{pid}").exists() or b"ns_proxy" not in Path(
        f"/proc/{pid}/cmdline").read_bytes()
    assert get(second_port, "/", {})[0] == 200


def test_reap_stops_only_unkept_proxies_of_its_own_kind(
        tmp_path: Path, proxies: MetadataProxies, agent_socket: FakeAgent) -> None:
    kept, gone = str(uuid.uuid4()), str(uuid.uuid4())
    networks = MetadataProxies(str(tmp_path / "state"), agent_socket.server_address, NETWORK)
    net = str(uuid.uuid4())
    for router_id in (kept, gone):
        proxies.ensure(router_id, None, "127.0.0.1", free_port())
    networks.ensure(net, None, "127.0.0.1", free_port())
    try:
        assert proxies.running() == sorted([kept, gone])
        assert networks.running() == [net]
        assert proxies.reap({kept}) == [gone]
        assert proxies.running() == [kept] and networks.running() == [net]
        assert not Path(proxies.pid_file(gone)).exists()
        assert sorted(os.listdir(proxies.pids_dir)) == sorted(
            [f"{kept}.pid", f"{kept}.log", f"{net}.pid", f"{net}.log"])
    finally:
        networks.reap(set())


def test_a_port_in_use_fails_the_start(proxies: MetadataProxies) -> None:
    port = free_port()
    proxies.ensure(str(uuid.uuid4()), None, "127.0.0.1", port)
    with pytest.raises(RuntimeError, match="metadata proxy failed"):
        proxies.ensure(str(uuid.uuid4()), None, "127.0.0.1", port)
