"""The DHCP agent's one metadata proxy process, for real, in real network
namespaces: one process listens on 169.254.169.254:80 in several
namespaces and stamps each request with its own namespace's network;
a network let go closes its listener; a listener whose address is not
there yet is opened once it is; a proxy gone is started again and serves
every network it was given. Root only (namespaces)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Iterator

import pytest

from neutrino.agents.metadata.shared_client import SharedMetadataProxy
from tests.metadata.recording import FakeAgent
from tests.waiting import wait_for

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (namespaces)")

METADATA_IP = "169.254.169.254"
FETCH = """
import http.client, sys
conn = http.client.HTTPConnection(sys.argv[1], 80, timeout=10, source_address=(sys.argv[2], 0))
conn.request("GET", "/latest/meta-data/instance-id", headers={
    "X-Neutron-Network-ID": "forged", "X-Forwarded-For": "10.0.0.99"})
resp = conn.getresponse()
print(resp.status, resp.read().decode())
"""


def sh(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=30)


@pytest.fixture
def namespaces() -> Iterator[list[str]]:
    """Two namespaces, each with the metadata address and a client address on lo."""
    tag = uuid.uuid4().hex[:8]
    names = [f"mdsp-{tag}-{i}" for i in range(2)]
    try:
        for i, ns in enumerate(names):
            assert sh("ip", "netns", "add", ns).returncode == 0
            sh("ip", "-n", ns, "link", "set", "lo", "up")
            sh("ip", "-n", ns, "addr", "add", f"10.0.0.{i + 2}/32", "dev", "lo")
        yield names
    finally:
        for ns in names:
            sh("ip", "netns", "del", ns)


@pytest.fixture
def proxy(tmp_path: Path, agent_socket: FakeAgent) -> Iterator[SharedMetadataProxy]:
    shared = SharedMetadataProxy(str(tmp_path / "state"), agent_socket.server_address)
    yield shared
    shared.shutdown()


def add_metadata_address(ns: str) -> None:
    assert sh("ip", "-n", ns, "addr", "add", f"{METADATA_IP}/32", "dev", "lo").returncode == 0


def fetch(ns: str, client_ip: str) -> str:
    done = sh("ip", "netns", "exec", ns, sys.executable, "-c", FETCH, METADATA_IP, client_ip)
    return done.stdout.strip() if done.returncode == 0 else f"failed: {done.stderr[-200:]}"


def listener_pids(ns: str) -> set[str]:
    """The pids holding a TCP listener on 169.254.169.254:80 in ``ns``."""
    out = sh("ip", "netns", "exec", ns, "ss", "-Hltnp", f"src {METADATA_IP}:80").stdout
    return set(re.findall(r"pid=(\d+)", out))


def serve_each(proxy: SharedMetadataProxy, namespaces: list[str]) -> list[str]:
    """A new network per namespace, given to the proxy with the metadata
    address in place; returned once the proxy serves them all."""
    nets = [str(uuid.uuid4()) for _ in namespaces]
    for net, ns in zip(nets, namespaces):
        add_metadata_address(ns)
        proxy.ensure(net, ns, METADATA_IP, 80)
    assert wait_for(lambda: proxy.running() == sorted(nets)), proxy.running()
    return nets


def test_one_process_serves_two_networks_namespaces_each_with_its_own_identity(
        proxy: SharedMetadataProxy, namespaces: list[str], agent_socket: FakeAgent) -> None:
    nets = serve_each(proxy, namespaces)
    pid = Path(proxy.pid_file).read_text().strip()
    assert [listener_pids(ns) for ns in namespaces] == [{pid}, {pid}]
    for i, ns in enumerate(namespaces):
        assert fetch(ns, f"10.0.0.{i + 2}") == "200 seen /latest/meta-data/instance-id"
    assert [(s["X-Neutron-Network-ID"], s["X-Forwarded-For"]) for s in agent_socket.seen] == [
        (nets[0], "10.0.0.2"), (nets[1], "10.0.0.3")]


def test_a_network_let_go_closes_its_listener_and_keeps_the_others(
        proxy: SharedMetadataProxy, namespaces: list[str]) -> None:
    nets = serve_each(proxy, namespaces)
    proxy.stop(nets[0])
    assert wait_for(lambda: not listener_pids(namespaces[0])), listener_pids(namespaces[0])
    assert fetch(namespaces[0], "10.0.0.2").startswith("failed")
    assert fetch(namespaces[1], "10.0.0.3") == "200 seen /latest/meta-data/instance-id"
    assert proxy.running() == [nets[1]] and proxy.wanted() == [nets[1]]


def test_a_listener_whose_address_is_not_there_yet_opens_once_it_is(
        proxy: SharedMetadataProxy, namespaces: list[str]) -> None:
    net, ns = str(uuid.uuid4()), namespaces[0]
    proxy.ensure(net, ns, METADATA_IP, 80)
    assert wait_for(lambda: Path(proxy.served_file).exists())
    assert proxy.running() == []
    add_metadata_address(ns)
    assert wait_for(lambda: proxy.running() == [net])
    assert fetch(ns, "10.0.0.2") == "200 seen /latest/meta-data/instance-id"


def test_a_proxy_gone_is_started_again_and_serves_every_network_given(
        proxy: SharedMetadataProxy, namespaces: list[str]) -> None:
    nets = serve_each(proxy, namespaces)
    first = Path(proxy.pid_file).read_text().strip()
    proxy.shutdown()
    assert proxy.running() == []
    proxy.ensure(nets[0], namespaces[0], METADATA_IP, 80)  # unchanged, but nobody serves it
    assert wait_for(lambda: proxy.running() == sorted(nets))
    assert Path(proxy.pid_file).read_text().strip() != first
    assert fetch(namespaces[1], "10.0.0.3") == "200 seen /latest/meta-data/instance-id"
