"""``logging``: /v2.0/log/logs and /v2.0/log/loggable-resources as upstream's
API and default policy answer them (admin-only; a member sees nothing)."""
from __future__ import annotations

import uuid
from typing import Any

from tests.conftest import Client

LOGS = "/v2.0/log/logs"


def _group(client: Client) -> str:
    status, body = client.post("/v2.0/security-groups",
                               {"security_group": {"name": "logged"}})
    assert status == 201, body
    return str(body["security_group"]["id"])


def _port(client: Client, **attrs: Any) -> dict[str, Any]:
    status, net = client.post("/v2.0/networks", {"network": {"name": "n"}})
    assert status == 201, net
    status, body = client.post("/v2.0/ports", {"port": {
        "network_id": net["network"]["id"], **attrs}})
    assert status == 201, body
    return dict(body["port"])


def _log(client: Client, **attrs: Any) -> tuple[int, Any]:
    return client.post(LOGS, {"log": {"resource_type": "security_group", **attrs}})


def _error(body: Any) -> tuple[str, str]:
    return body["NeutronError"]["type"], body["NeutronError"]["message"]


def test_a_log_is_created_shown_listed_updated_and_deleted(admin: Client) -> None:
    sg = _group(admin)
    # as tempest sends it: the unused id as null, event and enabled given
    status, body = _log(admin, name="l1", description="d", resource_id=sg, target_id=None,
                        event="ALL", enabled=True)
    assert status == 201, body
    log = body["log"]
    assert {k: log[k] for k in ("name", "description", "resource_type", "resource_id",
                                "target_id", "event", "enabled", "revision_number")} == {
        "name": "l1", "description": "d", "resource_type": "security_group",
        "resource_id": sg, "target_id": None, "event": "ALL", "enabled": True,
        "revision_number": 0}
    assert log["project_id"] == log["tenant_id"] and "tags" not in log
    assert admin.get(f"{LOGS}/{log['id']}")[1]["log"] == log
    assert log["id"] in [x["id"] for x in admin.get(LOGS)[1]["logs"]]
    status, body = admin.put(f"{LOGS}/{log['id']}",
                             {"log": {"enabled": False, "description": "dd"}})
    assert status == 200, body
    assert (body["log"]["enabled"], body["log"]["description"],
            body["log"]["revision_number"]) == (False, "dd", 1)
    assert admin.delete(f"{LOGS}/{log['id']}")[0] == 204
    status, body = admin.get(f"{LOGS}/{log['id']}")
    assert status == 404 and _error(body) == (
        "LogResourceNotFound", f"Log resource {log['id']} could not be found.")


def test_only_name_description_and_enabled_change(admin: Client) -> None:
    status, body = _log(admin)
    assert status == 201, body
    status, body = admin.put(f"{LOGS}/{body['log']['id']}", {"log": {"event": "DROP"}})
    assert status == 400 and _error(body) == (
        "HTTPBadRequest", "Cannot update read-only attribute event")


def test_loggable_resources_list_security_groups_to_admins_only(
        admin: Client, member: Client) -> None:
    assert admin.get("/v2.0/log/loggable-resources") == (
        200, {"loggable_resources": [{"type": "security_group"}]})
    assert member.get("/v2.0/log/loggable-resources") == (200, {"loggable_resources": []})


def test_an_unknown_resource_type_is_refused(admin: Client) -> None:
    status, body = _log(admin, resource_type="firewall_group_x")
    assert status == 400 and _error(body) == (
        "InvalidLogResourceType", "Invalid log resource_type: firewall_group_x.")


def test_a_missing_group_or_port_is_not_found(admin: Client) -> None:
    missing = str(uuid.uuid4())
    status, body = _log(admin, resource_id=missing)
    assert status == 404 and _error(body) == (
        "ResourceNotFound", f"Resource {missing} could not be found.")
    status, body = _log(admin, target_id=missing)
    assert status == 404 and _error(body) == (
        "TargetResourceNotFound", f"Target resource {missing} could not be found.")


def test_an_unknown_event_and_a_missing_type_are_bad_requests(admin: Client) -> None:
    assert _log(admin, event="FOO")[0] == 400
    status, body = admin.post(LOGS, {"log": {}})
    assert status == 400, body


def test_a_port_outside_the_group_is_an_invalid_constraint(admin: Client) -> None:
    sg = _group(admin)
    port = _port(admin)  # in the project's default group only
    status, body = _log(admin, resource_id=sg, target_id=port["id"])
    assert status == 400 and _error(body) == (
        "InvalidResourceConstraint",
        f"Invalid resource constraint between resource (security_group {sg}) and "
        f"target resource (port {port['id']}).")
    status, body = _log(admin, resource_id=sg)
    assert status == 201, body


def test_an_unbound_port_and_a_member_port_can_be_logged(admin: Client) -> None:
    sg = _group(admin)
    port = _port(admin, security_groups=[sg])
    status, body = _log(admin, resource_id=sg, target_id=port["id"], event="DROP")
    assert status == 201 and body["log"]["event"] == "DROP", body


def test_a_port_bound_where_no_driver_logs_is_a_conflict(admin: Client) -> None:
    port = _port(admin, **{"binding:vnic_type": "direct"})
    status, body = _log(admin, target_id=port["id"])
    assert status == 409 and _error(body) == (
        "LoggingTypeNotSupported",
        f"Logging type security_group is not supported on port {port['id']}.")


def test_a_member_may_not_create_and_sees_no_log(admin: Client, member: Client) -> None:
    status, body = _log(member)
    assert status == 403 and _error(body) == (
        "PolicyNotAuthorized", "rule:create_log is disallowed by policy")
    status, body = _log(admin)
    log_id = body["log"]["id"]
    assert member.get(LOGS) == (200, {"logs": []})
    for status, body in (member.get(f"{LOGS}/{log_id}"),
                         member.put(f"{LOGS}/{log_id}", {"log": {"name": "x"}}),
                         member.delete(f"{LOGS}/{log_id}")):
        assert status == 404 and _error(body)[0] == "LogResourceNotFound", body
    assert admin.get(f"{LOGS}/{log_id}")[0] == 200


def test_a_missing_log_is_not_found_to_every_verb(admin: Client) -> None:
    missing = str(uuid.uuid4())
    for status, body in (admin.get(f"{LOGS}/{missing}"),
                         admin.put(f"{LOGS}/{missing}", {"log": {"enabled": False}}),
                         admin.delete(f"{LOGS}/{missing}")):
        assert status == 404 and _error(body) == (
            "LogResourceNotFound", f"Log resource {missing} could not be found."), body


def test_a_log_goes_with_its_security_group_and_its_port(admin: Client) -> None:
    sg = _group(admin)
    by_group = _log(admin, resource_id=sg)[1]["log"]["id"]
    port = _port(admin)
    by_port = _log(admin, target_id=port["id"])[1]["log"]["id"]
    assert admin.delete(f"/v2.0/security-groups/{sg}")[0] == 204
    assert admin.delete(f"/v2.0/ports/{port['id']}")[0] == 204
    assert admin.get(f"{LOGS}/{by_group}")[0] == 404
    assert admin.get(f"{LOGS}/{by_port}")[0] == 404


def test_the_logging_extension_is_listed(admin: Client) -> None:
    status, body = admin.get("/v2.0/extensions/logging")
    assert status == 200 and body["extension"]["alias"] == "logging", body
