"""``/v2.0/network-segment-ranges`` (``network-segment-range``): admin-managed
segment ranges, as upstream's plugin and neutron-tempest-plugin's
``test_network_segment_range`` expect them."""
from __future__ import annotations

import uuid
from typing import Any

from tests.api._helpers import ZERO_UUID, error, network
from tests.conftest import Client
from tests.segment_ranges.conftest import DEFAULT_VNIS, PATH, fresh_ids, make_range

KEYS = {"id", "name", "description", "default", "shared", "project_id", "network_type",
        "physical_network", "minimum", "maximum", "used", "available", "created_at",
        "updated_at", "revision_number", "tags"}


def _net_in(admin: Client, project: str, **attrs: Any) -> dict[str, Any]:
    return network(admin, project_id=project, **attrs)


def test_the_extension_is_listed_with_upstreams_descriptor(admin: Client) -> None:
    status, body = admin.get("/v2.0/extensions/network-segment-range")
    assert status == 200
    assert body["extension"]["name"] == "Neutron Network Segment Range"
    assert body["extension"]["updated"] == "2018-11-29T00:00:00-00:00"


def test_the_configured_ranges_are_default_shared_ranges(admin: Client) -> None:
    status, body = admin.get(f"{PATH}?default=True")
    assert status == 200
    found = {(r["network_type"], r["physical_network"]): r
             for r in body["network_segment_ranges"]}
    assert set(found) == {("vlan", "physnet1"), ("vxlan", ""), ("gre", "")}
    vxlan = found[("vxlan", "")]
    assert set(vxlan) == KEYS
    assert (vxlan["minimum"], vxlan["maximum"]) == DEFAULT_VNIS
    assert vxlan["default"] is True and vxlan["shared"] is True
    assert vxlan["project_id"] is None and vxlan["name"] is None
    assert (found[("vlan", "physnet1")]["minimum"], found[("vlan", "physnet1")]["maximum"]) \
        == (100, 120)
    assert found[("vlan", "physnet1")]["available"] == list(range(100, 121))


def test_a_default_range_can_be_neither_updated_nor_deleted(admin: Client) -> None:
    [vxlan] = admin.get(f"{PATH}?default=True&network_type=vxlan")[1]["network_segment_ranges"]
    message = error(admin.put(f"{PATH}/{vxlan['id']}", {"network_segment_range": {
        "name": "mine"}}), 400, "NetworkSegmentRangeDefaultReadOnly")
    assert message == (f"Network Segment Range {vxlan['id']} is a default segment range "
                       f"which could not be updated or deleted.")
    error(admin.delete(f"{PATH}/{vxlan['id']}"), 400, "NetworkSegmentRangeDefaultReadOnly")


def test_create_show_update_delete_a_project_range(admin: Client) -> None:
    lo, hi = fresh_ids()
    made = make_range(admin, minimum=lo, maximum=hi, tags=["red"])
    assert set(made) == KEYS
    assert made["default"] is False and made["shared"] is False
    assert (made["network_type"], made["physical_network"]) == ("vxlan", "")
    assert (made["minimum"], made["maximum"], made["revision_number"]) == (lo, hi, 0)
    assert made["available"] == list(range(lo, hi + 1)) and made["used"] == {}
    assert made["tags"] == ["red"] and made["description"] == ""
    assert admin.get(f"{PATH}/{made['id']}") == (200, {"network_segment_range": made})
    status, body = admin.put(f"{PATH}/{made['id']}", {"network_segment_range": {
        "name": "new-range-name", "minimum": lo - 5, "maximum": hi + 50}})
    assert status == 200, body
    updated = body["network_segment_range"]
    assert (updated["name"], updated["minimum"], updated["maximum"]) == (
        "new-range-name", lo - 5, hi + 50)
    assert updated["revision_number"] == 1
    assert updated["available"] == list(range(lo - 5, hi + 51))
    assert admin.delete(f"{PATH}/{made['id']}") == (204, None)
    assert admin.get(f"{PATH}?id={made['id']}") == (200, {"network_segment_ranges": []})
    message = error(admin.get(f"{PATH}/{made['id']}"), 404, "NetworkSegmentRangeNotFound")
    assert message == f"Network Segment Range {made['id']} could not be found."
    error(admin.delete(f"{PATH}/{ZERO_UUID}"), 404, "NetworkSegmentRangeNotFound")


def test_a_shared_range_belongs_to_no_project(admin: Client) -> None:
    lo, hi = fresh_ids()
    made = make_range(admin, shared=True, project_id="", minimum=lo, maximum=hi)
    assert made["shared"] is True and made["project_id"] is None
    admin.delete(f"{PATH}/{made['id']}")


def test_a_project_network_takes_its_segment_from_its_projects_range(admin: Client) -> None:
    lo, hi = fresh_ids()
    made = make_range(admin, minimum=lo, maximum=hi)
    project = made["project_id"]
    nets = [_net_in(admin, project) for _ in range(hi - lo + 1)]
    assert sorted(n["provider:segmentation_id"] for n in nets) == list(range(lo, hi + 1))
    shown = admin.get(f"{PATH}/{made['id']}")[1]["network_segment_range"]
    assert shown["available"] == []
    assert shown["used"] == {str(n["provider:segmentation_id"]): project for n in nets}
    # Used up: the project's next network comes from the shared defaults.
    extra = _net_in(admin, project)
    assert DEFAULT_VNIS[0] <= extra["provider:segmentation_id"] <= DEFAULT_VNIS[1]
    for net in [*nets, extra]:
        admin.delete(f"/v2.0/networks/{net['id']}")
    assert admin.delete(f"{PATH}/{made['id']}") == (204, None)


def test_a_partial_provider_segment_comes_from_the_projects_range(admin: Client) -> None:
    lo, hi = fresh_ids(1)
    made = make_range(admin, minimum=lo, maximum=hi)
    net = _net_in(admin, made["project_id"], **{"provider:network_type": "vxlan"})
    assert net["provider:segmentation_id"] == lo
    admin.delete(f"/v2.0/networks/{net['id']}")
    admin.delete(f"{PATH}/{made['id']}")


def test_other_projects_never_get_segments_of_a_private_range(admin: Client,
                                                              member: Client) -> None:
    """A private range inside the shared defaults: its ids are its project's."""
    [vxlan] = admin.get(f"{PATH}?default=True&network_type=vxlan")[1]["network_segment_ranges"]
    free = vxlan["available"]
    assert len(free) >= 4
    mine = make_range(admin, minimum=free[0], maximum=free[-1] - 2)
    nets = []
    while True:
        status, body = member.post("/v2.0/networks", {"network": {"name": "n"}})
        if status != 201:
            assert status == 503 and body["NeutronError"]["type"] == "NoNetworkAvailable"
            break
        nets.append(body["network"])
    got = {admin.get(f"/v2.0/networks/{n['id']}")[1]["network"]["provider:segmentation_id"]
           for n in nets}
    assert got and not got & set(range(free[0], free[-1] - 1))
    for net in nets:
        admin.delete(f"/v2.0/networks/{net['id']}")
    assert admin.delete(f"{PATH}/{mine['id']}") == (204, None)


def test_an_update_excluding_an_allocated_segment_is_refused(admin: Client) -> None:
    lo, hi = fresh_ids()
    made = make_range(admin, minimum=lo, maximum=hi)
    net = _net_in(admin, made["project_id"], **{"provider:network_type": "vxlan"})
    seg = net["provider:segmentation_id"]
    message = error(admin.put(f"{PATH}/{made['id']}", {"network_segment_range": {
        "name": "x", "minimum": seg + 1, "maximum": hi + 50}}),
        409, "NetworkSegmentRangeReferencedByProject")
    assert message == (f"Network Segment Range {made['id']} is referenced by one or more "
                       f"project networks.")
    # Keeping the segment as the new minimum is fine.
    status, body = admin.put(f"{PATH}/{made['id']}", {"network_segment_range": {
        "minimum": seg, "maximum": hi + 50}})
    assert status == 200 and body["network_segment_range"]["minimum"] == seg
    admin.delete(f"/v2.0/networks/{net['id']}")
    admin.delete(f"{PATH}/{made['id']}")


def test_a_range_holding_a_segment_cannot_be_deleted_until_it_is_released(
        admin: Client) -> None:
    lo, hi = fresh_ids()
    made = make_range(admin, minimum=lo, maximum=hi)
    net = _net_in(admin, made["project_id"], **{"provider:network_type": "vxlan"})
    error(admin.delete(f"{PATH}/{made['id']}"), 409, "NetworkSegmentRangeReferencedByProject")
    admin.delete(f"/v2.0/networks/{net['id']}")
    assert admin.delete(f"{PATH}/{made['id']}") == (204, None)


def test_ranges_that_are_not_defaults_may_not_overlap(admin: Client) -> None:
    lo, hi = fresh_ids()
    first = make_range(admin, minimum=lo, maximum=hi)
    message = error(admin.post(PATH, {"network_segment_range": {
        "shared": True, "network_type": "vxlan", "minimum": hi, "maximum": hi + 2}}),
        409, "NetworkSegmentRangeOverlaps")
    assert message == f"Network segment range overlaps with range(s) with id {first['id']}"
    # The same ids as a default range's are fine; another type's too.
    [vxlan] = admin.get(f"{PATH}?default=True&network_type=vxlan")[1]["network_segment_ranges"]
    top = make_range(admin, minimum=vxlan["maximum"], maximum=vxlan["maximum"])
    gre = make_range(admin, network_type="gre", minimum=lo, maximum=hi)
    for made in (first, top, gre):
        assert admin.delete(f"{PATH}/{made['id']}") == (204, None)


def test_bad_ranges_are_refused_with_upstreams_errors(admin: Client) -> None:
    def post(**attrs: Any) -> Any:
        body = {"network_type": "vxlan", "minimum": 3000, "maximum": 3001, **attrs}
        return admin.post(PATH, {"network_segment_range": body})

    assert error(post(network_type="geneve"), 400,
                 "NetworkSegmentRangeNetTypeNotSupported") == (
        "Network type geneve does not support network segment ranges.")
    error(post(network_type="flat"), 400, "HTTPBadRequest")
    error(post(minimum=0), 400, "HTTPBadRequest")
    assert error(post(minimum=3001, maximum=3000), 400, "NetworkTunnelRangeError") == (
        "Invalid network tunnel range: '3001:3000' - End of tunnel range is less than "
        "start of tunnel range.")
    error(post(maximum=2 ** 24), 400, "NetworkTunnelRangeError")
    assert error(post(network_type="vlan", physical_network="physnet1", minimum=4000,
                      maximum=4095), 400, "NetworkVlanRangeError").startswith(
        "Invalid network VLAN range: '4000:4095'")
    assert error(post(network_type="vlan", minimum=1, maximum=2), 400, "BadRequest") == (
        "Bad network_segment_range request: Network type vlan requires 'physical_network' "
        "to be specified while creating new range.")
    error(post(minimum="x"), 400, "InvalidInput")
    error(post(default=True), 400, "HTTPBadRequest")
    assert admin.get(f"{PATH}?minimum=3000") == (200, {"network_segment_ranges": []})


def test_a_vlan_range_of_a_project_serves_its_networks_on_that_physnet(admin: Client) -> None:
    made = make_range(admin, network_type="vlan", physical_network="physnet2", minimum=300,
                      maximum=300)
    net = _net_in(admin, made["project_id"], **{"provider:network_type": "vlan",
                                                "provider:physical_network": "physnet2"})
    assert net["provider:segmentation_id"] == 300
    error(admin.delete(f"{PATH}/{made['id']}"), 409, "NetworkSegmentRangeReferencedByProject")
    admin.delete(f"/v2.0/networks/{net['id']}")
    assert admin.delete(f"{PATH}/{made['id']}") == (204, None)


def test_listing_filters_sorts_pages_and_picks_fields(admin: Client) -> None:
    tag = uuid.uuid4().hex
    made = []
    for name in ("b", "a", "c"):
        lo, hi = fresh_ids(2)
        made.append(make_range(admin, name=name, minimum=lo, maximum=hi, tags=[tag]))
    base = f"{PATH}?tags={tag}"
    status, body = admin.get(f"{base}&sort_key=name&sort_dir=desc&fields=name&fields=id")
    assert status == 200
    assert [r["name"] for r in body["network_segment_ranges"]] == ["c", "b", "a"]
    assert set(body["network_segment_ranges"][0]) == {"name", "id"}
    status, page = admin.get(f"{base}&sort_key=name&sort_dir=asc&limit=2")
    assert status == 200, page
    assert [r["name"] for r in page["network_segment_ranges"]] == ["a", "b"]
    assert any(link["rel"] == "next" for link in page["network_segment_ranges_links"])
    status, rest = admin.get(f"{base}&sort_key=name&sort_dir=asc&limit=2"
                             f"&marker={made[0]['id']}")
    assert [r["name"] for r in rest["network_segment_ranges"]] == ["c"]
    status, body = admin.get(f"{PATH}?project_id={made[1]['project_id']}")
    assert [r["id"] for r in body["network_segment_ranges"]] == [made[1]["id"]]
    status, body = admin.get(f"{PATH}?network_type=gre&default=True")
    assert [r["network_type"] for r in body["network_segment_ranges"]] == ["gre"]
    status, body = admin.get(f"{PATH}?minimum={made[2]['minimum']}&shared=False")
    assert [r["id"] for r in body["network_segment_ranges"]] == [made[2]["id"]]
    status, body = admin.get(f"{PATH}?tags={tag}&sort_key=minimum&sort_dir=desc")
    assert [r["name"] for r in body["network_segment_ranges"]] == ["c", "a", "b"]
    # tempest lists by an id that is no UUID: nothing matches.
    assert admin.get(f"{PATH}?id=33") == (200, {"network_segment_ranges": []})
    for r in made:
        admin.delete(f"{PATH}/{r['id']}")


def test_tags_of_a_range(admin: Client) -> None:
    lo, hi = fresh_ids(1)
    made = make_range(admin, minimum=lo, maximum=hi)
    rid = made["id"]
    assert admin.put(f"{PATH}/{rid}/tags", {"tags": ["a", "b"]}) == (200, {"tags": ["a", "b"]})
    assert admin.put(f"{PATH}/{rid}/tags/c")[0] == 201
    assert admin.get(f"{PATH}/{rid}/tags") == (200, {"tags": ["a", "b", "c"]})
    shown = admin.get(f"{PATH}/{rid}")[1]["network_segment_range"]
    assert shown["tags"] == ["a", "b", "c"] and shown["revision_number"] > 0
    assert admin.delete(f"{PATH}/{rid}/tags") == (204, None)
    admin.delete(f"{PATH}/{rid}")


def test_ranges_are_for_admins_only(admin: Client, member: Client, other: Client,
                                    project_id: str) -> None:
    lo, hi = fresh_ids(1)
    mine = make_range(admin, project_id=project_id, minimum=lo, maximum=hi)
    body = {"network_segment_range": {"network_type": "vxlan", "minimum": lo + 5,
                                      "maximum": lo + 6}}
    # Even the range's own project does not see it (the web layer's 404);
    # to another project it does not exist.
    for client, kind in ((member, "HTTPNotFound"), (other, "NetworkSegmentRangeNotFound")):
        error(client.post(PATH, body), 403, "PolicyNotAuthorized")
        error(client.get(f"{PATH}/{mine['id']}"), 404, kind)
        error(client.put(f"{PATH}/{mine['id']}", {"network_segment_range": {"name": "x"}}),
              404, kind)
        error(client.delete(f"{PATH}/{mine['id']}"), 404, kind)
        assert client.get(PATH) == (200, {"network_segment_ranges": []})
    assert admin.get(f"{PATH}/{mine['id']}")[1]["network_segment_range"]["name"] == mine["name"]
    assert admin.delete(f"{PATH}/{mine['id']}") == (204, None)
