"""``segments-peer-subnet-host-routes``: on a routed network each segment's
subnets route to the other segments' subnets through their own gateway, as
upstream keeps them."""
from __future__ import annotations

from typing import Any

from tests.api._helpers import subnet
from tests.conftest import Client
from tests.segments.conftest import add_segment, segments_of, vlan_network


def _routes(client: Client, subnet_id: str) -> set[tuple[str, str]]:
    body = client.get(f"/v2.0/subnets/{subnet_id}")[1]["subnet"]
    return {(r["destination"], r["nexthop"]) for r in body["host_routes"]}


def _routed(admin: Client, segments: int = 2) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    net = vlan_network(admin)
    segs = segments_of(admin, net["id"])
    for physnet in ("physnet2", "physnet1")[:segments - 1]:
        segs.append(add_segment(admin, net["id"], physnet))
    return net, segs


def test_segments_peer_subnet_host_routes_is_listed(admin: Client) -> None:
    aliases = {e["alias"] for e in admin.get("/v2.0/extensions")[1]["extensions"]}
    assert {"segment", "segments-peer-subnet-host-routes"} <= aliases


def test_each_segments_subnet_routes_to_the_others_through_its_gateway(admin: Client) -> None:
    net, (s1, s2) = _routed(admin)
    one = subnet(admin, net["id"], "10.40.1.0/24", segment_id=s1["id"])
    assert one["host_routes"] == []
    two = subnet(admin, net["id"], "10.40.2.0/24", segment_id=s2["id"],
                 gateway_ip="10.40.2.1")
    assert {(r["destination"], r["nexthop"]) for r in two["host_routes"]} == \
        {("10.40.1.0/24", "10.40.2.1")}
    assert _routes(admin, one["id"]) == {("10.40.2.0/24", "10.40.1.1")}
    # As upstream: the peers' routes change without a new revision.
    after = admin.get(f"/v2.0/subnets/{one['id']}")[1]["subnet"]
    assert after["revision_number"] == one["revision_number"]


def test_other_versions_and_the_same_segment_get_no_route(admin: Client) -> None:
    net, (s1, s2) = _routed(admin)
    a = subnet(admin, net["id"], "10.41.1.0/24", segment_id=s1["id"])
    b = subnet(admin, net["id"], "10.41.2.0/24", segment_id=s1["id"])
    v6 = subnet(admin, net["id"], "2001:db8:41::/64", segment_id=s2["id"])
    assert _routes(admin, a["id"]) == set() and _routes(admin, b["id"]) == set()
    assert _routes(admin, v6["id"]) == set()
    c = subnet(admin, net["id"], "10.41.3.0/24", segment_id=s2["id"])
    assert _routes(admin, a["id"]) == {("10.41.3.0/24", "10.41.1.1")}
    assert _routes(admin, b["id"]) == {("10.41.3.0/24", "10.41.2.1")}
    assert _routes(admin, c["id"]) == {("10.41.1.0/24", "10.41.3.1"),
                                       ("10.41.2.0/24", "10.41.3.1")}


def test_a_given_route_covering_a_peer_is_kept_instead(admin: Client) -> None:
    net, (s1, s2) = _routed(admin)
    subnet(admin, net["id"], "10.42.1.0/24", segment_id=s1["id"])
    two = subnet(admin, net["id"], "10.42.2.0/24", segment_id=s2["id"], gateway_ip="10.42.2.1",
                 host_routes=[{"destination": "10.42.0.0/16", "nexthop": "10.42.2.254"}])
    assert _routes(admin, two["id"]) == {("10.42.0.0/16", "10.42.2.254")}


def test_a_new_gateway_moves_the_peer_routes(admin: Client) -> None:
    net, (s1, s2) = _routed(admin)
    one = subnet(admin, net["id"], "10.43.1.0/24", segment_id=s1["id"],
                 allocation_pools=[{"start": "10.43.1.10", "end": "10.43.1.200"}])
    subnet(admin, net["id"], "10.43.2.0/24", segment_id=s2["id"])
    status, body = admin.put(f"/v2.0/subnets/{one['id']}",
                             {"subnet": {"gateway_ip": "10.43.1.254"}})
    assert status == 200, body
    assert {(r["destination"], r["nexthop"]) for r in body["subnet"]["host_routes"]} == \
        {("10.43.2.0/24", "10.43.1.254")}
    # Routes set by the owner keep the peers' routes added.
    status, body = admin.put(f"/v2.0/subnets/{one['id']}", {"subnet": {"host_routes": [
        {"destination": "192.0.2.0/24", "nexthop": "10.43.1.9"}]}})
    assert status == 200, body
    assert _routes(admin, one["id"]) == {("192.0.2.0/24", "10.43.1.9"),
                                         ("10.43.2.0/24", "10.43.1.254")}


def test_deleting_a_subnet_drops_the_routes_to_it(admin: Client) -> None:
    net, (s1, s2, s3) = _routed(admin, segments=3)
    one = subnet(admin, net["id"], "10.44.1.0/24", segment_id=s1["id"])
    two = subnet(admin, net["id"], "10.44.2.0/24", segment_id=s2["id"])
    three = subnet(admin, net["id"], "10.44.3.0/24", segment_id=s3["id"])
    assert _routes(admin, one["id"]) == {("10.44.2.0/24", "10.44.1.1"),
                                         ("10.44.3.0/24", "10.44.1.1")}
    assert admin.delete(f"/v2.0/subnets/{three['id']}")[0] == 204
    assert _routes(admin, one["id"]) == {("10.44.2.0/24", "10.44.1.1")}
    assert _routes(admin, two["id"]) == {("10.44.1.0/24", "10.44.2.1")}


def test_a_network_without_segments_gets_no_peer_routes(admin: Client) -> None:
    net = vlan_network(admin)
    a = subnet(admin, net["id"], "10.45.1.0/24")
    b = subnet(admin, net["id"], "10.45.2.0/24")
    assert _routes(admin, a["id"]) == set() and _routes(admin, b["id"]) == set()
