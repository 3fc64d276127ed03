"""Subnets over real HTTP: CIDR, gateway, allocation pools, DNS, routes, IPv6."""
from __future__ import annotations

import netaddr
import pytest

from tests.api import _helpers as h


def post(client, net_id, **attrs):
    body = {"network_id": net_id, "ip_version": attrs.pop("ip_version", 4), **attrs}
    return client.post("/v2.0/subnets", {"subnet": body})


def test_subnet_defaults_gateway_first_address_and_pool_rest(member, project_id):
    net = h.network(member)
    sub = h.subnet(member, net["id"], "10.0.0.0/24")
    assert sub["project_id"] == project_id and sub["network_id"] == net["id"]
    assert sub["gateway_ip"] == "10.0.0.1"
    assert sub["allocation_pools"] == [{"start": "10.0.0.2", "end": "10.0.0.254"}]
    assert (sub["enable_dhcp"], sub["dns_nameservers"], sub["host_routes"]) == (True, [], [])
    assert sub["ipv6_ra_mode"] is None and sub["ipv6_address_mode"] is None
    assert sub["subnetpool_id"] is None and sub["tags"] == []


def test_subnet_create_starts_at_revision_zero_as_upstream(member):
    net = h.network(member)
    sub = h.subnet(member, net["id"])
    assert sub["revision_number"] == 0
    assert member.get(f"/v2.0/subnets/{sub['id']}")[1]["subnet"]["revision_number"] == 0


def test_subnet_does_not_show_shared(member):
    net = h.network(member)
    sub = h.subnet(member, net["id"])
    assert "shared" not in sub
    assert "shared" not in member.get(f"/v2.0/subnets/{sub['id']}")[1]["subnet"]


def test_subnet_show_update_delete_status_codes(member):
    net = h.network(member)
    sub = h.subnet(member, net["id"])
    url = f"/v2.0/subnets/{sub['id']}"
    assert member.get(url)[0] == 200
    status, body = member.put(url, {"subnet": {"name": "s2", "enable_dhcp": False}})
    assert status == 200 and (body["subnet"]["name"], body["subnet"]["enable_dhcp"]) == ("s2", False)
    assert member.delete(url) == (204, None)
    msg = h.error(member.get(url), 404, "SubnetNotFound")
    assert msg == f"Subnet {sub['id']} could not be found."


@pytest.mark.parametrize("cidr", ["foo", "10.0.0.0/33", "10.0.0.256/24", ""])
def test_invalid_cidr_is_400(member, cidr):
    net = h.network(member)
    h.error(post(member, net["id"], cidr=cidr), 400)


def test_invalid_cidr_message_as_upstream(member):
    net = h.network(member)
    msg = h.error(post(member, net["id"], cidr="foo"), 400, "InvalidInput")
    assert msg == "Invalid input for operation: foo is not in a CIDR format."


def test_cidr_with_host_bits_is_normalised_to_its_network(member):
    net = h.network(member)
    assert h.subnet(member, net["id"], "10.6.0.1/24")["cidr"] == "10.6.0.0/24"


def test_cidr_version_mismatch_is_400(member):
    net = h.network(member)
    msg = h.error(post(member, net["id"], cidr="10.7.0.0/24", ip_version=6), 400,
                  "InvalidInput")
    assert msg == ("Invalid input for operation: cidr '10.7.0.0/24' does not match the "
                   "ip_version '6'.")


def test_overlapping_subnet_on_same_network_is_400_invalid_input(member):
    net = h.network(member)
    h.subnet(member, net["id"], "10.0.0.0/24")
    msg = h.error(post(member, net["id"], cidr="10.0.0.128/25"), 400, "InvalidInput")
    assert msg == (f"Invalid input for operation: Requested subnet with cidr: 10.0.0.128/25 "
                   f"for network: {net['id']} overlaps with another subnet.")


def test_same_cidr_on_two_networks_is_allowed_with_overlapping_ips(member):
    a, b = h.network(member), h.network(member)
    h.subnet(member, a["id"], "10.50.0.0/24")
    assert h.subnet(member, b["id"], "10.50.0.0/24")["cidr"] == "10.50.0.0/24"


def test_gateway_null_means_no_gateway_and_pool_starts_at_first_address(member):
    net = h.network(member)
    sub = h.subnet(member, net["id"], "10.3.0.0/24", gateway_ip=None)
    assert sub["gateway_ip"] is None
    assert sub["allocation_pools"] == [{"start": "10.3.0.1", "end": "10.3.0.254"}]


def test_explicit_gateway_is_excluded_from_default_pools(member):
    net = h.network(member)
    sub = h.subnet(member, net["id"], "10.4.0.0/24", gateway_ip="10.4.0.100")
    assert sub["gateway_ip"] == "10.4.0.100"
    assert sub["allocation_pools"] == [{"start": "10.4.0.1", "end": "10.4.0.99"},
                                       {"start": "10.4.0.101", "end": "10.4.0.254"}]


def test_gateway_outside_cidr_is_accepted_as_upstream(member):
    net = h.network(member)
    sub = h.subnet(member, net["id"], "10.4.0.0/24", gateway_ip="10.5.0.1")
    assert sub["allocation_pools"] == [{"start": "10.4.0.1", "end": "10.4.0.254"}]


@pytest.mark.parametrize("gateway", ["10.6.0.0", "10.6.0.255"])
def test_network_or_broadcast_gateway_is_400(member, gateway):
    net = h.network(member)
    msg = h.error(post(member, net["id"], cidr="10.6.0.0/24", gateway_ip=gateway), 400,
                  "InvalidInput")
    assert msg == "Invalid input for operation: Gateway is not valid on subnet."


def test_gateway_of_other_ip_version_is_400(member):
    net = h.network(member)
    msg = h.error(post(member, net["id"], cidr="10.9.0.0/24", gateway_ip="2001:db8::1"),
                  400, "InvalidInput")
    assert "gateway_ip '2001:db8::1' does not match the ip_version '4'" in msg


def test_explicit_allocation_pools_are_kept(member):
    net = h.network(member)
    pools = [{"start": "10.1.0.10", "end": "10.1.0.20"}, {"start": "10.1.0.30", "end": "10.1.0.40"}]
    assert h.subnet(member, net["id"], "10.1.0.0/24", allocation_pools=pools)[
        "allocation_pools"] == pools


def test_gateway_inside_allocation_pool_is_409_gateway_conflict(member):
    net = h.network(member)
    msg = h.error(post(member, net["id"], cidr="10.1.0.0/24",
                       allocation_pools=[{"start": "10.1.0.1", "end": "10.1.0.10"}]),
                  409, "GatewayConflictWithAllocationPools")
    assert msg == "Gateway ip 10.1.0.1 conflicts with allocation pool 10.1.0.1-10.1.0.10."


@pytest.mark.parametrize("pool", [{"start": "10.2.0.2", "end": "10.2.1.10"},
                                  {"start": "10.2.0.0", "end": "10.2.0.10"},
                                  {"start": "10.2.0.250", "end": "10.2.0.255"}])
def test_allocation_pool_out_of_bounds_is_400(member, pool):
    net = h.network(member)
    h.error(post(member, net["id"], cidr="10.2.0.0/24", allocation_pools=[pool]), 400,
            "OutOfBoundsAllocationPool")


def test_reversed_allocation_pool_is_400_invalid_allocation_pool(member):
    net = h.network(member)
    h.error(post(member, net["id"], cidr="10.2.0.0/24",
                 allocation_pools=[{"start": "10.2.0.20", "end": "10.2.0.10"}]),
            400, "InvalidAllocationPool")


def test_overlapping_allocation_pools_are_refused_with_upstream_409(member):
    """The brief says 400; upstream Neutron 29 answers 409 (a Conflict)."""
    net = h.network(member)
    msg = h.error(post(member, net["id"], cidr="10.2.0.0/24",
                       allocation_pools=[{"start": "10.2.0.2", "end": "10.2.0.10"},
                                         {"start": "10.2.0.5", "end": "10.2.0.20"}]),
                  409, "OverlappingAllocationPools")
    assert msg == ("Found overlapping allocation pools: 10.2.0.2-10.2.0.10 "
                   "10.2.0.5-10.2.0.20 for subnet 10.2.0.0/24.")


@pytest.mark.parametrize("cidr", ["10.8.0.0/32", "10.7.0.0/31"])
def test_tiny_subnet_with_dhcp_is_400(member, cidr):
    net = h.network(member)
    msg = h.error(post(member, net["id"], cidr=cidr), 400, "InvalidInput")
    assert "incompatible with DHCP service enabled" in msg


def test_tiny_subnet_without_dhcp_is_allowed(member):
    net = h.network(member)
    assert h.subnet(member, net["id"], "10.7.0.0/31", enable_dhcp=False)["cidr"] == "10.7.0.0/31"


def test_dns_nameservers_and_host_routes_are_stored_in_order(member):
    net = h.network(member)
    routes = [{"destination": "192.168.0.0/24", "nexthop": "10.9.0.5"}]
    sub = h.subnet(member, net["id"], "10.9.0.0/24", dns_nameservers=["8.8.8.8", "1.1.1.1"],
                   host_routes=routes)
    assert sub["dns_nameservers"] == ["8.8.8.8", "1.1.1.1"]
    assert sub["host_routes"] == routes


def test_duplicate_nameserver_is_400(member):
    net = h.network(member)
    msg = h.error(post(member, net["id"], cidr="10.9.0.0/24",
                       dns_nameservers=["1.1.1.1", "1.1.1.1"]), 400)
    assert "Duplicate nameserver '1.1.1.1'" in msg


def test_too_many_nameservers_is_400_dns_nameservers_exhausted(member):
    net = h.network(member)
    msg = h.error(post(member, net["id"], cidr="10.9.0.0/24",
                       dns_nameservers=[f"1.1.1.{i}" for i in range(1, 7)]),
                  400, "DNSNameServersExhausted")
    assert msg == ("Unable to complete operation for new subnet. The number of DNS "
                   "nameservers exceeds the limit 5.")


@pytest.mark.parametrize("route,key,value", [
    ({"destination": "2001:db8::/64", "nexthop": "10.9.0.5"}, "destination", "2001:db8::/64"),
    ({"destination": "10.1.0.0/24", "nexthop": "2001:db8::1"}, "nexthop", "2001:db8::1")])
def test_host_route_of_other_ip_version_is_400(member, route, key, value):
    net = h.network(member)
    msg = h.error(post(member, net["id"], cidr="10.9.0.0/24", host_routes=[route]), 400,
                  "InvalidInput")
    assert msg == f"Invalid input for operation: {key} '{value}' does not match the ip_version '4'."


def test_update_gateway_into_pool_is_409_and_changes_nothing(member):
    net = h.network(member)
    sub = h.subnet(member, net["id"])
    url = f"/v2.0/subnets/{sub['id']}"
    h.error(member.put(url, {"subnet": {"gateway_ip": "10.0.0.50"}}), 409,
            "GatewayConflictWithAllocationPools")
    assert member.get(url)[1]["subnet"]["gateway_ip"] == "10.0.0.1"


def test_update_pools_gateway_dns_routes(member):
    net = h.network(member)
    sub = h.subnet(member, net["id"])
    url = f"/v2.0/subnets/{sub['id']}"
    pools = [{"start": "10.0.0.100", "end": "10.0.0.110"}]
    status, body = member.put(url, {"subnet": {"allocation_pools": pools}})
    assert status == 200 and body["subnet"]["allocation_pools"] == pools
    status, body = member.put(url, {"subnet": {"gateway_ip": None}})
    assert status == 200 and body["subnet"]["gateway_ip"] is None
    routes = [{"destination": "0.0.0.0/0", "nexthop": "10.0.0.9"}]
    status, body = member.put(url, {"subnet": {"dns_nameservers": ["1.1.1.1"],
                                               "host_routes": routes}})
    assert status == 200
    assert (body["subnet"]["dns_nameservers"], body["subnet"]["host_routes"]) == (["1.1.1.1"], routes)
    status, body = member.put(url, {"subnet": {"dns_nameservers": []}})
    assert body["subnet"]["dns_nameservers"] == [] and body["subnet"]["host_routes"] == routes


@pytest.mark.parametrize("attr,value", [("cidr", "10.0.0.0/25"), ("ip_version", 6),
                                        ("network_id", h.ZERO_UUID)])
def test_update_of_immutable_subnet_attribute_is_400(member, attr, value):
    net = h.network(member)
    sub = h.subnet(member, net["id"])
    h.error(member.put(f"/v2.0/subnets/{sub['id']}", {"subnet": {attr: value}}), 400)
    assert member.get(f"/v2.0/subnets/{sub['id']}")[1]["subnet"]["cidr"] == "10.0.0.0/24"


def test_subnet_on_unknown_network_is_404(member):
    h.error(post(member, h.ZERO_UUID, cidr="10.0.0.0/24"), 404, "NetworkNotFound")


def test_delete_subnet_with_port_is_409_subnet_in_use(member):
    net = h.network(member)
    sub = h.subnet(member, net["id"])
    h.port(member, net["id"])
    msg = h.error(member.delete(f"/v2.0/subnets/{sub['id']}"), 409, "SubnetInUse")
    assert msg == (f"Unable to complete operation on subnet {sub['id']}: One or more ports "
                   f"have an IP allocation from this subnet.")


def test_subnet_requires_cidr_or_pool(member):
    net = h.network(member)
    h.error(post(member, net["id"]), 400)


# -- IPv6 ----------------------------------------------------------------------

def test_ipv6_default_gateway_is_subnet_router_anycast(member):
    net = h.network(member)
    sub = h.subnet(member, net["id"], "2001:db8:1::/64", ip_version=6)
    assert sub["gateway_ip"] == "2001:db8:1::"
    assert sub["allocation_pools"] == [{"start": "2001:db8:1::1",
                                        "end": "2001:db8:1:0:ffff:ffff:ffff:ffff"}]


def test_ipv6_explicit_anycast_gateway_is_accepted(member):
    net = h.network(member)
    sub = h.subnet(member, net["id"], "2001:db8:7::/64", ip_version=6, gateway_ip="2001:db8:7::")
    assert sub["gateway_ip"] == "2001:db8:7::"


@pytest.mark.parametrize("ra,addr", [("slaac", "slaac"), (None, "dhcpv6-stateless"),
                                     ("dhcpv6-stateful", None), (None, None)])
def test_ipv6_modes_are_accepted_and_shown(member, ra, addr):
    net = h.network(member)
    sub = h.subnet(member, net["id"], "2001:db8:2::/64", ip_version=6, ipv6_ra_mode=ra,
                   ipv6_address_mode=addr)
    assert (sub["ipv6_ra_mode"], sub["ipv6_address_mode"]) == (ra, addr)


def test_ipv6_mismatched_modes_are_400(member):
    net = h.network(member)
    msg = h.error(post(member, net["id"], cidr="2001:db8:6::/64", ip_version=6,
                       ipv6_ra_mode="slaac", ipv6_address_mode="dhcpv6-stateful"),
                  400, "InvalidInput")
    assert "If both attributes are set, they must be the same value" in msg


def test_slaac_requires_a_64_prefix(member):
    net = h.network(member)
    msg = h.error(post(member, net["id"], cidr="2001:db8:5::/80", ip_version=6,
                       ipv6_address_mode="slaac"), 400, "InvalidInput")
    assert "requires the prefix to be /64" in msg


def test_ipv6_mode_on_ipv4_subnet_is_400(member):
    net = h.network(member)
    msg = h.error(post(member, net["id"], cidr="10.9.0.0/24", ipv6_ra_mode="slaac"), 400,
                  "InvalidInput")
    assert msg == "Invalid input for operation: ipv6_ra_mode is not valid when ip_version is 4."


def test_invalid_ipv6_mode_value_is_400(member):
    net = h.network(member)
    h.error(post(member, net["id"], cidr="2001:db8:6::/64", ip_version=6,
                 ipv6_ra_mode="bogus"), 400)


def test_ipv6_modes_need_dhcp_enabled(member):
    net = h.network(member)
    msg = h.error(post(member, net["id"], cidr="2001:db8:8::/64", ip_version=6,
                       ipv6_ra_mode="slaac", ipv6_address_mode="slaac", enable_dhcp=False),
                  400, "InvalidInput")
    assert msg == ("Invalid input for operation: ipv6_ra_mode or ipv6_address_mode cannot be "
                   "set when enable_dhcp is set to False.")
    sub = h.subnet(member, net["id"], "2001:db8:8::/64", ipv6_address_mode="slaac")
    h.error(member.put(f"/v2.0/subnets/{sub['id']}", {"subnet": {"enable_dhcp": False}}), 400,
            "InvalidInput")


def test_zero_network_with_dhcp_is_400(member):
    net = h.network(member)
    msg = h.error(post(member, net["id"], cidr="0.0.0.0/0"), 400, "InvalidInput")
    assert msg == ("Invalid input for operation: First IP '0.0.0.0' of network is not "
                   "supported if enable_dhcp is True..")


def test_ipv6_unspecified_network_is_400(member):
    net = h.network(member)
    msg = h.error(post(member, net["id"], cidr="::/0", ip_version=6), 400, "InvalidInput")
    assert msg == "Invalid input for operation: IPv6 subnet '::' is not supported."


def test_ip_version_as_string_is_converted(member):
    net = h.network(member)
    assert h.subnet(member, net["id"], "2001:db8:4::/64", ip_version="6")["ip_version"] == 6


def test_ipv6_stateful_port_gets_pool_address_or_requested_one(member):
    net = h.network(member)
    sub = h.subnet(member, net["id"], "2001:db8:4::/64", ipv6_address_mode="dhcpv6-stateful",
                   allocation_pools=[{"start": "2001:db8:4::10", "end": "2001:db8:4::20"}])
    p = h.port(member, net["id"])
    addr = p["fixed_ips"][0]["ip_address"]
    assert p["fixed_ips"][0]["subnet_id"] == sub["id"]
    assert netaddr.IPAddress(addr) in netaddr.IPRange("2001:db8:4::10", "2001:db8:4::20")
    p = h.port(member, net["id"], fixed_ips=[{"ip_address": "2001:db8:4::99"}])
    assert p["fixed_ips"] == [{"subnet_id": sub["id"], "ip_address": "2001:db8:4::99"}]
