"""The in-memory host the Linux bridge agent's tests use holds to the host contract."""
from __future__ import annotations

import pytest

from neutrino.agents.linuxbridge.memory_host import MemoryHost
from tests.unit.bridge_host_contract import BridgeHostContract, Plug


@pytest.fixture
def host() -> MemoryHost:
    return MemoryHost()


@pytest.fixture
def plug(host: MemoryHost) -> Plug:
    return host.plug


class TestMemoryHost(BridgeHostContract):
    pass
