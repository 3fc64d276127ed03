"""``/v2.0/qos/policies``: lifecycle, who may do what, defaults, sharing.

Every expectation was observed on upstream Neutron 29: creating and
changing policies takes the ``manager`` role in the project (a plain member
is refused), readers read their project's policies, other projects see
nothing unless the policy is shared with them.
"""
from __future__ import annotations

import uuid

from tests.conftest import Client, Server
from tests.qos._qos import error, manager, policy, reader, rule

ZERO = "00000000-0000-0000-0000-000000000000"


def test_policy_lifecycle_as_upstream_shows_it(server: Server) -> None:
    owner = manager(server.url)
    created = policy(owner, name="gold", description="fast lane")
    assert set(created) == {"id", "name", "description", "project_id", "tenant_id", "shared",
                            "is_default", "rules", "tags", "created_at", "updated_at",
                            "revision_number"}
    assert (created["shared"], created["is_default"], created["rules"],
            created["revision_number"]) == (False, False, [], 0)
    pid = created["id"]
    status, body = owner.put(f"/v2.0/qos/policies/{pid}", {"policy": {"name": "silver"}})
    assert status == 200, body
    assert body["policy"]["name"] == "silver" and body["policy"]["revision_number"] == 1
    assert owner.get(f"/v2.0/qos/policies/{pid}")[1]["policy"]["name"] == "silver"
    assert owner.delete(f"/v2.0/qos/policies/{pid}")[0] == 204
    error(owner.get(f"/v2.0/qos/policies/{pid}"), 404, "QosPolicyNotFound")


def test_rules_are_embedded_in_their_policy_and_bump_its_revision(server: Server) -> None:
    owner = manager(server.url)
    pid = policy(owner)["id"]
    bw = rule(owner, pid, "bandwidth_limit", max_kbps=1000, direction="ingress")
    dscp = rule(owner, pid, "dscp_marking", dscp_mark=16)
    shown = owner.get(f"/v2.0/qos/policies/{pid}")[1]["policy"]
    # By type, as upstream: bandwidth limits before DSCP marking.
    assert shown["rules"] == [
        {"id": bw["id"], "max_kbps": 1000, "max_burst_kbps": 0, "direction": "ingress",
         "qos_policy_id": pid, "type": "bandwidth_limit"},
        {"id": dscp["id"], "dscp_mark": 16, "qos_policy_id": pid, "type": "dscp_marking"}]
    assert shown["revision_number"] == 2
    owner.delete(f"/v2.0/qos/policies/{pid}/dscp_marking_rules/{dscp['id']}")
    shown = owner.get(f"/v2.0/qos/policies/{pid}")[1]["policy"]
    assert [r["type"] for r in shown["rules"]] == ["bandwidth_limit"]
    assert shown["revision_number"] == 3
    # Deleting the policy takes its rules along.
    assert owner.delete(f"/v2.0/qos/policies/{pid}")[0] == 204


def test_only_managers_and_admins_write_policies(server: Server, admin: Client) -> None:
    project = uuid.uuid4().hex
    member = Client(server.url, project, "member")
    message = error(member.post("/v2.0/qos/policies", {"policy": {"name": "x"}}), 403,
                    "PolicyNotAuthorized")
    assert message == "rule:create_policy is disallowed by policy"
    pid = policy(admin, project_id=project)["id"]
    error(member.put(f"/v2.0/qos/policies/{pid}", {"policy": {"name": "y"}}), 403,
          "PolicyNotAuthorized")
    error(member.delete(f"/v2.0/qos/policies/{pid}"), 403, "PolicyNotAuthorized")
    # Readers of the project read it.
    status, body = reader(server.url, project).get(f"/v2.0/qos/policies/{pid}")
    assert status == 200 and body["policy"]["id"] == pid
    listed = member.get("/v2.0/qos/policies")[1]["policies"]
    # Its own policy, and those other tests share with everyone.
    assert [p["id"] for p in listed if not p["shared"]] == [pid]


def test_another_projects_policy_does_not_exist(server: Server, admin: Client) -> None:
    pid = policy(manager(server.url))["id"]
    stranger = manager(server.url)
    message = error(stranger.get(f"/v2.0/qos/policies/{pid}"), 404, "QosPolicyNotFound")
    assert message == f"QoS policy {pid} could not be found."
    error(stranger.put(f"/v2.0/qos/policies/{pid}", {"policy": {"name": "x"}}), 404,
          "QosPolicyNotFound")
    error(stranger.delete(f"/v2.0/qos/policies/{pid}"), 404, "QosPolicyNotFound")
    assert pid not in [p["id"] for p in stranger.get("/v2.0/qos/policies")[1]["policies"]]
    assert admin.get(f"/v2.0/qos/policies/{pid}")[0] == 200
    error(admin.get(f"/v2.0/qos/policies/{ZERO}"), 404, "QosPolicyNotFound")


def test_one_default_policy_per_project(server: Server) -> None:
    project = uuid.uuid4().hex
    owner = manager(server.url, project)
    first = policy(owner, is_default=True)
    # Making it the default took a second write upstream.
    assert first["is_default"] is True and first["revision_number"] == 1
    second = policy(owner)
    message = error(owner.put(f"/v2.0/qos/policies/{second['id']}",
                              {"policy": {"is_default": True}}), 409,
                    "QoSPolicyDefaultAlreadyExists")
    assert message == f"A default QoS policy exists for project {project}."
    error(owner.post("/v2.0/qos/policies", {"policy": {"name": "d", "is_default": True}}),
          409, "QoSPolicyDefaultAlreadyExists")
    listed = owner.get("/v2.0/qos/policies?is_default=true")[1]["policies"]
    assert [p["id"] for p in listed] == [first["id"]]
    # Another project may have its own default.
    assert policy(manager(server.url), is_default=True)["is_default"] is True
    owner.put(f"/v2.0/qos/policies/{first['id']}", {"policy": {"is_default": False}})
    status, body = owner.put(f"/v2.0/qos/policies/{second['id']}",
                             {"policy": {"is_default": True}})
    assert status == 200 and body["policy"]["is_default"] is True


def test_bad_input_is_refused_and_changes_nothing(server: Server) -> None:
    owner = manager(server.url)
    pid = policy(owner, name="keep")["id"]
    message = error(owner.put(f"/v2.0/qos/policies/{pid}", {"policy": {"rules": []}}), 400,
                    "HTTPBadRequest")
    assert message == "Cannot update read-only attribute rules"
    error(owner.put(f"/v2.0/qos/policies/{pid}", {"policy": {"shared": "maybe"}}), 400,
          "InvalidInput")
    error(owner.post("/v2.0/qos/policies", {"policy": {"name": "x" * 256}}), 400,
          "HTTPBadRequest")
    error(owner.post("/v2.0/qos/policies", {"policy": {"color": "red"}}), 400,
          "HTTPBadRequest")
    shown = owner.get(f"/v2.0/qos/policies/{pid}")[1]["policy"]
    assert (shown["name"], shown["revision_number"]) == ("keep", 0)


def test_tags_on_policies(server: Server) -> None:
    owner = manager(server.url)
    pid = policy(owner, tags=["red"])["id"]
    assert owner.put(f"/v2.0/qos/policies/{pid}/tags/blue")[0] == 201
    assert owner.get(f"/v2.0/qos/policies/{pid}/tags")[1] == {"tags": ["blue", "red"]}
    listed = owner.get("/v2.0/qos/policies?tags=blue")[1]["policies"]
    assert [p["id"] for p in listed] == [pid]
    assert owner.delete(f"/v2.0/qos/policies/{pid}/tags")[0] == 204
    assert owner.get(f"/v2.0/qos/policies/{pid}")[1]["policy"]["tags"] == []


def test_sharing_a_policy_with_one_project(server: Server) -> None:
    owner_project, target, third = (uuid.uuid4().hex for _ in range(3))
    owner = manager(server.url, owner_project)
    pid = policy(owner, is_default=True)["id"]
    rule(owner, pid, "bandwidth_limit", max_kbps=500)
    status, body = owner.post("/v2.0/rbac-policies", {"rbac_policy": {
        "object_type": "qos_policy", "object_id": pid, "action": "access_as_shared",
        "target_tenant": target}})
    assert status == 201, body
    assert body["rbac_policy"]["object_type"] == "qos_policy"
    entry = body["rbac_policy"]["id"]
    seen = reader(server.url, target).get(f"/v2.0/qos/policies/{pid}")[1]["policy"]
    # Shared with the target; the default only for its own project, as upstream.
    assert seen["shared"] is True and seen["is_default"] is False
    assert [r["max_kbps"] for r in seen["rules"]] == [500]
    assert owner.get(f"/v2.0/qos/policies/{pid}")[1]["policy"]["shared"] is False
    # The target reads the policy but not its rules collection, nor changes it.
    target_manager = manager(server.url, target)
    assert target_manager.get(f"/v2.0/qos/policies/{pid}/bandwidth_limit_rules")[1] == {
        "bandwidth_limit_rules": []}
    error(target_manager.delete(f"/v2.0/qos/policies/{pid}"), 403, "PolicyNotAuthorized")
    error(target_manager.post(f"/v2.0/qos/policies/{pid}/bandwidth_limit_rules",
                              {"bandwidth_limit_rule": {"max_kbps": 1, "direction": "ingress"}}),
          403, "PolicyNotAuthorized")
    listed = target_manager.get("/v2.0/qos/policies?shared=true")[1]["policies"]
    assert pid in [p["id"] for p in listed]
    error(manager(server.url, third).get(f"/v2.0/qos/policies/{pid}"), 404, "QosPolicyNotFound")
    # Only access_as_shared exists for QoS policies.
    message = error(owner.post("/v2.0/rbac-policies", {"rbac_policy": {
        "object_type": "qos_policy", "object_id": pid, "action": "access_as_external",
        "target_tenant": target}}), 400, "InvalidActionForType")
    assert message.endswith("Valid actions: ('access_as_shared',)")
    # While the target's network uses it, the entry cannot go.
    status, net = Client(server.url, target, "member").post(
        "/v2.0/networks", {"network": {"name": "uses-shared", "qos_policy_id": pid}})
    assert status == 201, net
    error(owner.delete(f"/v2.0/rbac-policies/{entry}"), 409, "RbacPolicyInUse")
    assert Client(server.url, target, "member").delete(
        f"/v2.0/networks/{net['network']['id']}")[0] == 204
    assert owner.delete(f"/v2.0/rbac-policies/{entry}")[0] == 204
    error(reader(server.url, target).get(f"/v2.0/qos/policies/{pid}"), 404, "QosPolicyNotFound")


def test_shared_true_shares_with_everyone(server: Server) -> None:
    owner = manager(server.url)
    pid = policy(owner, shared=True)["id"]
    other = reader(server.url, uuid.uuid4().hex)
    assert other.get(f"/v2.0/qos/policies/{pid}")[1]["policy"]["shared"] is True
    status, body = owner.get(f"/v2.0/rbac-policies?object_id={pid}")
    assert [(e["object_type"], e["target_tenant"]) for e in body["rbac_policies"]] == [
        ("qos_policy", "*")]
    # Unsharing is refused while another project's port uses the policy.
    user = Client(server.url, uuid.uuid4().hex, "member")
    status, net = user.post("/v2.0/networks", {"network": {"name": "n"}})
    status, port = user.post("/v2.0/ports", {"port": {"network_id": net["network"]["id"],
                                                      "qos_policy_id": pid}})
    assert status == 201, port
    error(owner.put(f"/v2.0/qos/policies/{pid}", {"policy": {"shared": False}}), 409,
          "RbacPolicyInUse")
    user.delete(f"/v2.0/ports/{port['port']['id']}")
    status, body = owner.put(f"/v2.0/qos/policies/{pid}", {"policy": {"shared": False}})
    assert status == 200 and body["policy"]["shared"] is False
    error(other.get(f"/v2.0/qos/policies/{pid}"), 404, "QosPolicyNotFound")


def test_a_policy_in_use_cannot_be_deleted(server: Server) -> None:
    project = uuid.uuid4().hex
    owner = manager(server.url, project)
    pid = policy(owner)["id"]
    status, body = owner.post("/v2.0/networks", {"network": {"name": "n", "qos_policy_id": pid}})
    assert status == 201, body
    net = body["network"]["id"]
    message = error(owner.delete(f"/v2.0/qos/policies/{pid}"), 409, "QosPolicyInUse")
    assert message == f"QoS Policy {pid} is used by network {net}."
    owner.put(f"/v2.0/networks/{net}", {"network": {"qos_policy_id": None}})
    status, body = owner.post("/v2.0/ports", {"port": {"network_id": net, "qos_policy_id": pid}})
    assert status == 201, body
    port = body["port"]["id"]
    message = error(owner.delete(f"/v2.0/qos/policies/{pid}"), 409, "QosPolicyInUse")
    assert message == f"QoS Policy {pid} is used by port {port}."
    owner.delete(f"/v2.0/ports/{port}")
    assert owner.delete(f"/v2.0/qos/policies/{pid}")[0] == 204


def test_without_the_plugin_qos_policies_are_no_rbac_object_type(tmp_path) -> None:
    from tests.inprocess import CountingApp
    app = CountingApp(tmp_path)
    result = app.client.simulate_post("/v2.0/rbac-policies", json={"rbac_policy": {
        "object_type": "qos_policy", "object_id": ZERO, "action": "access_as_shared",
        "target_tenant": "*"}})
    assert result.status_code == 400, result.text
    assert result.json["NeutronError"]["type"] == "InvalidInput"
    assert app.client.simulate_get("/v2.0/qos/policies").status_code == 404
    aliases = [e["alias"] for e in app.client.simulate_get("/v2.0/extensions").json["extensions"]]
    assert not [a for a in aliases if a.startswith("qos")]


def test_unsharing_is_refused_while_the_owners_own_network_uses_the_policy(
        server: Server) -> None:
    """``test_policy_sharing_with_wildcard``: upstream counts the owner's
    own networks among those that keep the ``*`` entry."""
    owner = manager(server.url)
    pid = policy(owner, shared=True)["id"]
    status, net = owner.post("/v2.0/networks", {"network": {"name": "n", "qos_policy_id": pid}})
    assert status == 201, net
    message = error(owner.put(f"/v2.0/qos/policies/{pid}", {"policy": {"shared": False}}),
                    409, "RbacPolicyInUse")
    assert message == (f"RBAC policy on object {pid} cannot be removed because other objects "
                       f"depend on it.\nDetails: project_id=*")
    assert owner.get(f"/v2.0/qos/policies/{pid}")[1]["policy"]["shared"] is True
    assert owner.delete(f"/v2.0/networks/{net['network']['id']}")[0] == 204
    status, body = owner.put(f"/v2.0/qos/policies/{pid}", {"policy": {"shared": False}})
    assert status == 200 and body["policy"]["shared"] is False


def test_rules_of_another_projects_policy_are_refused_as_upstream(server: Server,
                                                                  admin: Client) -> None:
    """``test_rule_create_forbidden_for_regular_projects`` and
    ``test_rule_update_forbidden_for_regular_projects_foreign_policy``: a
    create is checked against the policy's owner whoever sees it (403); an
    update, delete or show first needs the policy seen (404)."""
    owner_project, caller_project = uuid.uuid4().hex, uuid.uuid4().hex
    status, body = admin.post("/v2.0/qos/policies", {"policy": {
        "name": "theirs", "project_id": owner_project}})
    assert status == 201, body
    pid = body["policy"]["id"]
    bw = rule(admin, pid, "bandwidth_limit", max_kbps=1, max_burst_kbps=1)
    rules = f"/v2.0/qos/policies/{pid}/bandwidth_limit_rules"
    body_ = {"bandwidth_limit_rule": {"max_kbps": 2, "max_burst_kbps": 4}}
    for roles in ("manager", "member", "reader"):
        caller = Client(server.url, caller_project, roles)
        message = error(caller.post(rules, body_), 403, "PolicyNotAuthorized")
        assert message == "rule:create_policy_bandwidth_limit_rule is disallowed by policy"
        error(caller.put(f"{rules}/{bw['id']}", body_), 404, "QosPolicyNotFound")
        error(caller.delete(f"{rules}/{bw['id']}"), 404, "QosPolicyNotFound")
        error(caller.get(f"{rules}/{bw['id']}"), 404, "QosPolicyNotFound")
    # A policy that does not exist: 404 to whoever could create on its own.
    missing = f"/v2.0/qos/policies/{ZERO}/bandwidth_limit_rules"
    error(manager(server.url, caller_project).post(missing, body_), 404, "QosPolicyNotFound")
    error(admin.post(missing, body_), 404, "QosPolicyNotFound")
    error(Client(server.url, caller_project, "member").post(missing, body_), 403,
          "PolicyNotAuthorized")
    # The body is read before the policy is looked for.
    error(manager(server.url, caller_project).post(missing, {"bandwidth_limit_rule": {
        "max_kbps": "x"}}), 400, "InvalidInput")
    assert admin.get(rules)[1]["bandwidth_limit_rules"] == [bw]
