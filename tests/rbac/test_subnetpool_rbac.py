"""Subnet pools shared by RBAC (``rbac-subnetpool``), as observed on upstream Neutron 29.

A pool shared to a project is visible to it with ``shared: true`` (its owner
and admins see ``false``), and the project may allocate subnets from it;
``shared: true`` on create is a ``*`` entry owned by the pool's project;
removing or retargeting an entry while the target project has subnets from
the pool is 409 ``RbacPolicyInUse``.
"""
from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.api import _helpers as h
from tests.conftest import Client, Server
from tests.rbac.test_rbac_api import project_of


@pytest.fixture
def third(server: Server) -> Client:
    return Client(server.url, uuid.uuid4().hex, "member")


def share(client: Client, pool_id: str, target: str, **kw: Any) -> tuple[int, Any]:
    return client.post("/v2.0/rbac-policies", {"rbac_policy": {
        "object_type": "subnetpool", "object_id": pool_id, "action": "access_as_shared",
        "target_tenant": target, **kw}})


def flag(client: Client, pool_id: str) -> Any:
    status, body = client.get(f"/v2.0/subnetpools/{pool_id}")
    assert status == 200, body
    return body["subnetpool"]["shared"]


def listed(client: Client, query: str, pool_id: str) -> bool:
    status, body = client.get(f"/v2.0/subnetpools{query}")
    assert status == 200, body
    return pool_id in {p["id"] for p in body["subnetpools"]}


def from_pool(client: Client, net_id: str, pool_id: str) -> tuple[int, Any]:
    return client.post("/v2.0/subnets", {"subnet": {"network_id": net_id, "ip_version": 4,
                                                    "subnetpool_id": pool_id}})


def test_shared_pool_is_visible_and_usable(admin, member, other, third):
    pool = h.pool(member, ["10.250.0.0/16"], default_prefixlen=26)
    status, body = share(member, pool["id"], project_of(other))
    assert status == 201, body
    assert body["rbac_policy"]["object_type"] == "subnetpool"
    assert flag(other, pool["id"]) is True
    assert flag(member, pool["id"]) is False
    assert flag(admin, pool["id"]) is False
    h.error(third.get(f"/v2.0/subnetpools/{pool['id']}"), 404, "SubnetPoolNotFound")
    assert listed(other, "?shared=true", pool["id"])
    assert not listed(other, "?shared=false", pool["id"])
    assert listed(member, "?shared=false", pool["id"])
    assert not listed(third, "", pool["id"])
    # the target does not see the owner's entry
    assert other.get("/v2.0/rbac-policies")[1]["rbac_policies"] == []
    net = h.network(other)
    sub = h.created(from_pool(other, net["id"], pool["id"]), "subnet")
    assert sub["cidr"] == "10.250.0.0/26"
    h.error(from_pool(third, h.network(third)["id"], pool["id"]), 404, "SubnetPoolNotFound")


def test_rules_for_entries_on_pools(member, other):
    pool = h.pool(member, ["10.251.0.0/16"])
    assert share(member, pool["id"], project_of(other))[0] == 201
    h.error(share(member, pool["id"], project_of(other)), 409, "DuplicateRbacPolicy")
    h.error(share(member, pool["id"], "*"), 403, "PolicyNotAuthorized")
    msg = h.error(share(member, pool["id"], project_of(other), action="access_as_external"),
                  400, "InvalidActionForType")
    assert msg == ("Invalid action 'access_as_external' for object type 'subnetpool'. "
                   "Valid actions: ('access_as_shared',)")
    msg = h.error(share(other, pool["id"], uuid.uuid4().hex), 400, "InvalidInput")
    assert "Only admins can manipulate policies on objects they do not own" in msg
    h.error(member.put(f"/v2.0/subnetpools/{pool['id']}", {"subnetpool": {"shared": False}}),
            400, "HTTPBadRequest")


def test_removing_an_entry_subnets_depend_on_is_409(admin, member, other):
    pool = h.pool(member, ["10.252.0.0/16"], default_prefixlen=26)
    pol = h.created(share(member, pool["id"], project_of(other)), "rbac_policy")
    sub = h.created(from_pool(other, h.network(other)["id"], pool["id"]), "subnet")
    h.error(member.put(f"/v2.0/rbac-policies/{pol['id']}",
                       {"rbac_policy": {"target_tenant": uuid.uuid4().hex}}),
            409, "RbacPolicyInUse")
    msg = h.error(member.delete(f"/v2.0/rbac-policies/{pol['id']}"), 409, "RbacPolicyInUse")
    assert msg.startswith(f"RBAC policy on object {pool['id']} cannot be removed because "
                          "other objects depend on it.")
    # a wildcard entry covers the specific one; then the wildcard is needed
    star = h.created(share(admin, pool["id"], "*"), "rbac_policy")
    assert member.delete(f"/v2.0/rbac-policies/{pol['id']}")[0] == 204
    h.error(admin.delete(f"/v2.0/rbac-policies/{star['id']}"), 409, "RbacPolicyInUse")
    assert other.delete(f"/v2.0/subnets/{sub['id']}")[0] == 204
    assert admin.delete(f"/v2.0/rbac-policies/{star['id']}")[0] == 204


def test_shared_true_is_a_wildcard_entry(admin, member, other):
    pool = h.pool(admin, ["10.253.0.0/16"], shared=True, project_id=project_of(member))
    status, body = admin.get(f"/v2.0/rbac-policies?object_id={pool['id']}")
    assert status == 200, body
    [entry] = body["rbac_policies"]
    assert (entry["object_type"], entry["target_tenant"], entry["project_id"]) == (
        "subnetpool", "*", project_of(member))
    assert flag(other, pool["id"]) is True and flag(member, pool["id"]) is True
    assert admin.get(f"/v2.0/rbac-policies?object_type=network&object_id={pool['id']}")[1][
        "rbac_policies"] == []
    # deleting the pool deletes its entries
    assert member.delete(f"/v2.0/subnetpools/{pool['id']}")[0] == 204
    h.error(admin.get(f"/v2.0/rbac-policies/{entry['id']}"), 404, "RbacPolicyNotFound")


def test_sharing_needs_access_to_the_pools_address_scope(server, admin, member, other, third):
    """tempest's test_cannot_share_if_no_access_to_address_scope: a pool in
    an address scope is shared only with projects the scope is shared with
    (through an entry the caller's project made, as upstream counts them)."""
    scope = h.created(admin.post("/v2.0/address-scopes", {"address_scope": {
        "name": "s", "ip_version": 4}}), "address_scope")
    for_member = h.created(admin.post("/v2.0/rbac-policies", {"rbac_policy": {
        "object_type": "address_scope", "object_id": scope["id"],
        "action": "access_as_shared", "target_tenant": project_of(member)}}), "rbac_policy")
    pool = h.pool(member, ["10.253.0.0/16"], address_scope_id=scope["id"])
    msg = h.error(share(member, pool["id"], project_of(other)), 400, "InvalidInput")
    assert msg == (f"Invalid input for operation: Failed to create RBAC policy on object "
                   f"{pool['id']} because target project doesn't have access to associated "
                   f"address scope..")
    # an admin is refused too, until the scope is shared with the target
    h.error(share(admin, pool["id"], project_of(other)), 400, "InvalidInput")
    h.created(admin.post("/v2.0/rbac-policies", {"rbac_policy": {
        "object_type": "address_scope", "object_id": scope["id"],
        "action": "access_as_shared", "target_tenant": project_of(other)}}), "rbac_policy")
    h.created(share(admin, pool["id"], project_of(other)), "rbac_policy")
    # the member counts only entries its project made (the admin's is not one)
    h.error(share(member, pool["id"], project_of(third)), 400, "InvalidInput")
    # a pool without a scope is shared as before
    plain = h.pool(member, ["10.254.0.0/16"])
    h.created(share(member, plain["id"], project_of(other)), "rbac_policy")
    assert member.delete(f"/v2.0/subnetpools/{pool['id']}")[0] == 204
    assert admin.delete(f"/v2.0/rbac-policies/{for_member['id']}")[0] == 204
