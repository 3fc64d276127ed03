"""Which port status transitions the compute service hears about (upstream's rule)."""
from __future__ import annotations

import pytest

from neutrino.notifiers.nova import is_compute_port, status_event

PORT = {"id": "p", "device_id": "vm", "device_owner": "compute:nova"}


@pytest.mark.parametrize("before,after,name,status", [
    ("DOWN", "ACTIVE", "network-vif-plugged", "completed"),
    ("BUILD", "ACTIVE", "network-vif-plugged", "completed"),
    (None, "ACTIVE", "network-vif-plugged", "completed"),
    ("DOWN", "ERROR", "network-vif-plugged", "failed"),
    ("ACTIVE", "DOWN", "network-vif-unplugged", "completed"),
])
def test_transitions_that_make_an_event(before: str | None, after: str, name: str,
                                        status: str) -> None:
    assert status_event(PORT, before, after) == {"server_uuid": "vm", "name": name,
                                                 "status": status, "tag": "p"}


@pytest.mark.parametrize("before,after", [("DOWN", "BUILD"), ("BUILD", "DOWN"),
                                          ("ACTIVE", "BUILD"), ("ACTIVE", "ERROR")])
def test_transitions_that_say_nothing(before: str, after: str) -> None:
    assert status_event(PORT, before, after) is None


def test_only_instances_ports_count() -> None:
    assert is_compute_port(PORT)
    assert not is_compute_port({**PORT, "device_id": ""})
    assert not is_compute_port({**PORT, "device_owner": "network:dhcp"})
