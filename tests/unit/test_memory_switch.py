"""The in-memory switch the agent's tests use holds to the switch contract."""
from __future__ import annotations

import pytest

from neutrino.agents.ovs.memory_switch import MemorySwitch
from neutrino.agents.ovs.switch import VifPort
from tests.unit.switch_contract import SwitchContract


@pytest.fixture
def switch() -> MemorySwitch:
    return MemorySwitch()


class TestMemorySwitch(SwitchContract):
    pass


def test_a_test_plugs_and_unplugs_vifs_and_the_journal_says_what_was_written() -> None:
    switch = MemorySwitch([VifPort("tap-a", "a", "m", 4, None, {})])
    switch.set_port_tag("tap-a", 2, {"net_uuid": "n"})
    switch.plug("br-int", VifPort("tap-b", "b", "m", 5, None, {}))
    assert [(v.name, v.tag) for v in switch.vif_ports("br-int")] == [("tap-a", 2),
                                                                    ("tap-b", None)]
    switch.unplug("tap-a")
    assert list(switch.vifs) == ["tap-b"] and switch.journal == [("tag", "tap-a", 2)]
