"""``subnet-service-types``: the device owners a subnet serves, their
validation and policy, and IP allocation choosing subnets by the port's
device owner, as upstream."""
from __future__ import annotations

import netaddr
import pytest

from tests.api import _helpers as h


def _aliases(client):
    return {e["alias"] for e in client.get("/v2.0/extensions")[1]["extensions"]}


def _in(port, cidr):
    return [netaddr.IPAddress(f["ip_address"]) in netaddr.IPNetwork(cidr)
            for f in port["fixed_ips"]]


def test_subnet_service_types_is_listed(member):
    assert "subnet-service-types" in _aliases(member)


def test_admin_sets_service_types_shown_sorted_and_replaced_on_update(member, admin):
    net = h.network(member)
    sub = h.subnet(admin, net["id"], "10.1.0.0/24",
                   service_types=["network:foo", "compute:nova", "test:type_1"])
    assert sub["service_types"] == ["compute:nova", "network:foo", "test:type_1"]
    url = f"/v2.0/subnets/{sub['id']}"
    assert member.get(url)[1]["subnet"]["service_types"] == sub["service_types"]
    listed = member.get(f"/v2.0/subnets?network_id={net['id']}")[1]["subnets"]
    assert [s["service_types"] for s in listed] == [sub["service_types"]]
    status, body = admin.put(url, {"subnet": {"service_types": ["compute:"]}})
    assert status == 200 and body["subnet"]["service_types"] == ["compute:"]
    assert body["subnet"]["revision_number"] > sub["revision_number"]
    status, body2 = admin.put(url, {"subnet": {"service_types": []}})
    assert status == 200 and body2["subnet"]["service_types"] == []
    assert body2["subnet"]["revision_number"] > body["subnet"]["revision_number"]
    assert member.get(url)[1]["subnet"]["service_types"] == []


def test_a_subnet_without_service_types_shows_an_empty_list(member):
    net = h.network(member)
    assert h.subnet(member, net["id"])["service_types"] == []


def test_members_set_service_types_as_upstream_never_checks_their_rule(member, other, admin):
    """Upstream registers ``create_subnet:service_types`` (admin only) but its
    attribute has no ``enforce_policy``, so a member sets them (checked live
    against Neutron 29, and what tempest's service type tests do)."""
    net = h.network(member)
    status, body = member.post("/v2.0/subnets", {"subnet": {
        "network_id": net["id"], "ip_version": 4, "cidr": "10.2.0.0/24",
        "service_types": ["compute:nova"]}})
    assert status == 201 and body["subnet"]["service_types"] == ["compute:nova"]
    url = f"/v2.0/subnets/{body['subnet']['id']}"
    status, body = member.put(url, {"subnet": {"service_types": ["network:dhcp"]}})
    assert status == 200 and body["subnet"]["service_types"] == ["network:dhcp"]
    h.error(other.put(url, {"subnet": {"service_types": ["compute:nova"]}}), 404, "SubnetNotFound")
    assert admin.put(url, {"subnet": {"service_types": ["compute:nova"]}})[0] == 200


@pytest.mark.parametrize("kinds, status, kind, message", [
    (["bogus:x"], 400, "InvalidSubnetServiceType",
     "Subnet service type bogus:x does not correspond to a valid device owner."),
    ([3], 400, "InvalidInputSubnetServiceType", "Subnet service type 3 is not a string."),
    ("compute:nova", 400, "HTTPBadRequest", "Subnet service types must be a list."),
])
def test_bad_service_types_are_refused(member, admin, kinds, status, kind, message):
    net = h.network(member)
    got = h.error(admin.post("/v2.0/subnets", {"subnet": {
        "network_id": net["id"], "ip_version": 4, "cidr": "10.3.0.0/24",
        "service_types": kinds}}), status, kind)
    assert got == message
    assert member.get(f"/v2.0/subnets?network_id={net['id']}")[1]["subnets"] == []


def test_a_service_type_twice_is_a_conflict_and_creates_nothing(member, admin):
    net = h.network(member)
    msg = h.error(admin.post("/v2.0/subnets", {"subnet": {
        "network_id": net["id"], "ip_version": 4, "cidr": "10.4.0.0/24",
        "service_types": ["compute:a", "compute:a"]}}), 409, "NeutronDbObjectDuplicateEntry")
    assert msg.startswith("Failed to create a duplicate SubnetServiceType: for attribute(s) "
                          "['PRIMARY'] with value(s) ")
    assert member.get(f"/v2.0/subnets?network_id={net['id']}")[1]["subnets"] == []


def test_ports_take_addresses_from_the_subnet_serving_their_device_owner(member, admin):
    # As upstream's test_allocate_ips_are_from_correct_subnet.
    net = h.network(member)
    h.subnet(admin, net["id"], "192.168.1.0/24",
             service_types=["test:type_1", "network:distributed"])
    h.subnet(admin, net["id"], "192.168.2.0/24",
             service_types=["test:type_2", "network:distributed"])
    one = h.port(member, net["id"], device_owner="test:type_1")
    two = h.port(member, net["id"], device_owner="test:type_2")
    assert _in(one, "192.168.1.0/24") == [True]
    assert _in(two, "192.168.2.0/24") == [True]


def test_typed_subnets_come_before_untyped_ones(member, admin):
    net = h.network(member)
    h.subnet(member, net["id"], "10.5.0.0/24")
    h.subnet(admin, net["id"], "10.6.0.0/24", service_types=["compute:nova"])
    vm = h.port(member, net["id"], device_owner="compute:nova")
    plain = h.port(member, net["id"])
    assert _in(vm, "10.6.0.0/24") == [True]
    assert _in(plain, "10.5.0.0/24") == [True]


def test_no_subnet_serving_the_owner_is_a_conflict(member, admin):
    net = h.network(member)
    h.subnet(admin, net["id"], "10.7.0.0/24", service_types=["compute:nova"])
    msg = h.error(member.post("/v2.0/ports", {"port": {"network_id": net["id"]}}),
                  409, "IpAddressGenerationFailureNoMatchingSubnet")
    assert msg == (f"No valid service subnet for the given device owner, network {net['id']}, "
                   "service type .")
    assert member.get(f"/v2.0/ports?network_id={net['id']}")[1]["ports"] == []


def test_a_fixed_ip_on_a_subnet_serving_others_is_refused(member, admin):
    net = h.network(member)
    plain = h.subnet(member, net["id"], "10.8.0.0/24")
    vms = h.subnet(admin, net["id"], "10.9.0.0/24", service_types=["compute:nova"])
    msg = h.error(member.post("/v2.0/ports", {"port": {
        "network_id": net["id"], "fixed_ips": [{"subnet_id": vms["id"]}]}}), 400, "InvalidInput")
    assert msg == (f"Invalid input for operation: Failed to create port on network {net['id']}, "
                   f"because fixed_ips included invalid subnet {vms['id']}.")
    port = h.port(member, net["id"], fixed_ips=[{"subnet_id": plain["id"]}])
    assert [f["subnet_id"] for f in port["fixed_ips"]] == [plain["id"]]


def test_dhcp_ports_use_any_subnet_with_dhcp(member, admin):
    net = h.network(member)
    sub = h.subnet(admin, net["id"], "10.10.0.0/24", service_types=["compute:nova"])
    port = h.port(admin, net["id"], device_owner="network:dhcp")
    assert [f["subnet_id"] for f in port["fixed_ips"]] == [sub["id"]]


def test_deleting_a_typed_subnet_leaves_nothing_behind(member, admin):
    net = h.network(member)
    sub = h.subnet(admin, net["id"], "10.11.0.0/24", service_types=["compute:nova"])
    assert admin.delete(f"/v2.0/subnets/{sub['id']}")[0] == 204
    again = h.subnet(admin, net["id"], "10.11.0.0/24", service_types=["compute:nova"])
    assert again["service_types"] == ["compute:nova"]
