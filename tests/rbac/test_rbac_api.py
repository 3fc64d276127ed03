"""``/v2.0/rbac-policies`` and network sharing, as upstream Neutron answers.

Personas: admin, the network's owner (``member``), the target project
(``other``), a third project and a reader of the owner's project. Every
expected code and message was observed on upstream Neutron 29.
"""
from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.api import _helpers as h
from tests.conftest import Client, Server


@pytest.fixture
def third(server: Server) -> Client:
    return Client(server.url, uuid.uuid4().hex, "member")


@pytest.fixture
def reader(server: Server, project_id: str) -> Client:
    return Client(server.url, project_id, "reader")


def rbac(client: Client, net_id: str, target: str, action: str = "access_as_shared",
         **extra: Any) -> tuple[int, Any]:
    return client.post("/v2.0/rbac-policies", {"rbac_policy": {
        "object_type": "network", "object_id": net_id, "action": action,
        "target_tenant": target, **extra}})


def share(client: Client, net_id: str, target: str) -> dict[str, Any]:
    return h.created(rbac(client, net_id, target), "rbac_policy")


def project_of(client: Client) -> str:
    return client.session.headers["X-Project-Id"]


def ids(result: tuple[int, Any], key: str) -> list[str]:
    status, body = result
    assert status == 200, body
    return [i["id"] for i in body[key]]


# -- the collection -------------------------------------------------------------------

def test_create_show_list_as_upstream(member, other, project_id):
    net = h.network(member)
    pol = share(member, net["id"], project_of(other))
    assert set(pol) == {"id", "project_id", "tenant_id", "object_type", "object_id",
                        "action", "target_tenant"}
    assert pol["project_id"] == pol["tenant_id"] == project_id
    assert (pol["object_type"], pol["object_id"], pol["action"], pol["target_tenant"]) == (
        "network", net["id"], "access_as_shared", project_of(other))
    assert member.get(f"/v2.0/rbac-policies/{pol['id']}")[1]["rbac_policy"] == pol
    assert ids(member.get("/v2.0/rbac-policies"), "rbac_policies") == [pol["id"]]


def test_extension_is_listed(member):
    status, body = member.get("/v2.0/extensions/rbac-policies")
    assert status == 200
    assert body["extension"]["name"] == "RBAC Policies"


def test_target_project_cannot_see_or_touch_the_entry(member, other, third):
    net = h.network(member)
    pol = share(member, net["id"], project_of(other))
    assert other.get("/v2.0/rbac-policies")[1]["rbac_policies"] == []
    for client in (other, third):
        msg = h.error(client.get(f"/v2.0/rbac-policies/{pol['id']}"), 404, "RbacPolicyNotFound")
        assert msg == f"RBAC policy of type unknown with ID {pol['id']} not found"
        h.error(client.delete(f"/v2.0/rbac-policies/{pol['id']}"), 404, "RbacPolicyNotFound")
        h.error(client.put(f"/v2.0/rbac-policies/{pol['id']}",
                           {"rbac_policy": {"target_tenant": project_of(third)}}), 404,
                "RbacPolicyNotFound")


def test_admin_sees_every_entry_and_owns_what_it_creates(admin, member):
    net = h.network(member)
    pol = share(admin, net["id"], uuid.uuid4().hex)
    assert pol["project_id"] != member.get(f"/v2.0/networks/{net['id']}")[1]["network"][
        "project_id"]
    assert pol["id"] in ids(admin.get(f"/v2.0/rbac-policies?object_id={net['id']}"),
                            "rbac_policies")
    # The network owner does not see an entry it does not own.
    assert pol["id"] not in ids(member.get("/v2.0/rbac-policies"), "rbac_policies")


def test_duplicate_is_409(member, other):
    net = h.network(member)
    share(member, net["id"], project_of(other))
    msg = h.error(rbac(member, net["id"], project_of(other)), 409, "DuplicateRbacPolicy")
    assert msg == "An RBAC policy already exists with those values."


def test_wildcard_is_admin_only(admin, member):
    net = h.network(member)
    msg = h.error(rbac(member, net["id"], "*"), 403, "PolicyNotAuthorized")
    assert "create_rbac_policy:target_tenant" in msg
    pol = share(admin, net["id"], "*")
    assert member.get(f"/v2.0/networks/{net['id']}")[1]["network"]["shared"] is True
    own = share(member, net["id"], uuid.uuid4().hex)
    msg = h.error(member.put(f"/v2.0/rbac-policies/{own['id']}",
                             {"rbac_policy": {"target_tenant": "*"}}), 403, "PolicyNotAuthorized")
    assert msg == ("(rule:update_rbac_policy and rule:update_rbac_policy:target_tenant) "
                   "is disallowed by policy")
    assert pol["target_tenant"] == "*"


@pytest.mark.parametrize("target", ["foo", "abc123", "", None])
def test_target_must_be_a_project_id_or_wildcard(member, target):
    net = h.network(member)
    msg = h.error(rbac(member, net["id"], target), 400, "InvalidInput")
    assert msg == (f"Invalid input for operation: '{target}' is not a valid target project "
                   "ID; expected a UUID or '*'.")


def test_dashed_and_uppercase_project_ids_are_accepted(member):
    net = h.network(member)
    share(member, net["id"], str(uuid.uuid4()))
    share(member, net["id"], uuid.uuid4().hex.upper())


def test_unsupported_action_and_type(member):
    net = h.network(member)
    target = uuid.uuid4().hex
    msg = h.error(rbac(member, net["id"], target, "access_as_foo"), 400, "InvalidActionForType")
    # With external-net, networks take access_as_external too (upstream's order).
    assert msg == ("Invalid action 'access_as_foo' for object type 'network'. "
                   "Valid actions: ('access_as_shared', 'access_as_external')")
    msg = h.error(rbac(member, net["id"], target, object_type="router"), 400, "InvalidInput")
    assert msg == "Invalid input for operation: 'router' is not a valid RBAC object type."
    msg = h.error(rbac(member, "xyz", target), 400, "HTTPBadRequest")
    assert msg == "Invalid input for object_id. Reason: 'xyz' is not a valid UUID."


def test_missing_attributes_and_read_only_ones(member):
    net = h.network(member)
    msg = h.error(member.post("/v2.0/rbac-policies", {"rbac_policy": {
        "object_type": "network", "object_id": net["id"], "action": "access_as_shared"}}),
        400, "HTTPBadRequest")
    assert msg == "Failed to parse request. Required attribute 'target_tenant' not specified"
    # upstream 29 has no target_project attribute yet
    msg = h.error(rbac(member, net["id"], uuid.uuid4().hex, target_project="x"), 400,
                  "HTTPBadRequest")
    assert msg == "Unrecognized attribute(s) 'target_project'"
    pol = share(member, net["id"], uuid.uuid4().hex)
    msg = h.error(member.put(f"/v2.0/rbac-policies/{pol['id']}",
                             {"rbac_policy": {"action": "access_as_external"}}), 400,
                  "HTTPBadRequest")
    assert msg == "Cannot update read-only attribute action"


def test_object_must_exist_and_be_owned(member, other, third):
    missing = str(uuid.uuid4())
    msg = h.error(rbac(member, missing, uuid.uuid4().hex), 400, "InvalidInput")
    assert f"Network {missing} could not be found" in msg
    net = h.network(member)
    share(member, net["id"], project_of(other))
    # the target project sees the network, but only admins share what they do not own
    msg = h.error(rbac(other, net["id"], project_of(third)), 400, "InvalidInput")
    assert "Only admins can manipulate policies on networks they do not own" in msg
    # a project that cannot see it learns nothing more than "not found"
    msg = h.error(rbac(third, net["id"], project_of(third)), 400, "InvalidInput")
    assert f"Network {net['id']} could not be found" in msg


def test_member_cannot_create_for_another_project(member, other):
    net = h.network(member)
    msg = h.error(rbac(member, net["id"], uuid.uuid4().hex, project_id=project_of(other)), 400,
                  "HTTPBadRequest")
    assert msg.startswith("Specifying 'project_id' other than the authenticated project")


def test_reader_reads_but_does_not_write(member, reader):
    net = h.network(member)
    pol = share(member, net["id"], uuid.uuid4().hex)
    assert ids(reader.get("/v2.0/rbac-policies"), "rbac_policies") == [pol["id"]]
    h.error(rbac(reader, net["id"], uuid.uuid4().hex), 403, "PolicyNotAuthorized")
    h.error(reader.delete(f"/v2.0/rbac-policies/{pol['id']}"), 403, "PolicyNotAuthorized")


def test_update_target_and_duplicate_on_update(member):
    net = h.network(member)
    one, two = uuid.uuid4().hex, uuid.uuid4().hex
    pol = share(member, net["id"], one)
    share(member, net["id"], two)
    status, body = member.put(f"/v2.0/rbac-policies/{pol['id']}",
                              {"rbac_policy": {"target_tenant": uuid.uuid4().hex}})
    assert status == 200 and body["rbac_policy"]["id"] == pol["id"]
    h.error(member.put(f"/v2.0/rbac-policies/{pol['id']}", {"rbac_policy": {"target_tenant": two}}),
            409, "DuplicateRbacPolicy")
    h.error(member.put(f"/v2.0/rbac-policies/{pol['id']}", {"rbac_policy": {"target_tenant": "x"}}),
            400, "InvalidInput")


def test_filters(admin, member):
    net, net2 = h.network(member), h.network(member)
    a, b = uuid.uuid4().hex, uuid.uuid4().hex
    p1 = share(member, net["id"], a)
    p2 = share(member, net["id"], b)
    p3 = share(member, net2["id"], a)
    base = "/v2.0/rbac-policies?"
    assert sorted(ids(member.get(base + f"target_tenant={a}"), "rbac_policies")) == sorted(
        [p1["id"], p3["id"]])
    assert sorted(ids(member.get(base + f"object_id={net['id']}"), "rbac_policies")) == sorted(
        [p1["id"], p2["id"]])
    assert ids(member.get(base + f"object_id={net['id']}&target_tenant={b}"),
               "rbac_policies") == [p2["id"]]
    assert len(ids(member.get(base + "object_type=network&action=access_as_shared"),
                   "rbac_policies")) == 3
    assert ids(member.get(base + "action=access_as_external"), "rbac_policies") == []
    assert ids(member.get(base + "object_type=qos_policy"), "rbac_policies") == []
    assert ids(member.get(base + f"id={p3['id']}"), "rbac_policies") == [p3["id"]]
    status, body = member.get(base + f"object_id={net['id']}&fields=target_tenant")
    assert status == 200
    assert sorted(i["target_tenant"] for i in body["rbac_policies"]) == sorted([a, b])
    assert all(set(i) == {"target_tenant"} for i in body["rbac_policies"])
    project = project_of(member)
    assert len(ids(admin.get(base + f"project_id={project}"), "rbac_policies")) == 3


def test_deleting_the_network_deletes_its_entries(admin, member):
    net = h.network(member)
    pol = share(member, net["id"], uuid.uuid4().hex)
    assert member.delete(f"/v2.0/networks/{net['id']}")[0] == 204
    h.error(admin.get(f"/v2.0/rbac-policies/{pol['id']}"), 404, "RbacPolicyNotFound")


def test_entries_bump_the_network_revision(member):
    net = h.network(member)
    pol = share(member, net["id"], uuid.uuid4().hex)
    after_share = member.get(f"/v2.0/networks/{net['id']}")[1]["network"]["revision_number"]
    assert after_share > net["revision_number"]
    assert member.delete(f"/v2.0/rbac-policies/{pol['id']}")[0] == 204
    after = member.get(f"/v2.0/networks/{net['id']}")[1]["network"]["revision_number"]
    assert after > after_share
