"""``address-scope`` and ``rbac-address-scope`` over real HTTP, as upstream 29 answers."""
from __future__ import annotations

import uuid

import pytest

from tests.api import _helpers as h
from tests.conftest import Client


def scope(client, ip_version=4, **attrs):
    attrs.setdefault("name", h.unique("as"))
    return h.created(client.post("/v2.0/address-scopes", {"address_scope": {
        "ip_version": ip_version, **attrs}}), "address_scope")


def reader_of(server, project):
    return Client(server.url, project, "reader")


def test_scope_has_upstreams_fields_and_no_standard_attributes(member, project_id):
    s = scope(member)
    assert set(s) == {"id", "name", "project_id", "tenant_id", "shared", "ip_version"}
    assert (s["project_id"], s["shared"], s["ip_version"]) == (project_id, False, 4)
    status, body = member.get(f"/v2.0/address-scopes/{s['id']}")
    assert status == 200 and body["address_scope"] == s


def test_scope_input_is_validated(member):
    assert "ip_version" in h.error(member.post("/v2.0/address-scopes", {"address_scope": {
        "name": "x"}}), 400, "HTTPBadRequest")
    h.error(member.post("/v2.0/address-scopes", {"address_scope": {"ip_version": 5}}),
            400, "HTTPBadRequest")
    msg = h.error(member.post("/v2.0/address-scopes", {"address_scope": {
        "ip_version": 4, "description": "x"}}), 400, "HTTPBadRequest")
    assert msg == "Unrecognized attribute(s) 'description'"
    s = scope(member)
    h.error(member.put(f"/v2.0/address-scopes/{s['id']}", {"address_scope": {
        "ip_version": 6}}), 400, "HTTPBadRequest")


def test_private_scope_is_invisible_to_other_projects(member, other):
    s = scope(member)
    msg = h.error(other.get(f"/v2.0/address-scopes/{s['id']}"), 404, "AddressScopeNotFound")
    assert msg == f"Address scope {s['id']} could not be found."
    assert s["id"] not in [x["id"] for x in other.get("/v2.0/address-scopes")[1]["address_scopes"]]
    h.error(other.delete(f"/v2.0/address-scopes/{s['id']}"), 404, "AddressScopeNotFound")


def test_only_admins_share_and_shared_scopes_are_visible_to_all(member, other, admin):
    h.error(member.post("/v2.0/address-scopes", {"address_scope": {
        "ip_version": 4, "shared": True}}), 403, "PolicyNotAuthorized")
    s = scope(member)
    h.error(member.put(f"/v2.0/address-scopes/{s['id']}", {"address_scope": {
        "shared": True}}), 403, "PolicyNotAuthorized")
    status, body = admin.put(f"/v2.0/address-scopes/{s['id']}", {"address_scope": {
        "shared": True, "name": "renamed"}})
    assert status == 200 and body["address_scope"]["shared"] is True
    assert body["address_scope"]["name"] == "renamed"
    seen = other.get(f"/v2.0/address-scopes/{s['id']}")[1]["address_scope"]
    assert seen["shared"] is True
    listed = other.get("/v2.0/address-scopes?shared=true")[1]["address_scopes"]
    assert s["id"] in [x["id"] for x in listed]
    # visible is not writable for other projects
    h.error(other.put(f"/v2.0/address-scopes/{s['id']}", {"address_scope": {
        "name": "mine"}}), 403, "PolicyNotAuthorized")
    # the sharing is an RBAC entry of object type address_scope
    entries = admin.get(f"/v2.0/rbac-policies?object_id={s['id']}")[1]["rbac_policies"]
    assert [(e["object_type"], e["action"], e["target_tenant"]) for e in entries] == [
        ("address_scope", "access_as_shared", "*")]


def test_a_shared_scope_cannot_be_unshared(admin):
    s = scope(admin, shared=True)
    msg = h.error(admin.put(f"/v2.0/address-scopes/{s['id']}", {"address_scope": {
        "shared": False}}), 400, "AddressScopeUpdateError")
    assert msg == (f"Unable to update address scope {s['id']} : Shared address scope "
                   f"can't be unshared.")


def test_reader_reads_but_does_not_write(server, member, project_id):
    s = scope(member)
    reader = reader_of(server, project_id)
    assert reader.get(f"/v2.0/address-scopes/{s['id']}")[0] == 200
    h.error(reader.post("/v2.0/address-scopes", {"address_scope": {"ip_version": 4}}),
            403, "PolicyNotAuthorized")
    h.error(reader.delete(f"/v2.0/address-scopes/{s['id']}"), 403, "PolicyNotAuthorized")


def test_filters_by_ip_version_and_name(member):
    v4, v6 = scope(member, 4), scope(member, 6)
    ids = [x["id"] for x in member.get("/v2.0/address-scopes?ip_version=6")[1]["address_scopes"]]
    assert v6["id"] in ids and v4["id"] not in ids
    listed = member.get(f"/v2.0/address-scopes?name={v4['name']}")[1]["address_scopes"]
    assert [x["id"] for x in listed] == [v4["id"]]


def test_pool_joins_a_scope_of_its_version(member):
    s4 = scope(member, 4)
    pool = h.pool(member, ["10.80.0.0/16"], address_scope_id=s4["id"])
    assert pool["address_scope_id"] == s4["id"]
    listed = member.get(f"/v2.0/subnetpools?address_scope_id={s4['id']}")[1]["subnetpools"]
    assert [p["id"] for p in listed] == [pool["id"]]
    msg = h.error(member.post("/v2.0/subnetpools", {"subnetpool": {
        "name": "v6", "prefixes": ["2001:db8::/48"], "address_scope_id": s4["id"]}}),
        400, "IllegalSubnetPoolIpVersionAssociationToAddressScope")
    assert msg.endswith(f"cannot associate with address scope {s4['id']} because "
                        f"subnetpool ip_version is not 4.")
    h.error(member.post("/v2.0/subnetpools", {"subnetpool": {
        "name": "x", "prefixes": ["10.81.0.0/16"], "address_scope_id": h.ZERO_UUID}}),
        404, "AddressScopeNotFound")


def test_pools_in_one_scope_never_overlap(member):
    s = scope(member)
    first = h.pool(member, ["10.90.0.0/16"], address_scope_id=s["id"])
    msg = h.error(member.post("/v2.0/subnetpools", {"subnetpool": {
        "name": "x", "prefixes": ["10.90.128.0/24"], "address_scope_id": s["id"]}}),
        409, "AddressScopePrefixConflict")
    assert msg == ("Failed to associate address scope: subnetpools within an address "
                   "scope must have unique prefixes.")
    second = h.pool(member, ["10.90.128.0/24"])  # outside the scope: fine
    h.error(member.put(f"/v2.0/subnetpools/{second['id']}", {"subnetpool": {
        "address_scope_id": s["id"]}}), 409, "AddressScopePrefixConflict")
    third = h.pool(member, ["10.91.0.0/24"], address_scope_id=s["id"])
    h.error(member.put(f"/v2.0/subnetpools/{third['id']}/add_prefixes", {
        "prefixes": ["10.90.5.0/24"]}), 409, "AddressScopePrefixConflict")
    h.error(member.put(f"/v2.0/subnetpools/{third['id']}", {"subnetpool": {
        "prefixes": ["10.91.0.0/24", "10.90.6.0/24"]}}), 409, "AddressScopePrefixConflict")
    assert member.get(f"/v2.0/subnetpools/{third['id']}")[1]["subnetpool"]["prefixes"] == [
        "10.91.0.0/24"]
    # leaving the scope frees the prefixes
    status, body = member.put(f"/v2.0/subnetpools/{first['id']}", {"subnetpool": {
        "address_scope_id": None}})
    assert status == 200 and body["subnetpool"]["address_scope_id"] is None
    assert member.put(f"/v2.0/subnetpools/{second['id']}", {"subnetpool": {
        "address_scope_id": s["id"]}})[0] == 200


def test_scope_in_use_by_a_pool_cannot_be_deleted(member):
    s = scope(member)
    pool = h.pool(member, ["10.92.0.0/16"], address_scope_id=s["id"])
    msg = h.error(member.delete(f"/v2.0/address-scopes/{s['id']}"), 409, "AddressScopeInUse")
    assert msg == (f"Unable to complete operation on address scope {s['id']}. There are one "
                   f"or more subnet pools in use on the address scope.")
    assert member.delete(f"/v2.0/subnetpools/{pool['id']}")[0] == 204
    assert member.delete(f"/v2.0/address-scopes/{s['id']}")[0] == 204
    h.error(member.get(f"/v2.0/address-scopes/{s['id']}"), 404, "AddressScopeNotFound")


def test_other_projects_use_a_shared_scope_but_only_admins_update_their_pools(admin, other):
    s = scope(admin, shared=True)
    pool = h.pool(other, ["10.93.0.0/16"], address_scope_id=s["id"])
    msg = h.error(other.put(f"/v2.0/subnetpools/{pool['id']}", {"subnetpool": {
        "name": "new"}}), 400, "IllegalSubnetPoolUpdate")
    assert msg == (f"Illegal subnetpool update : subnetpool {pool['id']} cannot be updated "
                   f"when associated with shared address scope {s['id']}.")
    assert admin.put(f"/v2.0/subnetpools/{pool['id']}", {"subnetpool": {
        "name": "new"}})[0] == 200
    # the other project's pool depends on the sharing entry
    entry = admin.get(f"/v2.0/rbac-policies?object_id={s['id']}")[1]["rbac_policies"][0]
    h.error(admin.delete(f"/v2.0/rbac-policies/{entry['id']}"), 409, "RbacPolicyInUse")


def test_rbac_shares_a_scope_with_one_project(member, server):
    s = scope(member)
    target = uuid.uuid4().hex
    status, body = member.post("/v2.0/rbac-policies", {"rbac_policy": {
        "object_type": "address_scope", "object_id": s["id"], "action": "access_as_shared",
        "target_tenant": target}})
    assert status == 201, body
    them = Client(server.url, target, "member")
    assert them.get(f"/v2.0/address-scopes/{s['id']}")[1]["address_scope"]["shared"] is True
    assert member.get(f"/v2.0/address-scopes/{s['id']}")[1]["address_scope"]["shared"] is False
    h.error(member.post("/v2.0/rbac-policies", {"rbac_policy": {
        "object_type": "address_scope", "object_id": s["id"],
        "action": "access_as_external", "target_tenant": target}}),
        400, "InvalidActionForType")
    assert member.delete(f"/v2.0/rbac-policies/{body['rbac_policy']['id']}")[0] == 204
    h.error(them.get(f"/v2.0/address-scopes/{s['id']}"), 404, "AddressScopeNotFound")


def test_networks_show_the_scope_of_their_subnets(member):
    s4, s6 = scope(member, 4), scope(member, 6)
    p4 = h.pool(member, ["10.94.0.0/16"], address_scope_id=s4["id"])
    p6 = h.pool(member, ["2001:db8:94::/48"], address_scope_id=s6["id"])
    net = h.network(member)
    assert (net["ipv4_address_scope"], net["ipv6_address_scope"]) == (None, None)
    h.subnet(member, net["id"], cidr=None, subnetpool_id=p4["id"], prefixlen=24)
    shown = member.get(f"/v2.0/networks/{net['id']}")[1]["network"]
    assert (shown["ipv4_address_scope"], shown["ipv6_address_scope"]) == (s4["id"], None)
    h.subnet(member, net["id"], cidr=None, ip_version=6, subnetpool_id=p6["id"])
    listed = member.get(f"/v2.0/networks?id={net['id']}")[1]["networks"][0]
    assert (listed["ipv4_address_scope"], listed["ipv6_address_scope"]) == (s4["id"], s6["id"])


def test_subnets_of_one_version_on_a_network_stay_in_one_pool_or_scope(member):
    s = scope(member)
    scoped = h.pool(member, ["10.95.0.0/16"], address_scope_id=s["id"])
    unscoped = h.pool(member, ["10.96.0.0/16"])
    net = h.network(member)
    h.subnet(member, net["id"], cidr=None, subnetpool_id=scoped["id"], prefixlen=24)
    msg = h.error(member.post("/v2.0/subnets", {"subnet": {
        "network_id": net["id"], "ip_version": 4, "subnetpool_id": unscoped["id"],
        "prefixlen": 24}}), 400, "NetworkAddressScopeAffinityError")
    assert msg == ("Subnets of the same address family hosted on the same network must "
                   "all participate in the same address scope.")
    msg = h.error(member.post("/v2.0/subnets", {"subnet": {
        "network_id": net["id"], "ip_version": 4, "cidr": "192.168.95.0/24"}}),
        400, "NetworkSubnetPoolAffinityError")
    assert msg == "Subnets hosted on the same network must be allocated from the same subnet pool."
    # another pool of the same scope is fine
    sibling = h.pool(member, ["10.97.0.0/16"], address_scope_id=s["id"])
    h.subnet(member, net["id"], cidr=None, subnetpool_id=sibling["id"], prefixlen=24)
    # moving one pool to another scope would split the network across scopes
    elsewhere = scope(member)
    h.error(member.put(f"/v2.0/subnetpools/{scoped['id']}", {"subnetpool": {
        "address_scope_id": elsewhere["id"]}}), 400, "NetworkAddressScopeAffinityError")


@pytest.mark.parametrize("first", ["pool", "cidr"])
def test_unscoped_networks_keep_one_pool_per_version(member, first):
    pool = h.pool(member, ["10.98.0.0/16"])
    net = h.network(member)
    if first == "pool":
        h.subnet(member, net["id"], cidr=None, subnetpool_id=pool["id"], prefixlen=24)
        body = {"cidr": "192.168.98.0/24"}
    else:
        h.subnet(member, net["id"], cidr="192.168.98.0/24")
        body = {"subnetpool_id": pool["id"], "prefixlen": 24}
    h.error(member.post("/v2.0/subnets", {"subnet": {
        "network_id": net["id"], "ip_version": 4, **body}}), 400,
        "NetworkSubnetPoolAffinityError")
    # the other IP version is independent
    h.subnet(member, net["id"], cidr="2001:db8:98::/64")
