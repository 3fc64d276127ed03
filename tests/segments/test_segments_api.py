"""``/v2.0/segments``: the ML2 segments of networks as an admin-only resource.

Every expectation here was observed on upstream Neutron 29 (segments
service plugin, ML2 with VLAN ranges).
"""
from __future__ import annotations

from tests.api._helpers import ZERO_UUID, error, network
from tests.conftest import Client
from tests.segments.conftest import add_segment, segments_of, vlan_network

# As upstream 29 lists them in GET /v2.0/extensions.
DESCRIPTORS = {
    "segment": ("Segment", "Segments extension.", "2016-02-24T17:00:00-00:00"),
    "standard-attr-segment": ("Standard Attribute Segment Extension",
                              "Add standard attributes to Segment resource",
                              "2018-04-09T10:00:00-00:00"),
    "ip_allocation": ("IP Allocation", "IP allocation extension.",
                      "2016-06-10T23:00:00-00:00"),
    "l2_adjacency": ("L2 Adjacency", "Display L2 Adjacency for Neutron Networks.",
                     "2016-04-12T16:00:00-00:00"),
    "subnet-segmentid-writable": (
        "Subnet SegmentID (writable)",
        "Provides a writable segment_id attribute for a subnet resource.",
        "2018-03-12T00:00:00-00:00"),
}


def test_a_networks_segment_is_listed_with_standard_attributes_and_no_name(
        admin: Client) -> None:
    net = vlan_network(admin)
    [seg] = segments_of(admin, net["id"])
    assert set(seg) == {"id", "network_id", "name", "description", "physical_network",
                        "network_type", "segmentation_id", "created_at", "updated_at",
                        "revision_number"}
    assert seg["network_id"] == net["id"]
    assert (seg["network_type"], seg["physical_network"]) == ("vlan", "physnet1")
    assert seg["segmentation_id"] == net["provider:segmentation_id"]
    # Made with its network: no name, no description (null, as upstream).
    assert (seg["name"], seg["description"], seg["revision_number"]) == (None, None, 0)
    assert seg["created_at"].endswith("Z")
    status, body = admin.get(f"/v2.0/segments/{seg['id']}")
    assert status == 200 and body["segment"] == seg


def test_creating_a_segment_takes_an_id_from_the_type_drivers_pool(admin: Client) -> None:
    net = vlan_network(admin)
    seg = add_segment(admin, net["id"], "physnet2", name="second")
    assert 200 <= seg["segmentation_id"] <= 250
    assert (seg["name"], seg["description"], seg["revision_number"]) == ("second", "", 0)
    status, shown = admin.get(f"/v2.0/networks/{net['id']}")
    # Two segments: the network now shows them as ``segments`` (multi-provider).
    assert "provider:network_type" not in shown["network"]
    assert shown["network"]["segments"][1] == {
        "provider:network_type": "vlan", "provider:physical_network": "physnet2",
        "provider:segmentation_id": seg["segmentation_id"]}
    assert seg["id"] in {s["id"] for s in segments_of(admin, net["id"])}


def test_a_segment_id_in_use_is_a_conflict_and_a_released_one_is_free_again(
        admin: Client) -> None:
    net = vlan_network(admin)
    seg = add_segment(admin, net["id"], "physnet2", segmentation_id=3001)
    other = vlan_network(admin)
    message = error(admin.post("/v2.0/segments", {"segment": {
        "network_id": other["id"], "network_type": "vlan", "physical_network": "physnet2",
        "segmentation_id": 3001}}), 409, "VlanIdInUse")
    assert message == ("Unable to create the network. The VLAN 3001 on physical network "
                       "physnet2 is in use.")
    assert len(segments_of(admin, other["id"])) == 1
    assert admin.delete(f"/v2.0/segments/{seg['id']}")[0] == 204
    again = add_segment(admin, other["id"], "physnet2", segmentation_id=3001)
    assert again["segmentation_id"] == 3001


def test_bad_segments_are_refused_with_upstreams_errors_and_nothing_is_created(
        admin: Client) -> None:
    net = vlan_network(admin)

    def post(**body: object) -> tuple[int, object]:
        return admin.post("/v2.0/segments", {"segment": {"network_id": net["id"], **body}})
    assert error(post(network_type="vlan", physical_network="physnetX"), 400,
                 "InvalidInput") == ("Invalid input for operation: physical_network "
                                     "'physnetX' unknown for VLAN provider network.")
    assert error(post(network_type="foo"), 400, "InvalidInput") == (
        "Invalid input for operation: network_type value 'foo' not supported.")
    assert error(post(), 400, "HTTPBadRequest") == (
        "Failed to parse request. Required attribute 'network_type' not specified")
    assert error(post(network_type="vlan", physical_network="physnet1",
                      segmentation_id=5000), 400, "InvalidInput") == (
        "Invalid input for operation: segmentation_id out of range (1 through 4094).")
    assert error(admin.post("/v2.0/segments", {"segment": {
        "network_id": ZERO_UUID, "network_type": "vlan"}}), 404, "NetworkNotFound")
    assert len(segments_of(admin, net["id"])) == 1


def test_only_name_and_description_of_a_segment_change(admin: Client) -> None:
    seg = add_segment(admin, vlan_network(admin)["id"], name="s")
    status, body = admin.put(f"/v2.0/segments/{seg['id']}",
                             {"segment": {"name": None, "description": "d"}})
    assert status == 200, body
    assert (body["segment"]["name"], body["segment"]["description"]) == (None, "d")
    assert body["segment"]["revision_number"] == 1
    assert error(admin.put(f"/v2.0/segments/{seg['id']}",
                           {"segment": {"segmentation_id": 3}}), 400, "HTTPBadRequest") == (
        "Cannot update read-only attribute segmentation_id")


def test_segments_are_for_admins_only(admin: Client, member: Client) -> None:
    net = network(member)
    seg = segments_of(admin, net["id"])[0]
    assert error(member.post("/v2.0/segments", {"segment": {
        "network_id": net["id"], "network_type": "vxlan"}}), 403, "PolicyNotAuthorized") == (
        "rule:create_segment is disallowed by policy")
    # Another's (any) segment does not exist for a member: the web layer's 404.
    assert error(member.get(f"/v2.0/segments/{seg['id']}"), 404, "HTTPNotFound")
    assert error(member.put(f"/v2.0/segments/{seg['id']}", {"segment": {"name": "x"}}),
                 404, "HTTPNotFound")
    assert error(member.delete(f"/v2.0/segments/{seg['id']}"), 404, "HTTPNotFound")
    assert member.get(f"/v2.0/segments?network_id={net['id']}") == (200, {"segments": []})
    assert len(segments_of(admin, net["id"])) == 1


def test_an_unknown_segment_is_segment_not_found(admin: Client) -> None:
    for result in (admin.get(f"/v2.0/segments/{ZERO_UUID}"),
                   admin.delete(f"/v2.0/segments/{ZERO_UUID}")):
        assert error(result, 404, "SegmentNotFound") == (
            f"Segment {ZERO_UUID} could not be found.")


def test_segments_have_no_tag_api(admin: Client) -> None:
    seg = segments_of(admin, vlan_network(admin)["id"])[0]
    assert error(admin.put(f"/v2.0/segments/{seg['id']}/tags/t"), 404, "HTTPNotFound")


def test_a_networks_last_segment_can_go_and_provider_attributes_become_null(
        admin: Client) -> None:
    net = vlan_network(admin)
    [seg] = segments_of(admin, net["id"])
    assert admin.delete(f"/v2.0/segments/{seg['id']}")[0] == 204
    status, body = admin.get(f"/v2.0/networks/{net['id']}")
    assert status == 200
    assert body["network"]["provider:network_type"] is None
    assert body["network"]["provider:segmentation_id"] is None
    assert segments_of(admin, net["id"]) == []


def test_deleting_a_network_deletes_its_segments_and_frees_their_ids(admin: Client) -> None:
    net = vlan_network(admin)
    add_segment(admin, net["id"], "physnet2", segmentation_id=3002)
    assert admin.delete(f"/v2.0/networks/{net['id']}")[0] == 204
    assert segments_of(admin, net["id"]) == []
    add_segment(admin, vlan_network(admin)["id"], "physnet2", segmentation_id=3002)


def test_segments_filter_and_sort_as_upstream(admin: Client) -> None:
    net = vlan_network(admin)
    add_segment(admin, net["id"], "physnet2", segmentation_id=3240, name="b")
    add_segment(admin, net["id"], "physnet2", segmentation_id=3230, name="a")
    status, body = admin.get(f"/v2.0/segments?network_id={net['id']}&physical_network="
                             f"physnet2&sort_key=segmentation_id&sort_dir=asc")
    assert status == 200
    assert [s["segmentation_id"] for s in body["segments"]] == [3230, 3240]
    status, body = admin.get(f"/v2.0/segments?network_id={net['id']}&name=b&fields=name")
    assert body == {"segments": [{"name": "b"}]}
    # segmentation_id sorts but does not filter, as upstream.
    assert error(admin.get("/v2.0/segments?segmentation_id=3240"), 400, "HTTPBadRequest")


def test_extensions_are_listed_with_upstreams_descriptors(admin: Client) -> None:
    for alias, (name, description, updated) in DESCRIPTORS.items():
        status, body = admin.get(f"/v2.0/extensions/{alias}")
        assert status == 200, body
        assert body["extension"] == {"alias": alias, "name": name, "description": description,
                                     "updated": updated, "links": []}
