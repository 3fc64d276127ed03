"""IPAM's entry point for ports (``neutrino.ipam.request``): the rules that
need no database (SLAAC addresses, routers, kept addresses)."""
from __future__ import annotations

from typing import Any

import pytest

from neutrino import errors
from neutrino.ipam import request as ipam
from neutrino.ipam import subnet_rules

MAC = "fa:16:3e:00:00:01"
SLAAC: dict[str, Any] = {"id": "s6", "ip_version": 6, "cidr": "2001:db8::/64",
                         "ipv6_address_mode": "slaac", "ipv6_ra_mode": "slaac"}


def _request(fixed_ips: list[dict[str, Any]] | None, is_router: bool = False,
             keep: dict[tuple[str, str], bool] | None = None) -> ipam.AddressRequest:
    return ipam.AddressRequest("net", MAC, fixed_ips, is_router, [SLAAC], [SLAAC], keep or {})


def test_a_port_gets_the_eui64_address_of_each_slaac_subnet() -> None:
    eui64 = subnet_rules.eui64_address(SLAAC["cidr"], MAC)
    assert ipam.allocate(None, _request(None)) == [("s6", eui64)]  # type: ignore[arg-type]
    assert ipam.allocate(None, _request([{"subnet_id": "s6"}])) == [  # type: ignore[arg-type]
        ("s6", eui64)]


def test_a_router_takes_no_automatic_address() -> None:
    assert ipam.allocate(None, _request(None, is_router=True)) == []  # type: ignore[arg-type]


def test_an_address_held_is_kept_when_its_subnet_is_asked_for_again() -> None:
    kept = {("s6", "2001:db8::5"): True}
    got = ipam.allocate(None, _request([{"subnet_id": "s6"}], is_router=True,  # type: ignore[arg-type]
                                       keep=kept))
    assert got == [("s6", "2001:db8::5")]


def test_another_address_on_a_slaac_subnet_is_refused() -> None:
    with pytest.raises(errors.AllocationOnAutoAddressSubnet):
        ipam.allocate(None, _request([{"subnet_id": "s6",  # type: ignore[arg-type]
                                       "ip_address": "2001:db8::5"}]))
