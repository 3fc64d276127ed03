"""TypeManager without a database: loading, registration, checks, MTU, provider input."""
from __future__ import annotations

import logging

import pytest

from neutrino import errors
from neutrino.plugins.ml2.driver_api import Segment
from neutrino.plugins.ml2.exceptions import Ml2ConfigError
from neutrino.plugins.ml2.managers import TypeManager
from neutrino.plugins.ml2.type_vlan import VlanTypeDriver
from neutrino.resources.attributes import AUTO

VLAN_CONF = "[ml2_type_vlan]\nnetwork_vlan_ranges = physnet1:100:199,physnet2\n"


class SecondVlanDriver(VlanTypeDriver):
    """A third-party driver for a type that is already registered."""


class NotADriver:
    def __init__(self, conf: object) -> None:
        pass


def _tm(make_conf, text: str = "") -> TypeManager:
    return TypeManager(make_conf(text))


def _body(**provider: object) -> dict[str, object]:
    body: dict[str, object] = {"provider:network_type": AUTO, "provider:physical_network": AUTO,
                               "provider:segmentation_id": AUTO, "segments": AUTO}
    body.update(provider)
    return body


def _invalid(tm: TypeManager, body: dict[str, object]) -> str:
    with pytest.raises(errors.InvalidInput) as info:
        tm.allocate(None, body)  # validation fails before any database access
    return info.value.msg


def test_default_configuration_registers_every_upstream_type(make_conf):
    tm = _tm(make_conf)
    assert sorted(tm.drivers) == ["flat", "geneve", "gre", "local", "vlan", "vxlan"]
    assert tm.tenant_network_types == ["local"]
    assert tm.external_network_type is None


def test_driver_named_by_class_path_is_loaded(make_conf):
    tm = _tm(make_conf, "[ml2]\ntype_drivers = neutrino.plugins.ml2.type_local:LocalTypeDriver\n")
    assert list(tm.drivers) == ["local"]


def test_second_driver_for_a_type_is_logged_and_ignored(make_conf, caplog):
    with caplog.at_level(logging.ERROR, logger="neutrino.plugins.ml2.managers"):
        tm = _tm(make_conf, "[ml2]\ntype_drivers = vlan,tests.ml2.test_type_manager."
                            "SecondVlanDriver\ntenant_network_types = vlan\n")
    assert type(tm.drivers["vlan"]) is VlanTypeDriver
    assert any("SecondVlanDriver" in r.getMessage() and "ignored" in r.getMessage()
               for r in caplog.records)


def test_class_that_is_not_a_type_driver_is_refused(make_conf):
    with pytest.raises(Ml2ConfigError, match=r"\[ml2\] type_drivers.*not a type driver"):
        _tm(make_conf, "[ml2]\ntype_drivers = tests.ml2.test_type_manager.NotADriver\n"
                       "tenant_network_types =\n")


def test_tenant_network_types_keep_the_configured_order(make_conf):
    tm = _tm(make_conf, "[ml2]\ntenant_network_types = vxlan,vlan,local\n")
    assert tm.tenant_network_types == ["vxlan", "vlan", "local"]


def test_external_type_needs_a_driver(make_conf):
    with pytest.raises(Ml2ConfigError, match="external_network_type"):
        _tm(make_conf, "[ml2]\ntype_drivers = local\nexternal_network_type = gre\n")
    assert _tm(make_conf, "[ml2]\nexternal_network_type = gre\n").external_network_type == "gre"


# -- MTU ---------------------------------------------------------------------------

@pytest.mark.parametrize("text, segment, expected", [
    ("", Segment("vxlan", None, 5), 1450),
    ("", Segment("gre", None, 5), 1458),
    ("", Segment("geneve", None, 5), 1450),
    ("[ml2_type_geneve]\nmax_header_size = 38\n", Segment("geneve", None, 5), 1442),
    ("[ml2]\npath_mtu = 1400\n", Segment("vxlan", None, 5), 1350),
    ("[DEFAULT]\nglobal_physnet_mtu = 9000\n[ml2]\npath_mtu = 1600\n", Segment("gre", None, 5),
     1558),
    ("[ml2]\noverlay_ip_version = 6\n", Segment("vxlan", None, 5), 1430),
    ("", Segment("vlan", "physnet1", 5), 1500),
    ("[ml2]\nphysical_network_mtus = physnet1:1400\n", Segment("vlan", "physnet1", 5), 1400),
    ("[ml2]\nphysical_network_mtus = physnet1:9000\n", Segment("vlan", "physnet1", 5), 1500),
    ("[ml2]\nphysical_network_mtus = physnet1:1400\n", Segment("flat", "physnet1"), 1400),
    ("[ml2]\nphysical_network_mtus = physnet1:1400\n", Segment("vlan", "physnet2", 5), 1500),
    ("[DEFAULT]\nglobal_physnet_mtu = 9000\n", Segment("local"), 9000),
])
def test_network_mtu_is_what_upstream_computes(make_conf, text, segment, expected):
    tm = _tm(make_conf, text + VLAN_CONF)
    assert tm.network_mtu([segment], None) == expected


def test_network_mtu_is_the_smallest_over_segments(make_conf):
    tm = _tm(make_conf, VLAN_CONF)
    assert tm.network_mtu([Segment("vlan", "physnet1", 5), Segment("vxlan", None, 7),
                           Segment("local")], None) == 1450


def test_requested_mtu_larger_than_the_segments_allow_is_refused(make_conf):
    tm = _tm(make_conf, VLAN_CONF)
    assert tm.network_mtu([Segment("vxlan", None, 5)], 1400) == 1400
    with pytest.raises(errors.InvalidInput, match="Requested MTU is too big, maximum is 1450"):
        tm.network_mtu([Segment("vxlan", None, 5)], 1451)


# -- provider input -----------------------------------------------------------------

@pytest.mark.parametrize("provider, message", [
    ({"provider:segmentation_id": 3455}, "network_type required"),
    ({"provider:physical_network": "physnet1"}, "network_type required"),
    ({"provider:network_type": "bogus"}, "network_type value 'bogus' not supported"),
    ({"provider:network_type": "vlan", "provider:segmentation_id": 3455},
     "segmentation_id requires physical_network for VLAN provider network"),
    ({"provider:network_type": "vlan", "provider:physical_network": "physnet9"},
     "physical_network 'physnet9' unknown for VLAN provider network"),
    ({"provider:network_type": "vlan", "provider:physical_network": "physnet1",
      "provider:segmentation_id": 4095}, "segmentation_id out of range (1 through 4094)"),
    ({"provider:network_type": "vlan", "provider:physical_network": "physnet1",
      "provider:segmentation_id": 0}, "segmentation_id out of range (1 through 4094)"),
    ({"provider:network_type": "vlan", "provider:physical_network": "physnet2"},
     "Physical network physnet2 requires segmentation_id to be specified when creating "
     "a provider network"),
    ({"provider:network_type": "flat"}, "physical_network required for flat provider network"),
    ({"provider:network_type": "flat", "provider:physical_network": "physnet1",
      "provider:segmentation_id": 3}, "segmentation_id prohibited for flat provider network"),
    ({"provider:network_type": "local", "provider:physical_network": "physnet1"},
     "physical_network prohibited for local provider network"),
    ({"provider:network_type": "local", "provider:segmentation_id": 3},
     "segmentation_id prohibited for local provider network"),
    ({"provider:network_type": "vxlan", "provider:physical_network": "physnet1"},
     "provider:physical_network specified for vxlan network"),
    ({"provider:network_type": "gre", "provider:physical_network": "physnet1"},
     "provider:physical_network specified for gre network"),
])
def test_invalid_provider_segment_gives_upstreams_message(make_conf, provider, message):
    assert _invalid(_tm(make_conf, VLAN_CONF), _body(**provider)) == (
        f"Invalid input for operation: {message}.")


def test_flat_networks_restrict_physical_networks_or_disable_flat(make_conf):
    body = _body(**{"provider:network_type": "flat", "provider:physical_network": "physnet3"})
    msg = _invalid(_tm(make_conf, "[ml2_type_flat]\nflat_networks = physnet1\n"), body)
    assert "physical_network 'physnet3' unknown for flat provider network" in msg
    msg = _invalid(_tm(make_conf, "[ml2_type_flat]\nflat_networks =\n"), body)
    assert "Flat provider networks are disabled" in msg


def test_segments_and_provider_attributes_are_exclusive(make_conf):
    body = _body(**{"provider:network_type": "vlan",
                    "segments": [{"provider:network_type": "local"}]})
    with pytest.raises(errors.SegmentsSetInConjunctionWithProviders) as info:
        _tm(make_conf, VLAN_CONF).allocate(None, body)
    assert info.value.code == 400
    assert info.value.msg == "Segments and provider values cannot both be set."


def test_duplicate_full_segments_are_refused(make_conf):
    seg = {"provider:network_type": "vlan", "provider:physical_network": "physnet1",
           "provider:segmentation_id": 77}
    with pytest.raises(errors.SegmentsContainDuplicateEntry) as info:
        _tm(make_conf, VLAN_CONF).allocate(None, _body(segments=[seg, dict(seg)]))
    assert (info.value.code, info.value.msg) == (400, "Duplicate segment entry in request.")
