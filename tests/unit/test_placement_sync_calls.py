"""The placement report's plan: which calls make Placement hold an agent's
devices (pure; the real Placement is in tests/placement)."""
from __future__ import annotations

import tomllib
import uuid
from pathlib import Path

from neutrino.plugins.loader import load_class
from neutrino.plugins.placement.plugin import PlacementReportPlugin
from neutrino.plugins.placement.state import Call, Driver, sync_calls
from neutrino.resources import placement as pl

NS = pl.OVS_UUID_NAMESPACE
DRIVER = Driver("Open vSwitch agent", NS, ("normal",))


def _uuid(name: str) -> str:
    return str(uuid.uuid5(NS, name))


def test_traits_then_providers_parents_first_then_traits_and_inventories() -> None:
    conf = {"bridge_mappings": {"physnet1": "br-phy"},
            "resource_provider_bandwidths": {"br-phy": {"egress": 100, "ingress": None}},
            "resource_provider_hypervisors": {"br-phy": "cn1", "rp_tunnelled": "cn1"},
            "resource_provider_inventory_defaults": {"reserved": 1},
            "resource_provider_packet_processing_with_direction": {
                "cn1": {"egress": 7, "ingress": 8}},
            "resource_provider_packet_processing_inventory_defaults": {}}
    calls = sync_calls(conf, DRIVER, {"cn1": "root"}, "rp_tunnelled")
    assert calls == [
        Call("ensure_trait", ("CUSTOM_PHYSNET_PHYSNET1",)),
        Call("ensure_trait", ("CUSTOM_NETWORK_TUNNEL_PROVIDER",)),
        Call("ensure_trait", ("CUSTOM_VNIC_TYPE_NORMAL",)),
        Call("ensure_provider", (_uuid("cn1"), "cn1:Open vSwitch agent", "root")),
        Call("ensure_provider", (_uuid("cn1:br-phy"), "cn1:Open vSwitch agent:br-phy",
                                 _uuid("cn1"))),
        Call("set_traits", (_uuid("cn1:br-phy"),
                            ["CUSTOM_PHYSNET_PHYSNET1", "CUSTOM_VNIC_TYPE_NORMAL"])),
        Call("set_traits", (_uuid("cn1"), ["CUSTOM_VNIC_TYPE_NORMAL"])),
        # an omitted direction has no inventory
        Call("set_inventories", (_uuid("cn1:br-phy"), {
            "NET_BW_EGR_KILOBIT_PER_SEC": {"reserved": 1, "total": 100}})),
        Call("set_inventories", (_uuid("cn1"), {
            "NET_PACKET_RATE_EGR_KILOPACKET_PER_SEC": {"total": 7},
            "NET_PACKET_RATE_IGR_KILOPACKET_PER_SEC": {"total": 8}})),
    ]


def test_a_bridge_shared_by_a_physnet_and_tunnels_carries_both_traits() -> None:
    conf = {"bridge_mappings": {"physnet1": "br-ex"},
            "resource_provider_bandwidths": {"br-ex": {"egress": 1, "ingress": 1}},
            "resource_provider_hypervisors": {"br-ex": "cn1"}}
    calls = sync_calls(conf, DRIVER, {"cn1": "root"}, "br-ex")
    traits = [c.args[1] for c in calls if c.method == "set_traits" and c.args[0] != _uuid("cn1")]
    assert traits == [["CUSTOM_NETWORK_TUNNEL_PROVIDER", "CUSTOM_PHYSNET_PHYSNET1",
                       "CUSTOM_VNIC_TYPE_NORMAL"]]


def test_physnet_traits_are_normalised_as_os_traits_does() -> None:
    assert pl.physnet_trait("phys-net.1") == "CUSTOM_PHYSNET_PHYS_NET_1"
    assert pl.vnic_type_trait("smart-nic") == "CUSTOM_VNIC_TYPE_SMART_NIC"


def test_the_service_plugin_alias_is_placement() -> None:
    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    target = pyproject["project"]["entry-points"]["neutrino.service_plugins"]["placement"]
    assert load_class("neutrino.service_plugins", target) is PlacementReportPlugin
