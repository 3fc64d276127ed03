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
                                    ("fa:16:3e:00:00", False)])
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
