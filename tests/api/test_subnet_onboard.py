"""``subnet_onboard``: ``PUT /v2.0/subnetpools/{id}/onboard_network_subnets``
moves a network's subnets into a subnet pool, as upstream."""
from __future__ import annotations

from tests.api import _helpers as h


def _aliases(client):
    return {e["alias"] for e in client.get("/v2.0/extensions")[1]["extensions"]}


def _onboard(client, pool_id, body):
    return client.put(f"/v2.0/subnetpools/{pool_id}/onboard_network_subnets", body)


def test_subnet_onboard_is_listed(member):
    assert "subnet_onboard" in _aliases(member)


def test_owner_onboards_the_networks_subnets_of_the_pools_version(member):
    net = h.network(member)
    v4 = h.subnet(member, net["id"], "10.20.1.0/24")
    v6 = h.subnet(member, net["id"], "2001:db8:20::/64")
    pool = h.pool(member, ["10.30.0.0/16"])
    status, body = _onboard(member, pool["id"], {"network_id": net["id"]})
    assert status == 200
    assert body == [{"id": v4["id"], "cidr": "10.20.1.0/24"}]
    shown = member.get(f"/v2.0/subnetpools/{pool['id']}")[1]["subnetpool"]
    assert shown["prefixes"] == ["10.20.1.0/24", "10.30.0.0/16"]
    assert shown["revision_number"] > pool["revision_number"]
    moved = member.get(f"/v2.0/subnets/{v4['id']}")[1]["subnet"]
    assert moved["subnetpool_id"] == pool["id"]
    assert moved["revision_number"] > v4["revision_number"]
    assert member.get(f"/v2.0/subnets/{v6['id']}")[1]["subnet"]["subnetpool_id"] is None


def test_onboarding_twice_conflicts_with_the_pools_allocations(member):
    net = h.network(member)
    sub = h.subnet(member, net["id"], "10.21.1.0/24")
    pool = h.pool(member, ["10.31.0.0/16"])
    assert _onboard(member, pool["id"], {"network_id": net["id"]})[0] == 200
    msg = h.error(_onboard(member, pool["id"], {"network_id": net["id"]}),
                  400, "IllegalSubnetPoolUpdate")
    assert msg == (f"Illegal subnetpool update : Onboarding subnet {sub['id']}: 10.21.1.0/24 "
                   f"conflicts with allocated prefixes in subnet pool {pool['id']}.")


def test_onboard_needs_a_network_the_caller_can_see(member):
    pool = h.pool(member, ["10.32.0.0/16"])
    msg = h.error(_onboard(member, pool["id"], {}), 400, "InvalidInput")
    assert msg == "Invalid input for operation: network_id must be specified.."
    missing = "00000000-0000-0000-0000-000000000000"
    msg = h.error(_onboard(member, pool["id"], {"network_id": missing}), 404, "NetworkNotFound")
    assert msg == f"Network {missing} could not be found."


def test_another_projects_network_cannot_be_onboarded(member, other, admin):
    pool = h.pool(member, ["10.33.0.0/16"])
    private = h.network(other)
    h.subnet(other, private["id"], "10.22.1.0/24")
    h.error(_onboard(member, pool["id"], {"network_id": private["id"]}), 404, "NetworkNotFound")
    shared = h.network(admin, shared=True)
    h.subnet(admin, shared["id"], "10.23.1.0/24")
    msg = h.error(_onboard(member, pool["id"], {"network_id": shared["id"]}),
                  403, "NotAuthorized")
    assert msg == "Not authorized."
    assert member.get(f"/v2.0/subnetpools/{pool['id']}")[1]["subnetpool"]["prefixes"] == \
        ["10.33.0.0/16"]


def test_only_the_pools_owner_or_an_admin_onboards_into_it(member, other, admin):
    pool = h.pool(member, ["10.34.0.0/16"])
    net = h.network(other)
    h.subnet(other, net["id"], "10.24.1.0/24")
    h.error(_onboard(other, pool["id"], {"network_id": net["id"]}), 404, "SubnetPoolNotFound")
    status, body = _onboard(admin, pool["id"], {"network_id": net["id"]})
    assert status == 200 and [s["cidr"] for s in body] == ["10.24.1.0/24"]
