"""The real switch adapter (``OvsCtl``) holds to the switch contract the
in-memory switch is tested against, on a private userspace Open vSwitch."""
from __future__ import annotations

import os
from typing import Iterator

import pytest

from neutrino.agents.ovs.ovsctl import OvsCtl
from tests.fullstack.hosts import Fabric, Host, needs_ovs
from tests.unit.switch_contract import SwitchContract

pytestmark = needs_ovs()


@pytest.fixture(scope="module")
def host(fabric: Fabric) -> Host:
    return fabric.host("c")


@pytest.fixture
def switch(host: Host) -> Iterator[OvsCtl]:
    saved = os.environ.get("OVS_RUNDIR")
    os.environ["OVS_RUNDIR"] = str(host.dir)
    try:
        yield OvsCtl()
    finally:
        if saved is None:
            os.environ.pop("OVS_RUNDIR", None)
        else:
            os.environ["OVS_RUNDIR"] = saved


class TestOvsCtl(SwitchContract):
    pass
