"""What the OVS agent reports of its devices' capacities for Placement
(``[ovs] resource_provider_*``), under upstream's configuration keys."""
from __future__ import annotations

import socket
from pathlib import Path

import pytest

from neutrino.agents.ovs.agent import OvsAgent
from neutrino.agents.ovs.memory_switch import MemorySwitch
from tests.rpc.bus import agent_conf


def _agent(tmp: Path, ovs: str) -> OvsAgent:
    conf = agent_conf(tmp, None, "h1", f"[ovs]\nbridge_mappings = physnet1:br-phy\n{ovs}")
    return OvsAgent(conf, ovs=MemorySwitch([]))  # type: ignore[arg-type]


def test_configured_capacities_are_reported_in_configurations(tmp_path: Path) -> None:
    agent = _agent(tmp_path, "resource_provider_bandwidths = br-phy:1000:2000,rp_tunnelled::300\n"
                             "resource_provider_hypervisors = br-phy:compute-1\n"
                             "resource_provider_default_hypervisor = compute-2\n"
                             "resource_provider_packet_processing_without_direction = :500\n"
                             "resource_provider_inventory_defaults = reserved:10\n")
    reported = agent.configurations()
    assert reported["bridge_mappings"] == {"physnet1": "br-phy"}
    assert reported["resource_provider_bandwidths"] == {
        "br-phy": {"egress": 1000, "ingress": 2000},
        "rp_tunnelled": {"egress": None, "ingress": 300}}
    assert reported["resource_provider_hypervisors"] == {"br-phy": "compute-1",
                                                         "rp_tunnelled": "compute-2"}
    # an empty hypervisor name is the agent's host
    assert reported["resource_provider_packet_processing_without_direction"] == {
        "h1": {"any": 500}}
    assert reported["resource_provider_packet_processing_with_direction"] == {}
    assert reported["resource_provider_inventory_defaults"] == {"reserved": 10}
    assert reported["resource_provider_packet_processing_inventory_defaults"] == {
        "allocation_ratio": 1.0, "min_unit": 1, "step_size": 1, "reserved": 0}


def test_without_options_nothing_is_offered(tmp_path: Path) -> None:
    reported = _agent(tmp_path, "").configurations()
    assert reported["resource_provider_bandwidths"] == {}
    # every device's hypervisor defaults to this machine's name
    assert reported["resource_provider_hypervisors"] == {
        "br-phy": socket.gethostname(), "rp_tunnelled": socket.gethostname()}


@pytest.mark.parametrize("ovs, says", [
    ("resource_provider_bandwidths = br-other:1:1\n", "Device name br-other is missing"),
    ("resource_provider_bandwidths = br-phy:1\n", "expected a tuple with 3 values"),
    ("resource_provider_bandwidths = br-phy:x:1\n", "non-negative integer"),
    ("resource_provider_bandwidths = br-phy:1:1,br-phy:2:2\n", "listed multiple times"),
    ("resource_provider_packet_processing_without_direction = :1\n"
     "resource_provider_packet_processing_with_direction = :1:1\n", "mutually exclusive"),
    ("resource_provider_inventory_defaults = colour:1\n", "unexpected options: colour"),
])
def test_a_malformed_capacity_stops_the_agent_naming_the_option(
        tmp_path: Path, ovs: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        _agent(tmp_path, ovs)
