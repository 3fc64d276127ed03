"""The Linux bridge agent's real host adapter (``linux.Host``) holds to the
host contract the in-memory host is tested against, in a namespace of its own."""
from __future__ import annotations

import os
import shutil
import uuid
from typing import Iterator

import pytest

from neutrino.agents import iproute
from neutrino.agents.linuxbridge.linux import Host
from tests.unit.bridge_host_contract import BridgeHostContract, Plug

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not all(shutil.which(t) for t in ("ip", "bridge", "nft")),
    reason="needs root, iproute2 and nftables")


@pytest.fixture(scope="module")
def namespace() -> Iterator[str]:
    name = f"nc-{uuid.uuid4().hex[:8]}"
    iproute.ip("netns", "add", name)
    try:
        iproute.ip("link", "set", "lo", "up", namespace=name)
        yield name
    finally:
        iproute.ip("netns", "delete", name, check=False)


@pytest.fixture
def host(namespace: str) -> Host:
    return Host(namespace)


@pytest.fixture
def plug(namespace: str) -> Plug:
    def plug(name: str) -> None:
        # a veth's end, as the compute service plugs an instance (no dummy
        # devices in every kernel)
        iproute.ip("link", "add", name, "type", "veth", "peer", "name", f"{name}p",
                   namespace=namespace)
    return plug


class TestHost(BridgeHostContract):
    pass
