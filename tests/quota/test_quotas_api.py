"""Quotas over the API: limits, defaults, details, enforcement, policy."""
from __future__ import annotations

import uuid
from typing import Any, Iterator

import pytest

from tests.conftest import Client, Server


@pytest.fixture(scope="module")
def quota_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("quota"),
                 extra="[quotas]\nquota_network = 3\nquota_port = 4\n").start()
    yield srv
    srv.stop()


def _clients(srv: Server) -> tuple[Client, Client, str]:
    project = uuid.uuid4().hex
    return Client(srv.url), Client(srv.url, project, "member"), project


def test_defaults_come_from_the_quotas_section(quota_server: Server) -> None:
    admin, _, project = _clients(quota_server)
    status, body = admin.get(f"/v2.0/quotas/{project}/default")
    assert status == 200
    assert body["quota"] == {"network": 3, "subnet": 100, "port": 4, "subnetpool": -1,
                             "rbac_policy": 10, "security_group": 10,
                             "security_group_rule": 100}


def test_over_quota_is_409_naming_the_resource_and_creates_nothing(quota_server: Server) -> None:
    _, member, project = _clients(quota_server)
    for i in range(3):
        assert member.post("/v2.0/networks", {"network": {"name": f"q{i}"}})[0] == 201
    status, body = member.post("/v2.0/networks", {"network": {"name": "q3"}})
    assert status == 409
    assert body["NeutronError"]["type"] == "OverQuota"
    assert "network" in body["NeutronError"]["message"]
    assert len(member.get("/v2.0/networks")[1]["networks"]) == 3


def test_bulk_create_over_quota_creates_none(quota_server: Server) -> None:
    _, member, _ = _clients(quota_server)
    status, _ = member.post("/v2.0/networks", {"networks": [{"name": f"b{i}"} for i in range(4)]})
    assert status == 409
    assert member.get("/v2.0/networks")[1]["networks"] == []


def test_admin_raises_a_limit_and_details_show_usage(quota_server: Server) -> None:
    admin, member, project = _clients(quota_server)
    status, body = admin.put(f"/v2.0/quotas/{project}", {"quota": {"network": 5}})
    assert status == 200 and body["quota"]["network"] == 5
    member.post("/v2.0/networks", {"network": {"name": "d"}})
    status, body = member.get(f"/v2.0/quotas/{project}/details")
    assert status == 200
    assert body["quota"]["network"] == {"limit": 5, "used": 1, "reserved": 0}
    listed = admin.get("/v2.0/quotas")[1]["quotas"]
    assert any(q["project_id"] == project and q["network"] == 5 for q in listed)


def test_unlimited_and_reset_to_default(quota_server: Server) -> None:
    admin, member, project = _clients(quota_server)
    assert admin.put(f"/v2.0/quotas/{project}", {"quota": {"network": -1}})[0] == 200
    for i in range(5):
        assert member.post("/v2.0/networks", {"network": {"name": f"u{i}"}})[0] == 201
    assert admin.delete(f"/v2.0/quotas/{project}")[0] == 204
    assert admin.get(f"/v2.0/quotas/{project}")[1]["quota"]["network"] == 3


def _bad_request(result: tuple[int, Any], kind: str, message: str) -> None:
    status, body = result
    assert status == 400, body
    assert body["NeutronError"] == {"type": kind, "message": message, "detail": ""}


def test_limit_below_usage_is_400_unless_forced(quota_server: Server) -> None:
    """Upstream's test_quotas_force_false and
    test_set_network_quota_lower_than_networks_amount: the usage is checked
    unless ``force`` is true, whatever ``check_limit`` says."""
    admin, member, project = _clients(quota_server)
    member.post("/v2.0/networks", {"network": {"name": "x"}})
    member.post("/v2.0/networks", {"network": {"name": "y"}})
    message = "Quota limit 1 for network must be greater than or equal to already used 2"
    for extra in ({}, {"check_limit": True}, {"check_limit": False}, {"force": False},
                  {"force": "true"}):
        _bad_request(admin.put(f"/v2.0/quotas/{project}", {"quota": {"network": 1, **extra}}),
                     "HTTPBadRequest", message)
    assert admin.get(f"/v2.0/quotas/{project}")[1]["quota"]["network"] == 3
    assert admin.put(f"/v2.0/quotas/{project}", {"quota": {"network": 1, "force": True}})[0] == 200
    # unlimited needs no check; a limit at the usage passes it
    assert admin.put(f"/v2.0/quotas/{project}", {"quota": {"network": -1}})[0] == 200
    assert admin.put(f"/v2.0/quotas/{project}", {"quota": {"network": 2}})[0] == 200


@pytest.mark.parametrize("quota, kind, message", [
    ({"network": -2}, "HTTPBadRequest",
     "Invalid input for network. Reason: '-2' is too small - must be at least '-1'."),
    ({"network": 2 ** 31}, "HTTPBadRequest",
     "Invalid input for network. Reason: '2147483648' is too large - must be no larger than "
     "'2147483647'."),
    ({"network": "many"}, "InvalidInput", "Invalid input for operation: 'many' is not an integer."),
    ({"network": None}, "InvalidInput", "Invalid input for operation: 'None' is not an integer."),
    ({"bogus": 1, "abc": 2}, "HTTPBadRequest", "Unrecognized attribute(s) 'abc, bogus'"),
    ({"network": -2, "bogus": 1}, "HTTPBadRequest", "Unrecognized attribute(s) 'bogus'"),
    ({"network": 5, "tenant_id": "x"}, "HTTPBadRequest",
     "Unrecognized attribute(s) 'project_id, tenant_id'"),
    # the resources are judged in the registry's order, not the body's
    ({"subnet": "abc", "network": -2}, "HTTPBadRequest",
     "Invalid input for network. Reason: '-2' is too small - must be at least '-1'."),
])
def test_bad_quota_values_are_400_as_upstream_and_change_nothing(
        quota_server: Server, quota: dict[str, Any], kind: str, message: str) -> None:
    admin, member, project = _clients(quota_server)
    _bad_request(admin.put(f"/v2.0/quotas/{project}", {"quota": quota}), kind, message)
    assert admin.get(f"/v2.0/quotas/{project}")[1]["quota"]["network"] == 3
    # a member is refused by policy before its body is looked at
    status, body = member.put(f"/v2.0/quotas/{project}", {"quota": quota})
    assert status == 403 and body["NeutronError"]["type"] == "PolicyNotAuthorized"


def test_quota_values_are_converted_as_upstream(quota_server: Server) -> None:
    admin, _, project = _clients(quota_server)
    for given, stored in (("7", 7), (1.5, 1), (True, 1), (2 ** 31 - 1, 2 ** 31 - 1)):
        status, body = admin.put(f"/v2.0/quotas/{project}", {"quota": {"network": given}})
        assert status == 200 and body["quota"]["network"] == stored, body


def test_members_read_their_own_quota_only_and_cannot_change_it(quota_server: Server) -> None:
    _, member, project = _clients(quota_server)
    assert member.get(f"/v2.0/quotas/{project}")[0] == 200
    assert member.get(f"/v2.0/quotas/{project}/details")[0] == 200
    status, body = member.get(f"/v2.0/quotas/{uuid.uuid4().hex}")
    assert status == 403 and body["NeutronError"]["message"] == "rule:get_quota is disallowed by policy"
    assert member.put(f"/v2.0/quotas/{project}", {"quota": {"network": 50}})[0] == 403
    assert member.get("/v2.0/quotas")[0] == 403


def test_a_project_manager_may_read_its_quota(quota_server: Server) -> None:
    project = uuid.uuid4().hex
    manager = Client(quota_server.url, project, "manager")
    assert manager.get(f"/v2.0/quotas/{project}")[0] == 200


def test_rbac_policies_count_against_their_quota(quota_server: Server) -> None:
    admin, member, project = _clients(quota_server)
    assert admin.put(f"/v2.0/quotas/{project}", {"quota": {"rbac_policy": 1}})[0] == 200
    net = member.post("/v2.0/networks", {"network": {"name": "r"}})[1]["network"]["id"]

    def share(target: str) -> tuple[int, dict]:
        return member.post("/v2.0/rbac-policies", {"rbac_policy": {
            "object_type": "network", "object_id": net, "action": "access_as_shared",
            "target_tenant": target}})
    assert share(uuid.uuid4().hex)[0] == 201
    status, body = share(uuid.uuid4().hex)
    assert status == 409 and body["NeutronError"]["type"] == "OverQuota"
