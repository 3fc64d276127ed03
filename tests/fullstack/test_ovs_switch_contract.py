"""The real switch adapter (``OvsCtl``) holds to the switch contract the
in-memory switch is tested against, on a private userspace Open vSwitch."""
from __future__ import annotations

import pytest

from neutrino.agents.ovs.ovsctl import OvsCtl
from tests.fullstack.hosts import host, needs_ovs, ovs  # noqa: F401 - host, ovs: the shared fixtures
from tests.unit.switch_contract import SwitchContract

pytestmark = needs_ovs()


@pytest.fixture
def switch(ovs: OvsCtl) -> OvsCtl:
    return ovs


class TestOvsCtl(SwitchContract):
    pass
