"""``security-groups-default-rules``: the templates new groups' rules come from.

A server of its own: the tests change the templates every group gets.
"""
from __future__ import annotations

import uuid
from typing import Any, Iterator

import pytest

from tests.api._helpers import created, error
from tests.conftest import Client, Server
from tests.secgroups.conftest import default_group, group

URL = "/v2.0/default-security-group-rules"


@pytest.fixture(scope="module")
def tpl_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("sg-templates"),
                 extra="[quotas]\nquota_security_group_rule = 9\n").start()
    yield srv
    srv.stop()


@pytest.fixture
def admin_t(tpl_server: Server) -> Client:
    return Client(tpl_server.url, uuid.uuid4().hex, "admin,member,reader")


@pytest.fixture
def member_t(tpl_server: Server) -> Client:
    return Client(tpl_server.url, uuid.uuid4().hex, "member,reader")


def template(client: Client, **attrs: Any) -> dict[str, Any]:
    attrs.setdefault("direction", "ingress")
    attrs.setdefault("used_in_default_sg", True)
    attrs.setdefault("used_in_non_default_sg", True)
    return created(client.post(URL, {"default_security_group_rule": attrs}),
                   "default_security_group_rule")


def _shape(rules: list[dict[str, Any]]) -> set[tuple[Any, ...]]:
    return {(r["direction"], r["ethertype"], r["protocol"], r["port_range_min"],
             r["remote_group_id"]) for r in rules}


def test_seeded_with_upstreams_four_templates(member_t: Client) -> None:
    status, body = member_t.get(URL)
    assert status == 200
    rules = body["default_security_group_rules"]
    assert {(r["direction"], r["ethertype"], r["remote_group_id"], r["used_in_default_sg"],
             r["used_in_non_default_sg"], r["description"]) for r in rules} == {
        ("egress", "IPv4", None, True, True, "Legacy default SG rule for egress traffic"),
        ("egress", "IPv6", None, True, True, "Legacy default SG rule for egress traffic"),
        ("ingress", "IPv4", "PARENT", True, False, "Legacy default SG rule for ingress traffic"),
        ("ingress", "IPv6", "PARENT", True, False, "Legacy default SG rule for ingress traffic")}
    assert set(rules[0]) == {"id", "ethertype", "direction", "protocol", "port_range_min",
                             "port_range_max", "remote_ip_prefix", "remote_address_group_id",
                             "remote_group_id", "description", "used_in_default_sg",
                             "used_in_non_default_sg"}


def test_new_templates_shape_groups_created_afterwards_only(admin_t: Client,
                                                            member_t: Client) -> None:
    before = group(member_t)
    ssh = template(admin_t, protocol="tcp", port_range_min=22, port_range_max=22,
                   remote_group_id="PARENT", used_in_non_default_sg=False)
    web = template(admin_t, protocol="tcp", port_range_min=80, port_range_max=80,
                   used_in_default_sg=False)
    try:
        after = group(member_t)
        other = Client(member_t.url, uuid.uuid4().hex, "member,reader")
        default = default_group(other)
        assert ("ingress", "IPv4", "tcp", 80, None) in _shape(after["security_group_rules"])
        assert ("ingress", "IPv4", "tcp", 22, default["id"]) in _shape(
            default["security_group_rules"])
        assert not any(r["port_range_min"] == 80 for r in default["security_group_rules"])
        # The template's description is not the rule's.
        assert all(r["description"] in (None, "") for r in after["security_group_rules"])
        unchanged = member_t.get(f"/v2.0/security-groups/{before['id']}")[1]["security_group"]
        assert len(unchanged["security_group_rules"]) == 2
    finally:
        for t in (ssh, web):
            assert admin_t.delete(f"{URL}/{t['id']}")[0] == 204
    fresh = Client(member_t.url, uuid.uuid4().hex, "member,reader")
    assert len(group(fresh)["security_group_rules"]) == 2


def test_both_uses_must_be_said(admin_t: Client) -> None:
    msg = error(admin_t.post(URL, {"default_security_group_rule": {"direction": "ingress"}}),
                400, "HTTPBadRequest")
    assert msg == "Failed to parse request. Required attribute 'used_in_default_sg' not specified"
    msg = error(admin_t.post(URL, {"default_security_group_rule": {
        "direction": "ingress", "used_in_default_sg": True}}), 400, "HTTPBadRequest")
    assert "'used_in_non_default_sg'" in msg


def test_templates_are_checked_as_rules(admin_t: Client) -> None:
    def bad(**attrs: Any) -> tuple[int, Any]:
        return admin_t.post(URL, {"default_security_group_rule": {
            "direction": "ingress", "used_in_default_sg": True,
            "used_in_non_default_sg": True, **attrs}})
    error(bad(remote_group_id="PARENT", remote_ip_prefix="10.0.0.0/8"), 400,
          "SecurityGroupMultipleRemoteEntites")
    error(bad(ethertype="IPv6", remote_ip_prefix="10.0.0.0/8"), 400,
          "SecurityGroupRuleParameterConflict")
    error(bad(protocol="tcp", port_range_min=30, port_range_max=20), 400,
          "SecurityGroupInvalidPortRange")
    error(bad(protocol="nope"), 400, "SecurityGroupRuleInvalidProtocol")
    assert len(admin_t.get(URL)[1]["default_security_group_rules"]) == 4


def test_duplicate_of_a_template_is_409(admin_t: Client) -> None:
    egress = [r for r in admin_t.get(URL)[1]["default_security_group_rules"]
              if r["direction"] == "egress" and r["ethertype"] == "IPv4"][0]
    msg = error(admin_t.post(URL, {"default_security_group_rule": {
        "direction": "egress", "remote_ip_prefix": "0.0.0.0/0", "used_in_default_sg": False,
        "used_in_non_default_sg": True}}), 409, "DefaultSecurityGroupRuleExists")
    assert msg == ("Default Security group rule already exists. "
                   f"Rule id is {egress['id']}.")


def test_admins_write_readers_read(admin_t: Client, member_t: Client,
                                   tpl_server: Server) -> None:
    body = {"default_security_group_rule": {"direction": "ingress", "protocol": "udp",
                                            "used_in_default_sg": True,
                                            "used_in_non_default_sg": False}}
    msg = error(member_t.post(URL, body), 403, "PolicyNotAuthorized")
    assert msg == "rule:create_default_security_group_rule is disallowed by policy"
    made = created(admin_t.post(URL, body), "default_security_group_rule")
    reader = Client(tpl_server.url, uuid.uuid4().hex, "reader")
    assert reader.get(f"{URL}/{made['id']}")[1]["default_security_group_rule"] == made
    error(member_t.delete(f"{URL}/{made['id']}"), 403, "PolicyNotAuthorized")
    error(admin_t.put(f"{URL}/{made['id']}", {"default_security_group_rule": {
        "description": "x"}}), 400, "HTTPBadRequest")
    assert admin_t.delete(f"{URL}/{made['id']}")[0] == 204
    msg = error(admin_t.get(f"{URL}/{made['id']}"), 404, "DefaultSecurityGroupRuleNotFound")
    assert msg == f"Default Security Group rule {made['id']} does not exist"
    error(admin_t.delete(f"{URL}/{made['id']}"), 404, "DefaultSecurityGroupRuleNotFound")


def test_an_update_naming_nothing_is_not_implemented(admin_t: Client) -> None:
    """Nothing is writable, so only an empty update passes validation; it
    is answered as metering labels' are (upstream implements no update),
    not with a crash (found by the fuzzing suite)."""
    made = template(admin_t, protocol="udp", port_range_min=7, port_range_max=7)
    error(admin_t.put(f"{URL}/{made['id']}", {"default_security_group_rule": {}}), 501,
          "NotImplementedError")
    error(admin_t.put(f"{URL}/{uuid.uuid4()}", {"default_security_group_rule": {}}), 404,
          "DefaultSecurityGroupRuleNotFound")
    assert admin_t.get(f"{URL}/{made['id']}")[1]["default_security_group_rule"] == made
    assert admin_t.delete(f"{URL}/{made['id']}")[0] == 204


def test_filter_on_use(member_t: Client) -> None:
    rules = member_t.get(f"{URL}?used_in_non_default_sg=false")[1]
    assert {r["remote_group_id"] for r in rules["default_security_group_rules"]} == {"PARENT"}


def test_rule_quota_is_checked_when_a_group_gets_its_rules(admin_t: Client,
                                                           member_t: Client) -> None:
    # Quota 9: the default group's 4 rules and two groups' 2 each fit; the next do not.
    group(member_t)
    group(member_t)
    msg = error(member_t.post("/v2.0/security-groups", {"security_group": {"name": "over"}}),
                409, "OverQuota")
    assert "security_group_rule" in msg
    names = [g["name"] for g in member_t.get("/v2.0/security-groups")[1]["security_groups"]]
    assert "over" not in names


@pytest.mark.clients
def test_cli_default_security_group_rule_commands(tpl_server: Server,
                                                  tmp_path_factory: pytest.TempPathFactory
                                                  ) -> None:
    from tests.clients.conftest import CLI
    cli = CLI(tpl_server.url, tmp_path_factory.mktemp("sg-tpl-cli"))
    try:
        made = cli.json("default", "security", "group", "rule", "create", "--ingress",
                        "--protocol", "tcp", "--dst-port", "443", "--for-default-sg")
        assert (made["port_range_min"], made["used_in_default_sg"]) == (443, True)
        listed = cli.json("default", "security", "group", "rule", "list")
        assert made["id"] in {r["ID"] for r in listed}
        cli.run("default", "security", "group", "rule", "delete", made["id"])
        listed = cli.json("default", "security", "group", "rule", "list")
        assert made["id"] not in {r["ID"] for r in listed}
    finally:
        cli.close()
