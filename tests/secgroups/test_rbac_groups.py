"""``rbac-security-groups``, ``rbac-address-group`` and
``security-groups-shared-filtering``: groups shared by RBAC entries."""
from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.api._helpers import created, error, unique
from tests.conftest import Client, Server
from tests.secgroups.conftest import group, network_with_subnet, rule


def share(owner: Client, object_type: str, object_id: str, target: str) -> dict[str, Any]:
    return created(owner.post("/v2.0/rbac-policies", {"rbac_policy": {
        "object_type": object_type, "object_id": object_id,
        "action": "access_as_shared", "target_tenant": target}}), "rbac_policy")


def _other(server: Server) -> tuple[str, Client]:
    project = uuid.uuid4().hex
    return project, Client(server.url, project, "member,reader")


def test_shared_group_is_visible_and_shared_for_its_target_only(
        server: Server, member: Client) -> None:
    sg = group(member)
    assert sg["shared"] is False
    target, user = _other(server)
    _, stranger = _other(server)
    error(user.get(f"/v2.0/security-groups/{sg['id']}"), 404, "SecurityGroupNotFound")
    share(member, "security_group", sg["id"], target)
    seen = user.get(f"/v2.0/security-groups/{sg['id']}")[1]["security_group"]
    assert seen["shared"] is True and len(seen["security_group_rules"]) == 2
    # The owner sees it unshared: no entry names the owner or ``*``.
    assert member.get(f"/v2.0/security-groups/{sg['id']}")[1]["security_group"]["shared"] \
        is False
    error(stranger.get(f"/v2.0/security-groups/{sg['id']}"), 404, "SecurityGroupNotFound")
    listed = user.get("/v2.0/security-groups?shared=true")[1]["security_groups"]
    assert [g["id"] for g in listed] == [sg["id"]]
    unshared = user.get("/v2.0/security-groups?shared=false")[1]["security_groups"]
    assert [g["name"] for g in unshared] == ["default"]
    mine = member.get("/v2.0/security-groups?shared=false")[1]["security_groups"]
    assert sg["id"] in {g["id"] for g in mine}
    # Its rules stay the owner's business (``rule:sg_owner``).
    assert user.get(f"/v2.0/security-group-rules?security_group_id={sg['id']}")[1] == {
        "security_group_rules": []}
    error(user.post("/v2.0/security-group-rules", {"security_group_rule": {
        "security_group_id": sg["id"], "direction": "ingress"}}), 403, "PolicyNotAuthorized")
    error(user.get("/v2.0/security-groups?shared=maybe"), 400, "InvalidInput")


def test_sharing_with_all_projects(server: Server, member: Client, admin: Client) -> None:
    sg = group(member)
    entry = created(admin.post("/v2.0/rbac-policies", {"rbac_policy": {
            "object_type": "security_group", "object_id": sg["id"],
            "action": "access_as_shared", "target_tenant": "*"}}), "rbac_policy")
    assert entry["object_type"] == "security_group"
    _, user = _other(server)
    assert user.get(f"/v2.0/security-groups/{sg['id']}")[1]["security_group"]["shared"]
    assert member.get(f"/v2.0/security-groups/{sg['id']}")[1]["security_group"]["shared"]
    assert admin.delete(f"/v2.0/rbac-policies/{entry['id']}")[0] == 204
    error(user.get(f"/v2.0/security-groups/{sg['id']}"), 404, "SecurityGroupNotFound")


def test_project_ports_may_use_a_shared_group_and_keep_it_shared(
        server: Server, member: Client) -> None:
    sg = group(member)
    target, user = _other(server)
    net = network_with_subnet(user)
    body = {"port": {"network_id": net["id"], "security_groups": [sg["id"]]}}
    error(user.post("/v2.0/ports", body), 404, "SecurityGroupNotFound")
    entry = share(member, "security_group", sg["id"], target)
    port = created(user.post("/v2.0/ports", body), "port")
    assert port["security_groups"] == [sg["id"]]
    msg = error(member.delete(f"/v2.0/rbac-policies/{entry['id']}"), 409, "RbacPolicyInUse")
    assert sg["id"] in msg
    error(member.put(f"/v2.0/rbac-policies/{entry['id']}", {"rbac_policy": {
        "target_tenant": uuid.uuid4().hex}}), 409, "RbacPolicyInUse")
    error(member.delete(f"/v2.0/security-groups/{sg['id']}"), 409, "SecurityGroupInUse")
    status, _ = user.put(f"/v2.0/ports/{port['id']}", {"port": {"security_groups": []}})
    assert status == 200
    assert member.delete(f"/v2.0/rbac-policies/{entry['id']}")[0] == 204
    error(user.put(f"/v2.0/ports/{port['id']}", {"port": {"security_groups": [sg["id"]]}}),
          404, "SecurityGroupNotFound")


def test_only_owner_or_admin_shares_a_group(server: Server, member: Client) -> None:
    sg = group(member)
    _, user = _other(server)
    msg = error(user.post("/v2.0/rbac-policies", {"rbac_policy": {
        "object_type": "security_group", "object_id": sg["id"],
        "action": "access_as_shared", "target_tenant": uuid.uuid4().hex}}), 400,
        "InvalidInput")
    assert "they do not own" in msg
    error(member.post("/v2.0/rbac-policies", {"rbac_policy": {
        "object_type": "security_group", "object_id": sg["id"],
        "action": "access_as_external", "target_tenant": uuid.uuid4().hex}}), 400,
        "InvalidActionForType")


def test_rules_may_name_a_shared_group_as_remote(server: Server, member: Client) -> None:
    sg = group(member)
    target, user = _other(server)
    own = group(user)
    error(user.post("/v2.0/security-group-rules", {"security_group_rule": {
        "security_group_id": own["id"], "direction": "ingress",
        "remote_group_id": sg["id"]}}), 404, "SecurityGroupNotFound")
    share(member, "security_group", sg["id"], target)
    made = rule(user, own["id"], remote_group_id=sg["id"])
    assert made["remote_group_id"] == sg["id"]


def test_shared_address_group_is_usable_as_remote_and_pinned(
        server: Server, member: Client) -> None:
    ag = created(member.post("/v2.0/address-groups", {"address_group": {
        "name": unique("ag"), "addresses": ["10.1.0.0/24"]}}), "address_group")
    assert "shared" not in ag
    target, user = _other(server)
    error(user.get(f"/v2.0/address-groups/{ag['id']}"), 404, "AddressGroupNotFound")
    own = group(user)
    body = {"security_group_rule": {"security_group_id": own["id"], "direction": "ingress",
                                    "remote_address_group_id": ag["id"]}}
    error(user.post("/v2.0/security-group-rules", body), 404, "AddressGroupNotFound")
    entry = share(member, "address_group", ag["id"], target)
    seen = user.get(f"/v2.0/address-groups/{ag['id']}")[1]["address_group"]
    assert seen["addresses"] == ["10.1.0.0/24"] and "shared" not in seen
    assert [a["id"] for a in user.get("/v2.0/address-groups")[1]["address_groups"]] == [ag["id"]]
    made = created(user.post("/v2.0/security-group-rules", body), "security_group_rule")
    error(member.delete(f"/v2.0/rbac-policies/{entry['id']}"), 409, "RbacPolicyInUse")
    assert user.delete(f"/v2.0/security-group-rules/{made['id']}")[0] == 204
    assert member.delete(f"/v2.0/rbac-policies/{entry['id']}")[0] == 204
    error(user.get(f"/v2.0/address-groups/{ag['id']}"), 404, "AddressGroupNotFound")


def test_rbac_entries_of_groups_are_listed_with_their_type(member: Client) -> None:
    sg = group(member)
    entry = share(member, "security_group", sg["id"], uuid.uuid4().hex)
    listed = member.get("/v2.0/rbac-policies?object_type=security_group")[1]["rbac_policies"]
    assert [e["id"] for e in listed] == [entry["id"]]
    assert member.get(f"/v2.0/rbac-policies/{entry['id']}")[1]["rbac_policy"][
        "object_type"] == "security_group"


def test_updating_a_port_makes_its_projects_default_group(admin: Client) -> None:
    project = uuid.uuid4().hex
    net = created(admin.post("/v2.0/networks", {"network": {
        "name": unique("net"), "project_id": project}}), "network")
    port = created(admin.post("/v2.0/ports", {"port": {
        "network_id": net["id"], "project_id": project, "security_groups": []}}), "port")

    def groups_used() -> int:
        quota = admin.get(f"/v2.0/quotas/{project}/details")[1]["quota"]
        return int(quota["security_group"]["used"])
    default = admin.get(f"/v2.0/security-groups?project_id={project}&name=default")[1]
    assert admin.delete(f"/v2.0/security-groups/{default['security_groups'][0]['id']}")[0] == 204
    assert groups_used() == 0
    assert admin.put(f"/v2.0/ports/{port['id']}", {"port": {"name": "x"}})[0] == 200
    assert groups_used() == 1


@pytest.mark.clients
def test_sdk_rbac_policy_for_a_security_group(server: Server, member: Client) -> None:
    import openstack
    sg = group(member)
    target = uuid.uuid4().hex
    conn = openstack.connection.Connection(auth_type="none", endpoint=server.url,
                                           network_endpoint_override=server.url)
    try:
        made = conn.network.create_rbac_policy(
            object_type="security_group", object_id=sg["id"], action="access_as_shared",
            target_project_id=target)
        assert (made.object_type, made.object_id, made.target_project_id) == \
            ("security_group", sg["id"], target)
        conn.network.delete_rbac_policy(made.id)
    finally:
        conn.close()


def test_target_project_changing_a_shared_object_is_answered_as_upstream(
        server: Server, member: Client, admin: Client) -> None:
    """Upstream checks an update its policy refuses against the object read
    with only what policy needs and what has no default: the target of an
    address group or QoS policy entry then fails ``get_*`` too (their
    ``shared`` is not read) and is told the resource does not exist (404
    ``HTTPNotFound``, tempest's
    test_regular_client_blocked_from_updating_shared_address_group); a
    shared security group keeps its ``shared`` and the answer is 403.
    Deleting reads everything: 403."""
    target, user = _other(server)
    ag = created(member.post("/v2.0/address-groups", {"address_group": {
        "name": unique("ag"), "addresses": ["10.2.0.0/24"]}}), "address_group")
    share(member, "address_group", ag["id"], target)
    url = f"/v2.0/address-groups/{ag['id']}"
    assert user.get(url)[0] == 200
    msg = error(user.put(url, {"address_group": {"name": "new"}}), 404, "HTTPNotFound")
    assert msg == "The resource could not be found."
    error(user.delete(url), 403, "PolicyNotAuthorized")
    error(user.put(f"{url}/add_addresses", {"addresses": ["10.3.0.0/24"]}), 403,
          "PolicyNotAuthorized")
    qos = created(admin.post("/v2.0/qos/policies", {"policy": {
        "name": unique("q"), "project_id": member.session.headers["X-Project-Id"]}}), "policy")
    created(admin.post("/v2.0/rbac-policies", {"rbac_policy": {
        "object_type": "qos_policy", "object_id": qos["id"],
        "action": "access_as_shared", "target_tenant": target}}), "rbac_policy")
    error(user.put(f"/v2.0/qos/policies/{qos['id']}", {"policy": {"name": "new"}}), 404,
          "HTTPNotFound")
    sg = group(member)
    share(member, "security_group", sg["id"], target)
    error(user.put(f"/v2.0/security-groups/{sg['id']}", {"security_group": {"name": "new"}}),
          403, "PolicyNotAuthorized")
    # the owner itself is unaffected
    assert member.put(url, {"address_group": {"name": "mine"}})[0] == 200
