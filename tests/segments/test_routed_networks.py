"""Routed networks: subnets bound to segments and where ports get addresses.

A host reaches a segment when an agent on it maps the segment's physical
network; a port gets its addresses from the subnets of that segment, or
waits for a host (``ip_allocation: deferred``). Error types and messages
were observed on upstream Neutron 29.
"""
from __future__ import annotations

from typing import Any

import pytest

from tests.api._helpers import ZERO_UUID, error, network, subnet
from tests.conftest import Client, Server
from tests.ml2.binding_helpers import host, report_agent
from tests.segments.conftest import add_segment, segments_of, vlan_network

OVS = "Open vSwitch agent"


@pytest.fixture
def routed(admin: Client) -> dict[str, Any]:
    """A network with two segments (physnet1, physnet2) and a subnet on each."""
    net = vlan_network(admin)
    first = segments_of(admin, net["id"])[0]
    second = add_segment(admin, net["id"], "physnet2")
    one = subnet(admin, net["id"], "10.10.1.0/24", segment_id=first["id"])
    two = subnet(admin, net["id"], "10.10.2.0/24", segment_id=second["id"])
    return {"net": net, "segments": [first, second], "subnets": [one, two]}


def _host_on(server: Server, physnet: str) -> str:
    name = host()
    report_agent(server, OVS, name, {"bridge_mappings": {physnet: "br-eth1"}})
    return name


def _port(client: Client, net_id: str, **attrs: Any) -> tuple[int, Any]:
    return client.post("/v2.0/ports", {"port": {"network_id": net_id, **attrs}})


# -- subnets --------------------------------------------------------------------------

def test_subnets_bound_to_segments_make_the_network_routed(admin: Client,
                                                           routed: dict[str, Any]) -> None:
    assert routed["subnets"][0]["segment_id"] == routed["segments"][0]["id"]
    status, body = admin.get(f"/v2.0/networks/{routed['net']['id']}")
    assert body["network"]["l2_adjacency"] is False
    assert network(admin)["l2_adjacency"] is True
    status, body = admin.get(f"/v2.0/subnets?segment_id={routed['segments'][1]['id']}")
    assert [s["id"] for s in body["subnets"]] == [routed["subnets"][1]["id"]]


def test_subnets_of_a_network_are_all_bound_to_segments_or_none(
        admin: Client, routed: dict[str, Any]) -> None:
    message = error(admin.post("/v2.0/subnets", {"subnet": {
        "network_id": routed["net"]["id"], "ip_version": 4, "cidr": "10.10.3.0/24"}}),
        400, "SubnetsNotAllAssociatedWithSegments")
    assert message == (f"All of the subnets on network '{routed['net']['id']}' must either "
                       f"all be associated with segments or all not associated with any "
                       f"segment.")
    plain = vlan_network(admin)
    subnet(admin, plain["id"], "10.11.0.0/24")
    seg = segments_of(admin, plain["id"])[0]
    error(admin.post("/v2.0/subnets", {"subnet": {
        "network_id": plain["id"], "ip_version": 4, "cidr": "10.11.1.0/24",
        "segment_id": seg["id"]}}), 400, "SubnetsNotAllAssociatedWithSegments")
    status, body = admin.get(f"/v2.0/subnets?network_id={plain['id']}")
    assert len(body["subnets"]) == 1


def test_a_subnets_segment_must_exist_and_belong_to_its_network(
        admin: Client, routed: dict[str, Any]) -> None:
    other = vlan_network(admin)
    foreign = segments_of(admin, other["id"])[0]
    assert error(admin.post("/v2.0/subnets", {"subnet": {
        "network_id": routed["net"]["id"], "ip_version": 4, "cidr": "10.10.4.0/24",
        "segment_id": foreign["id"]}}), 400, "NetworkIdsDontMatch") == (
        f"The subnet's network id, '{routed['net']['id']}', doesn't match the network_id "
        f"of segment '{foreign['id']}'")
    assert error(admin.post("/v2.0/subnets", {"subnet": {
        "network_id": routed["net"]["id"], "ip_version": 4, "cidr": "10.10.4.0/24",
        "segment_id": ZERO_UUID}}), 404, "SegmentNotFound")


def test_a_segment_with_subnets_cannot_be_deleted(admin: Client,
                                                  routed: dict[str, Any]) -> None:
    seg, sub = routed["segments"][1], routed["subnets"][1]
    message = error(admin.delete(f"/v2.0/segments/{seg['id']}"), 409, "SegmentInUse")
    one = (f"Segment '{seg['id']}' cannot be deleted: The segment is still associated "
           f"with subnet(s) {sub['id']}.")
    assert message == f"{one}\n{one}"  # upstream 29 says it twice
    assert admin.delete(f"/v2.0/subnets/{sub['id']}")[0] == 204
    assert admin.delete(f"/v2.0/segments/{seg['id']}")[0] == 204


def test_an_unbound_subnet_is_bound_once_on_a_single_segment_network(admin: Client) -> None:
    net = vlan_network(admin)
    seg = segments_of(admin, net["id"])[0]
    sub = subnet(admin, net["id"], "10.12.0.0/24")
    status, body = admin.put(f"/v2.0/subnets/{sub['id']}", {"subnet": {"segment_id": seg["id"]}})
    assert status == 200, body
    assert body["subnet"]["segment_id"] == seg["id"]
    assert error(admin.put(f"/v2.0/subnets/{sub['id']}", {"subnet": {"segment_id": None}}),
                 400, "SubnetSegmentAssociationChangeNotAllowed") == (
        "A subnet that is already associated with a segment cannot have its segment "
        "association changed.")


def test_binding_a_subnet_later_is_refused_on_multi_segment_or_multi_subnet_networks(
        admin: Client) -> None:
    net = vlan_network(admin)
    first = segments_of(admin, net["id"])[0]
    add_segment(admin, net["id"], "physnet2")
    sub = subnet(admin, net["id"], "10.13.0.0/24")
    assert error(admin.put(f"/v2.0/subnets/{sub['id']}", {"subnet": {"segment_id": first["id"]}}),
                 400, "NoUpdateSubnetWhenMultipleSegmentsOnNetwork") == (
        f"The network '{net['id']}' has multiple segments, it is only possible to associate "
        f"an existing subnet with a segment on networks with a single segment.")
    single = vlan_network(admin)
    seg = segments_of(admin, single["id"])[0]
    sub = subnet(admin, single["id"], "10.14.0.0/24")
    subnet(admin, single["id"], "10.14.1.0/24")
    error(admin.put(f"/v2.0/subnets/{sub['id']}", {"subnet": {"segment_id": seg["id"]}}),
          400, "SubnetsNotAllAssociatedWithSegments")
    assert admin.get(f"/v2.0/subnets/{sub['id']}")[1]["subnet"]["segment_id"] is None


def test_only_admins_set_or_see_a_subnets_segment(admin: Client, member: Client) -> None:
    net = network(member)
    seg = segments_of(admin, net["id"])[0]
    assert error(member.post("/v2.0/subnets", {"subnet": {
        "network_id": net["id"], "ip_version": 4, "cidr": "10.15.0.0/24",
        "segment_id": seg["id"]}}), 403, "PolicyNotAuthorized") == (
        "(rule:create_subnet and rule:create_subnet:segment_id) is disallowed by policy")
    sub = subnet(member, net["id"], "10.15.0.0/24")
    assert "segment_id" not in sub
    assert admin.get(f"/v2.0/subnets/{sub['id']}")[1]["subnet"]["segment_id"] is None


# -- ports ----------------------------------------------------------------------------

def test_a_port_without_host_on_a_routed_network_waits_for_one(
        admin: Client, routed: dict[str, Any]) -> None:
    status, body = _port(admin, routed["net"]["id"])
    assert status == 201, body
    assert body["port"]["ip_allocation"] == "deferred"
    assert body["port"]["fixed_ips"] == []


def test_a_port_on_a_plain_network_is_addressed_immediately(admin: Client) -> None:
    net = vlan_network(admin)
    sub = subnet(admin, net["id"], "10.16.0.0/24")
    status, body = _port(admin, net["id"])
    assert body["port"]["ip_allocation"] == "immediate"
    assert [ip["subnet_id"] for ip in body["port"]["fixed_ips"]] == [sub["id"]]


def test_asking_for_no_address_is_ip_allocation_none(admin: Client,
                                                     routed: dict[str, Any]) -> None:
    for net_id in (routed["net"]["id"], network(admin)["id"]):
        status, body = _port(admin, net_id, fixed_ips=[])
        assert status == 201, body
        assert (body["port"]["ip_allocation"], body["port"]["fixed_ips"]) == ("none", [])


def test_a_port_with_a_host_gets_an_address_of_the_segment_its_host_reaches(
        admin: Client, server: Server, routed: dict[str, Any]) -> None:
    where = _host_on(server, "physnet2")
    status, body = _port(admin, routed["net"]["id"], **{"binding:host_id": where})
    assert status == 201, body
    port = body["port"]
    assert port["ip_allocation"] == "immediate"
    assert [ip["subnet_id"] for ip in port["fixed_ips"]] == [routed["subnets"][1]["id"]]
    # The port binds on the segment its host reaches.
    assert port["binding:vif_type"] == "ovs"


def test_a_host_reaching_no_segment_of_the_network_is_refused(
        admin: Client, server: Server, routed: dict[str, Any]) -> None:
    for where in (host(), _host_on(server, "physnet3")):
        message = error(_port(admin, routed["net"]["id"], **{"binding:host_id": where}),
                        409, "HostNotConnectedToAnySegment")
        assert message == (f"Host {where} is not connected to any segments on routed "
                           f"provider network '{routed['net']['id']}'.  It should be "
                           f"connected to one.")


def test_a_deferred_port_gets_its_address_when_it_gets_a_host(
        admin: Client, server: Server, routed: dict[str, Any]) -> None:
    port = _port(admin, routed["net"]["id"])[1]["port"]
    where = _host_on(server, "physnet1")
    status, body = admin.put(f"/v2.0/ports/{port['id']}", {"port": {"binding:host_id": where}})
    assert status == 200, body
    assert [ip["subnet_id"] for ip in body["port"]["fixed_ips"]] == [routed["subnets"][0]["id"]]
    # Upstream leaves the attribute as it was created.
    assert body["port"]["ip_allocation"] == "deferred"


def test_a_deferred_port_given_an_unconnected_host_changes_nothing(
        admin: Client, routed: dict[str, Any]) -> None:
    port = _port(admin, routed["net"]["id"])[1]["port"]
    error(admin.put(f"/v2.0/ports/{port['id']}", {"port": {"binding:host_id": host()}}),
          409, "HostNotConnectedToAnySegment")
    shown = admin.get(f"/v2.0/ports/{port['id']}")[1]["port"]
    assert (shown["binding:host_id"], shown["fixed_ips"]) == ("", [])


def test_addresses_from_two_segments_are_refused(admin: Client,
                                                 routed: dict[str, Any]) -> None:
    ips = [{"subnet_id": s["id"]} for s in routed["subnets"]]
    assert error(_port(admin, routed["net"]["id"], fixed_ips=ips), 400,
                 "FixedIpsSubnetsNotOnSameSegment") == (
        "Cannot allocate addresses from different segments.")
    status, body = _port(admin, routed["net"]["id"], fixed_ips=ips[:1])
    assert status == 201 and body["port"]["ip_allocation"] == "immediate"


def test_a_port_with_addresses_moves_only_to_a_host_where_they_work(
        admin: Client, server: Server, routed: dict[str, Any]) -> None:
    first = _host_on(server, "physnet1")
    port = _port(admin, routed["net"]["id"], **{"binding:host_id": first})[1]["port"]
    elsewhere = _host_on(server, "physnet2")
    assert error(admin.put(f"/v2.0/ports/{port['id']}",
                           {"port": {"binding:host_id": elsewhere}}),
                 409, "HostNotCompatibleWithFixedIps") == (
        f"Host {elsewhere} is not connected to a segment where the existing fixed_ips on "
        f"port {port['id']} will function given the routed network topology.")
    same_segment = _host_on(server, "physnet1")
    status, body = admin.put(f"/v2.0/ports/{port['id']}",
                             {"port": {"binding:host_id": same_segment}})
    assert status == 200, body
    assert body["port"]["fixed_ips"] == port["fixed_ips"]
