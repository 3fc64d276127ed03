"""Pure subnet rules: gateways, pools, IPv6 modes, routes, EUI-64."""
from __future__ import annotations

import netaddr
import pytest

from neutrino import errors
from neutrino.ipam import subnet_rules as rules

N = netaddr.IPNetwork


@pytest.mark.parametrize("cidr,gateway", [("10.0.0.0/24", "10.0.0.1"),
                                          ("10.0.0.0/32", None),
                                          ("2001:db8::/64", "2001:db8::")])
def test_default_gateway(cidr, gateway):
    assert rules.default_gateway(N(cidr)) == gateway


@pytest.mark.parametrize("cidr,gateway,bad", [
    ("10.0.0.0/24", "10.0.0.0", True), ("10.0.0.0/24", "10.0.0.255", True),
    ("10.0.0.0/24", "10.0.0.1", False), ("10.0.0.0/24", "10.9.0.1", False),
    ("10.0.0.0/31", "10.0.0.0", False), ("2001:db8::/64", "2001:db8::", False)])
def test_gateway_validity(cidr, gateway, bad):
    assert rules.gateway_is_invalid(N(cidr), gateway) is bad


def test_default_pools_skip_gateway():
    assert rules.default_pools(N("10.0.0.0/29"), "10.0.0.3") == [
        {"start": "10.0.0.1", "end": "10.0.0.2"}, {"start": "10.0.0.4", "end": "10.0.0.6"}]
    assert rules.default_pools(N("2001:db8::/126"), "2001:db8::") == [
        {"start": "2001:db8::1", "end": "2001:db8::3"}]


def test_check_pools_errors():
    net = N("10.0.0.0/24")
    with pytest.raises(errors.InvalidAllocationPool):
        rules.check_pools(net, [{"start": "10.0.0.9", "end": "10.0.0.5"}], None)
    with pytest.raises(errors.OutOfBoundsAllocationPool):
        rules.check_pools(net, [{"start": "10.0.0.0", "end": "10.0.0.5"}], None)
    with pytest.raises(errors.OverlappingAllocationPools) as exc:
        rules.check_pools(net, [{"start": "10.0.0.2", "end": "10.0.0.9"},
                                {"start": "10.0.0.5", "end": "10.0.0.20"}], None)
    assert exc.value.code == 409
    with pytest.raises(errors.GatewayConflictWithAllocationPools) as exc:
        rules.check_pools(net, [{"start": "10.0.0.1", "end": "10.0.0.9"}], "10.0.0.1")
    assert exc.value.code == 409


def test_dhcp_needs_room():
    with pytest.raises(errors.InvalidInput):
        rules.check_dhcp_prefix(N("10.0.0.0/31"), True)
    rules.check_dhcp_prefix(N("10.0.0.0/31"), False)
    rules.check_dhcp_prefix(N("10.0.0.0/30"), True)


@pytest.mark.parametrize("ra,addr,ok", [("slaac", "slaac", True), ("slaac", None, True),
                                        ("slaac", "dhcpv6-stateful", False)])
def test_ipv6_modes(ra, addr, ok):
    if ok:
        rules.check_ipv6_modes(6, ra, addr, N("2001:db8::/64"))
    else:
        with pytest.raises(errors.InvalidInput):
            rules.check_ipv6_modes(6, ra, addr, N("2001:db8::/64"))


def test_slaac_needs_64():
    with pytest.raises(errors.InvalidInput):
        rules.check_ipv6_modes(6, None, "slaac", N("2001:db8::/80"))


def test_route_version_message_names_the_field():
    with pytest.raises(errors.InvalidInput) as exc:
        rules.check_routes("s", [{"destination": "10.0.0.0/24", "nexthop": "2001:db8::1"}], 4)
    assert "nexthop '2001:db8::1' does not match the ip_version '4'" in exc.value.msg


@pytest.mark.parametrize("subnet,auto", [
    ({"ip_version": 6, "ipv6_address_mode": "slaac"}, True),
    ({"ip_version": 6, "ipv6_ra_mode": "slaac", "ipv6_address_mode": None}, True),
    ({"ip_version": 6, "ipv6_address_mode": "dhcpv6-stateful"}, False),
    ({"ip_version": 4}, False)])
def test_auto_address_subnets(subnet, auto):
    assert rules.is_auto_address_subnet(subnet) is auto


def test_eui64_address():
    assert rules.eui64_address("2001:db8:1::/64", "fa:16:3e:00:00:01") == \
        "2001:db8:1:0:f816:3eff:fe00:1"


def test_generate_mac_follows_base_mac():
    from neutrino.ipam.allocator import generate_mac
    assert generate_mac("fa:16:3e:00:00:00").startswith("fa:16:3e:")
    assert generate_mac("fa:16:3e:4f:00:00").startswith("fa:16:3e:4f:")
    macs = {generate_mac("fa:16:3e:00:00:05") for _ in range(20)}
    assert len({m[-2:] for m in macs}) > 1  # only octet four survives


@pytest.mark.parametrize("mtu, versions, minimum", [
    (67, {4}, 68), (67, {6}, 68), (0, {4, 6}, 68), (1279, {6}, 1280), (1279, {4, 6}, 1280),
    (1279, {4}, None), (67, set(), None), (None, {4, 6}, None), (1280, {6}, None),
])
def test_mtu_must_carry_the_ip_versions_of_the_subnets(mtu, versions, minimum):
    if minimum is None:
        rules.check_mtu_fits("n", mtu, versions)
        return
    with pytest.raises(errors.NetworkMTUSubnetConflict) as exc:
        rules.check_mtu_fits("n", mtu, versions)
    assert exc.value.msg == f"MTU of n is not valid, subnet requires a minimum of {minimum}"
