"""How an instance's allocation changes with its port's minimum rules (pure;
the real Placement is in tests/placement/test_qos_allocation.py)."""
from __future__ import annotations

import uuid
from typing import Any

import pytest

from neutrino import errors
from neutrino.plugins.qos.allocation import change

PORT = str(uuid.uuid4())
BRIDGE, AGENT = str(uuid.uuid4()), str(uuid.uuid4())


def _bw(min_kbps: int, direction: str = "egress") -> dict[str, Any]:
    return {"id": str(uuid.uuid4()), "rule_type": "minimum_bandwidth",
            "direction": direction, "min_kbps": min_kbps, "min_kpps": None}


def _pps(min_kpps: int, direction: str = "any") -> dict[str, Any]:
    return {"id": str(uuid.uuid4()), "rule_type": "minimum_packet_rate",
            "direction": direction, "min_kbps": None, "min_kpps": min_kpps}


def _group(*rules: dict[str, Any]) -> str:
    return str(uuid.uuid5(uuid.UUID(PORT), ":".join(r["id"] for r in rules)))


def test_each_type_changes_on_the_provider_its_group_was_allocated_on() -> None:
    old_bw, old_pps = _bw(1000), _pps(100)
    new_bw, new_pps = _bw(1500), _pps(40)
    found = change(PORT, {_group(old_bw): BRIDGE, _group(old_pps): AGENT},
                   [old_bw, old_pps], [new_bw, new_pps])
    assert found is not None
    assert found.diff == {BRIDGE: {"NET_BW_EGR_KILOBIT_PER_SEC": 500},
                          AGENT: {"NET_PACKET_RATE_KILOPACKET_PER_SEC": -60}}
    assert found.allocation == {_group(new_bw): BRIDGE, _group(new_pps): AGENT}


def test_equal_amounts_leave_placement_alone_but_the_groups_follow_the_rules() -> None:
    old, new = _bw(1000), _bw(1000)
    found = change(PORT, {_group(old): BRIDGE}, [old], [new])
    assert found is not None
    assert (found.diff, found.allocation) == ({}, {_group(new): BRIDGE})


def test_a_type_the_port_had_no_allocation_for_is_left_to_the_data_plane() -> None:
    old = _bw(1000)
    found = change(PORT, {_group(old): BRIDGE}, [old], [_bw(1000), _pps(10)])
    assert found is not None
    assert found.diff == {}
    assert list(found.allocation.values()) == [BRIDGE]


def test_nothing_to_do_without_minimum_rules_an_allocation_or_old_minimum_rules() -> None:
    limit = {"id": str(uuid.uuid4()), "rule_type": "bandwidth_limit", "direction": "egress"}
    assert change(PORT, {"g": BRIDGE}, [limit], [limit]) is None
    assert change(PORT, None, [_bw(1)], [_bw(2)]) is None
    assert change(PORT, {"g": BRIDGE}, [], [_bw(2)]) is None


def test_the_old_single_provider_is_the_bandwidth_group() -> None:
    old = _bw(1000)
    found = change(PORT, BRIDGE, [old], [])
    assert found is not None
    assert (found.diff, found.allocation) == (
        {BRIDGE: {"NET_BW_EGR_KILOBIT_PER_SEC": -1000}}, {})


@pytest.mark.parametrize(("old", "new"), [("any", "egress"), ("ingress", "any")])
def test_direction_less_and_directed_packet_rates_do_not_replace_each_other(
        old: str, new: str) -> None:
    rule = _pps(10, old)
    with pytest.raises(errors.NotImplementedError):
        change(PORT, {_group(rule): AGENT}, [rule], [_pps(10, new)])
