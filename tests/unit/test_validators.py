"""Validators convert as upstream does, or raise with upstream's reason."""
from __future__ import annotations

import pytest

from neutrino import errors
from neutrino.resources import validators as v


def test_subnet_cidr_clears_host_bits_but_needs_a_prefix():
    assert v.subnet_cidr("10.0.0.1/24") == "10.0.0.0/24"
    with pytest.raises(v.Invalid):
        v.subnet_cidr("10.0.0.0")
    with pytest.raises(v.NotConvertible):
        v.subnet_cidr("foo")


@pytest.mark.parametrize("mac,ok", [("fa:16:3e:00:00:01", True), ("01:00:00:00:00:00", True),
                                    ("FA-16-3E-00-00-01", True), ("00:00:00:00:00:00", False),
                                    ("fa:16:3e:00:00", False), ("ff:ff:ff:ff:ff:ff", False),
                                    ("FF-FF-FF-FF-FF-FF", False)])
def test_mac_address(mac, ok):
    if ok:
        assert v.mac_address(mac) == mac.lower().replace("-", ":")
    else:
        with pytest.raises(v.Invalid):
            v.mac_address(mac)


def test_address_pair_without_ip_is_its_own_error():
    with pytest.raises(errors.AllowedAddressPairsMissingIP):
        v.allowed_address_pairs([{"mac_address": "fa:16:3e:00:00:01"}])


def test_dhcp_opt_without_name_is_not_convertible():
    with pytest.raises(v.NotConvertible) as exc:
        v.extra_dhcp_opts([{"opt_value": "x"}])
    assert str(exc.value) == "No valid key specs matched for: {'opt_value': 'x'}"


def test_dhcp_opt_defaults_to_ipv4():
    assert v.extra_dhcp_opts([{"opt_name": "a", "opt_value": "1"}]) == [
        {"opt_name": "a", "opt_value": "1", "ip_version": 4}]


@pytest.mark.parametrize("cidr", ["10.0.0.0/ 24", "10.0.0.0/255.255.255.0", "10.0.0.0",
                                  " 10.0.0.0/24", "10.0.0.0/33", "foo", 24])
def test_subnet_refuses_what_upstreams_subnet_validator_refuses(cidr):
    with pytest.raises(v.Invalid):
        v.subnet(cidr)


def test_subnet_accepts_host_bits_and_stores_the_network():
    assert v.subnet("10.1.0.5/24") == "10.1.0.0/24"
    assert v.subnet("2001:db8::1/64") == "2001:db8::/64"


def test_subnet_pool_prefixes_are_strict_subnets_without_duplicates():
    assert v.prefixes(["10.0.0.0/16", "10.1.0.0/16"]) == ["10.0.0.0/16", "10.1.0.0/16"]
    for bad in (["10.0.0.0/ 24"], ["10.0.0.0/255.255.255.0"], ["10.0.0.0/16", "10.0.0.0/16"],
                "10.0.0.0/16"):
        with pytest.raises(v.Invalid):
            v.prefixes(bad)


@pytest.mark.parametrize("value", [2 ** 31, -(2 ** 31) - 1, 2 ** 63, 10 ** 23, float("inf")])
def test_integers_stay_within_their_column(value):
    with pytest.raises(v.Invalid):
        v.integer()(value)
    assert v.integer(bits=64)(2 ** 40) == 2 ** 40
    with pytest.raises(v.Invalid):
        v.integer(bits=64)(2 ** 63)


def test_integer_attributes_filter_by_integers_their_column_holds():
    from neutrino.resources.attributes import attr
    mtu = attr("mtu", v.or_none(v.integer(68)), is_filter=True)
    assert mtu.convert_filter is not None and mtu.convert_filter("1500") == 1500
    for text in (str(2 ** 31), str(10 ** 23)):
        with pytest.raises(v.Invalid):
            mtu.convert_filter(text)


@pytest.mark.parametrize("address", ["010.0.0.1", "10.0.0.01"])
def test_leading_zeros_name_the_address_upstream_recommends(address):
    with pytest.raises(v.Invalid) as exc:
        v.ip_address(address)
    assert str(exc.value) == (f"'{address}' is not an accepted IP address, "
                              f"'10.0.0.1' is recommended")


def test_address_pair_subnets_are_upstreams_subnets_kept_as_given():
    pair = v.allowed_address_pairs([{"ip_address": "10.0.0.5/24"}])
    assert pair == [{"ip_address": "10.0.0.5/24"}]
    for bad in ("10.0.0.0/255.255.255.0", "10.0.0.0/ 24"):
        with pytest.raises(v.Invalid):
            v.allowed_address_pairs([{"ip_address": bad}])
