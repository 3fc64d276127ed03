"""Parsing of range options: what is accepted, and refusals naming the option."""
from __future__ import annotations

import pytest

from neutrino.plugins.ml2 import ranges
from neutrino.plugins.ml2.exceptions import Ml2ConfigError


def test_vlan_ranges_accept_bare_physnets_and_several_ranges_per_physnet():
    parsed = ranges.vlan_ranges(["physnet1:10:20", "physnet2", "physnet1:30:30"])
    assert parsed == {"physnet1": [(10, 20), (30, 30)], "physnet2": []}


@pytest.mark.parametrize("entry", ["physnet1:10:5", "abc:1", "physnet1:x:5", ":1:2",
                                   "physnet1:0:10", "physnet1:1:4095"])
def test_bad_vlan_range_names_option_and_entry(entry):
    with pytest.raises(Ml2ConfigError) as info:
        ranges.vlan_ranges([entry])
    assert str(info.value).startswith(f"[ml2_type_vlan] network_vlan_ranges: invalid entry "
                                      f"'{entry}'")


@pytest.mark.parametrize("entry", ["abc", "5", "10:1", "0:10", "1:16777216", "1:2:3"])
def test_bad_vni_range_names_option_and_entry(entry):
    with pytest.raises(Ml2ConfigError, match=r"^\[ml2_type_vxlan\] vni_ranges: invalid entry"):
        ranges.tunnel_ranges([entry], "[ml2_type_vxlan] vni_ranges",
                             (ranges.MIN_VNI, ranges.MAX_VNI), "VNI")


def test_gre_ids_span_32_bits():
    assert ranges.tunnel_ranges(["1:4294967295"], "gre", (ranges.MIN_GRE_ID, ranges.MAX_GRE_ID),
                                "id") == [(1, 4294967295)]


def test_merge_joins_overlapping_and_adjacent_ranges():
    assert ranges.merge([(10, 20), (1, 5), (6, 8), (15, 30), (40, 41)]) == [(1, 8), (10, 30),
                                                                             (40, 41)]


def test_subtract_cuts_the_holes_out_of_the_ranges():
    assert ranges.subtract([(1, 20), (30, 40)], [(5, 7), (18, 32), (39, 50)]) == [
        (1, 4), (8, 17), (33, 38)]
    assert ranges.subtract([(1, 5)], []) == [(1, 5)]
    assert ranges.subtract([(1, 5)], [(1, 5)]) == []
    assert ranges.subtract([(5, 9)], [(1, 2), (6, 6), (20, 30)]) == [(5, 5), (7, 9)]


def test_physnet_mtus_parse_and_refuse_garbage():
    assert ranges.physnet_mtus(["physnet1:9000", "physnet2:1400"]) == {"physnet1": 9000,
                                                                       "physnet2": 1400}
    for bad in ("physnet1", "physnet1:big", ":1500", "physnet1:20"):
        with pytest.raises(Ml2ConfigError, match=r"\[ml2\] physical_network_mtus"):
            ranges.physnet_mtus([bad])
