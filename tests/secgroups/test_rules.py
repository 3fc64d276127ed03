"""Security group rules over the API: validation, normalisation, duplicates,
bulk creation, visibility."""
from __future__ import annotations

from typing import Any

import pytest

from tests.api._helpers import ZERO_UUID, error
from tests.conftest import Client
from tests.secgroups.conftest import default_group, group, rule

PROTOCOLS_TEXT = ("(None, 'any', 'ah', 'dccp', 'egp', 'esp', 'gre', 'hopopt', 'icmp', 'igmp', "
                  "'ip', 'ipip', 'ipv6-encap', 'ipv6-frag', 'ipv6-icmp', 'icmpv6', "
                  "'ipv6-nonxt', 'ipv6-opts', 'ipv6-route', 'ospf', 'pgm', 'rsvp', 'sctp', "
                  "'tcp', 'udp', 'udplite', 'vrrp')")


def _post(client: Client, group_id: str, **attrs: Any) -> tuple[int, Any]:
    attrs.setdefault("direction", "ingress")
    return client.post("/v2.0/security-group-rules", {"security_group_rule": {
        "security_group_id": group_id, **attrs}})


BAD = [
    ({"protocol": "foo"}, 400, "SecurityGroupRuleInvalidProtocol",
     f"Security group rule protocol foo not supported. Only protocol values {PROTOCOLS_TEXT} "
     "and integer representations [0 to 255] are supported."),
    ({"protocol": 300}, 400, "SecurityGroupRuleInvalidProtocol", None),
    ({"protocol": "-1"}, 400, "SecurityGroupRuleInvalidProtocol", None),
    ({"protocol": "tcp", "port_range_min": 0, "port_range_max": 10}, 400,
     "SecurityGroupInvalidPortValue", "Invalid value for port 0"),
    ({"protocol": "tcp", "port_range_min": 10, "port_range_max": 5}, 400,
     "SecurityGroupInvalidPortRange",
     "For TCP/UDP protocols, port_range_min must be <= port_range_max"),
    ({"protocol": "udp", "port_range_min": 10}, 400, "SecurityGroupInvalidPortRange", None),
    ({"protocol": "sctp", "port_range_max": 10}, 400, "SecurityGroupInvalidPortRange", None),
    ({"protocol": "tcp", "port_range_min": 65536, "port_range_max": 65536}, 400,
     "SecurityGroupInvalidPortValue", "Invalid value for port 65536"),
    ({"protocol": "tcp", "port_range_min": "abc", "port_range_max": 10}, 400,
     "SecurityGroupInvalidPortValue", "Invalid value for port abc"),
    ({"protocol": "icmp", "port_range_min": 256, "port_range_max": 1}, 400,
     "SecurityGroupInvalidIcmpValue",
     "Invalid value for ICMP type (port_range_min) 256. It must be 0 to 255."),
    ({"protocol": "icmp", "port_range_min": 1, "port_range_max": 256}, 400,
     "SecurityGroupInvalidIcmpValue",
     "Invalid value for ICMP code (port_range_max) 256. It must be 0 to 255."),
    ({"protocol": "icmp", "port_range_max": 1}, 400, "SecurityGroupMissingIcmpType",
     "ICMP code (port-range-max) 1 is provided but ICMP type (port-range-min) is missing."),
    ({"protocol": "gre", "port_range_min": 1, "port_range_max": 2}, 400,
     "SecurityGroupInvalidProtocolForPort",
     "Ports cannot be specified for protocol 47. Ports are only supported for "
     "DCCP, SCTP, TCP, UDP, UDPLITE."),
    ({"port_range_min": 1, "port_range_max": 2}, 400, "SecurityGroupProtocolRequiredWithPorts",
     "Must also specify protocol if port range is given."),
    ({"ethertype": "IPv6", "remote_ip_prefix": "10.0.0.0/8"}, 400,
     "SecurityGroupRuleParameterConflict", "Conflicting value ethertype IPv6 for CIDR 10.0.0.0/8"),
    ({"ethertype": "IPv4", "remote_ip_prefix": "::/0"}, 400,
     "SecurityGroupRuleParameterConflict", "Conflicting value ethertype IPv4 for CIDR ::/0"),
    ({"protocol": "ipv6-icmp", "ethertype": "IPv4"}, 400,
     "SecurityGroupEthertypeConflictWithProtocol", "Invalid ethertype IPv4 for protocol ipv6-icmp."),
    ({"direction": "sideways"}, 400, "HTTPBadRequest",
     "Invalid input for direction. Reason: sideways is not in valid_values."),
    ({"ethertype": "IPv5"}, 400, "SecurityGroupRuleInvalidEtherType",
     "Security group rule for ethertype 'IPv5' not supported. Allowed values are "
     "['IPv4', 'IPv6']."),
    ({"remote_ip_prefix": "foo"}, 400, "InvalidCIDR", "Invalid CIDR foo given as IP prefix."),
    ({"remote_group_id": ZERO_UUID}, 404, "SecurityGroupNotFound",
     f"Security group {ZERO_UUID} does not exist"),
    ({"remote_address_group_id": ZERO_UUID}, 404, "AddressGroupNotFound",
     f"Address group {ZERO_UUID} could not be found."),
]


@pytest.mark.parametrize("attrs,code,kind,message", BAD)
def test_invalid_rules_are_refused_as_upstream(member: Client, attrs: dict, code: int,
                                               kind: str, message: str | None) -> None:
    sg = group(member)
    got = error(_post(member, sg["id"], **attrs), code, kind)
    if message is not None:
        assert got == message
    after = member.get(f"/v2.0/security-groups/{sg['id']}")[1]["security_group"]
    assert len(after["security_group_rules"]) == 2  # nothing was added


def test_remote_ip_prefix_and_remote_group_together_are_refused(member: Client) -> None:
    sg = group(member)
    msg = error(_post(member, sg["id"], remote_ip_prefix="10.0.0.0/8",
                      remote_group_id=sg["id"]), 400, "SecurityGroupMultipleRemoteEntites")
    assert msg == ("Only one of remote_ip_prefix or remote_group_id or "
                   "remote_address_group_id may be provided.")


def test_missing_or_invisible_group_of_a_rule(member: Client, other: Client) -> None:
    error(_post(member, ZERO_UUID), 404, "SecurityGroupNotFound")
    error(_post(member, "not-a-uuid"), 404, "SecurityGroupNotFound")
    sg = group(member)
    error(_post(other, sg["id"], protocol="udp"), 403, "PolicyNotAuthorized")
    theirs = group(other)
    error(_post(member, sg["id"], remote_group_id=theirs["id"]), 404, "SecurityGroupNotFound")


def test_required_attributes(member: Client) -> None:
    sg = group(member)
    msg = error(member.post("/v2.0/security-group-rules", {"security_group_rule": {
        "security_group_id": sg["id"]}}), 400, "HTTPBadRequest")
    assert msg == "Failed to parse request. Required attribute 'direction' not specified"
    msg = error(member.post("/v2.0/security-group-rules", {"security_group_rule": {
        "direction": "ingress"}}), 400, "HTTPBadRequest")
    assert msg == "Failed to parse request. Required attribute 'security_group_id' not specified"


def test_a_created_rule_shows_what_was_asked_normalised(member: Client) -> None:
    sg = group(member)
    got = rule(member, sg["id"], protocol="TCP", port_range_min="80", port_range_max="81",
               ethertype="ipv4", remote_ip_prefix="10.0.0.5/24", description="web")
    assert got["protocol"] == "tcp" and got["ethertype"] == "IPv4"
    assert (got["port_range_min"], got["port_range_max"]) == (80, 81)
    assert got["remote_ip_prefix"] == "10.0.0.5/24"
    assert got["normalized_cidr"] == "10.0.0.0/24"
    assert got["description"] == "web" and got["revision_number"] == 0
    assert got["belongs_to_default_sg"] is False
    assert got["remote_group_id"] is None and got["remote_address_group_id"] is None
    assert set(got) == {"id", "project_id", "tenant_id", "security_group_id", "ethertype",
                        "direction", "protocol", "port_range_min", "port_range_max",
                        "remote_ip_prefix", "remote_address_group_id", "normalized_cidr",
                        "remote_group_id", "belongs_to_default_sg", "description",
                        "created_at", "updated_at", "revision_number"}
    shown = member.get(f"/v2.0/security-group-rules/{got['id']}")[1]["security_group_rule"]
    assert shown == got
    host = rule(member, sg["id"], remote_ip_prefix="10.0.0.1")
    assert host["remote_ip_prefix"] == "10.0.0.1/32" and host["description"] == ""


def test_protocol_numbers_any_and_the_full_port_range(member: Client) -> None:
    sg = group(member)
    assert rule(member, sg["id"], protocol=17)["protocol"] == "17"
    assert rule(member, sg["id"], protocol="any", direction="egress",
                remote_ip_prefix="10.1.0.0/16")["protocol"] is None
    full = rule(member, sg["id"], protocol="tcp", port_range_min=1, port_range_max=65535)
    assert (full["port_range_min"], full["port_range_max"]) == (None, None)
    for code in ((3, 2), (8, 0), (0, 0), (11, None)):
        icmp = rule(member, sg["id"], protocol="icmp", port_range_min=code[0],
                    port_range_max=code[1])
        assert (icmp["port_range_min"], icmp["port_range_max"]) == code


@pytest.mark.parametrize("given,stored", [("icmp", "ipv6-icmp"), ("icmpv6", "ipv6-icmp"),
                                          ("ipv6-icmp", "ipv6-icmp"), ("1", "58")])
def test_icmp_with_ipv6_is_stored_as_ipv6_icmp(member: Client, given: str, stored: str) -> None:
    sg = group(member)
    assert rule(member, sg["id"], protocol=given, ethertype="IPv6")["protocol"] == stored


@pytest.mark.parametrize("first,second", [
    ({"protocol": "tcp"}, {"protocol": "6"}),
    ({"protocol": "icmp", "ethertype": "IPv6"}, {"protocol": "58", "ethertype": "IPv6"}),
    ({"protocol": "any"}, {"remote_ip_prefix": "0.0.0.0/0"}),
    ({"protocol": "tcp", "port_range_min": 1, "port_range_max": 65535}, {"protocol": "tcp"}),
])
def test_duplicate_rules_are_409_naming_the_existing_rule(member: Client, first: dict,
                                                          second: dict) -> None:
    sg = group(member)
    existing = rule(member, sg["id"], **first)
    msg = error(_post(member, sg["id"], **second), 409, "SecurityGroupRuleExists")
    assert msg == f"Security group rule already exists. Rule id is {existing['id']}."


def test_default_egress_rules_count_as_existing(member: Client) -> None:
    sg = group(member)
    error(_post(member, sg["id"], direction="egress"), 409, "SecurityGroupRuleExists")


def test_bulk_create_is_atomic(member: Client) -> None:
    sg = group(member)
    ok = [{"security_group_id": sg["id"], "direction": "ingress", "protocol": "tcp",
           "port_range_min": p, "port_range_max": p} for p in (22, 80)]
    status, body = member.post("/v2.0/security-group-rules", {"security_group_rules": ok})
    assert status == 201, body
    assert sorted(r["port_range_min"] for r in body["security_group_rules"]) == [22, 80]
    bad = [{**ok[0], "port_range_min": 443, "port_range_max": 443},
           {**ok[0], "protocol": "tcp", "port_range_min": 0, "port_range_max": 1}]
    error(member.post("/v2.0/security-group-rules", {"security_group_rules": bad}), 400,
          "SecurityGroupInvalidPortValue")
    dup = [{**ok[0], "port_range_min": 8080, "port_range_max": 8080}] * 2
    error(member.post("/v2.0/security-group-rules", {"security_group_rules": dup}), 409,
          "DuplicateSecurityGroupRuleInPost")
    rules = member.get(f"/v2.0/security-group-rules?security_group_id={sg['id']}")[1]
    assert sorted(r["port_range_min"] or 0 for r in rules["security_group_rules"]) == \
        [0, 0, 22, 80]


def test_bulk_create_names_one_group(member: Client) -> None:
    a, b = group(member), group(member)
    items = [{"security_group_id": g["id"], "direction": "ingress"} for g in (a, b)]
    msg = error(member.post("/v2.0/security-group-rules", {"security_group_rules": items}),
                400, "SecurityGroupNotSingleGroupRules")
    assert msg == "Only allowed to update rules for one security profile at a time"


def test_rule_changes_advance_the_groups_revision(member: Client) -> None:
    sg = group(member)
    r = rule(member, sg["id"], protocol="udp")
    after_create = member.get(f"/v2.0/security-groups/{sg['id']}")[1]["security_group"]
    assert after_create["revision_number"] == sg["revision_number"] + 1
    assert r["id"] in {x["id"] for x in after_create["security_group_rules"]}
    assert member.delete(f"/v2.0/security-group-rules/{r['id']}")[0] == 204
    after_delete = member.get(f"/v2.0/security-groups/{sg['id']}")[1]["security_group"]
    assert after_delete["revision_number"] == sg["revision_number"] + 2
    msg = error(member.get(f"/v2.0/security-group-rules/{r['id']}"), 404,
                "SecurityGroupRuleNotFound")
    assert msg == f"Security group rule {r['id']} does not exist"
    error(member.delete(f"/v2.0/security-group-rules/{r['id']}"), 404)


def test_rules_of_other_projects_are_invisible(member: Client, other: Client,
                                               admin: Client) -> None:
    sg = group(member)
    r = rule(member, sg["id"], protocol="udp")
    error(other.get(f"/v2.0/security-group-rules/{r['id']}"), 404)
    error(other.delete(f"/v2.0/security-group-rules/{r['id']}"), 404)
    seen = {x["id"] for x in other.get("/v2.0/security-group-rules")[1]["security_group_rules"]}
    assert r["id"] not in seen
    assert admin.get(f"/v2.0/security-group-rules/{r['id']}")[0] == 200


def test_reader_lists_rules_but_cannot_change_them(member: Client, reader: Client) -> None:
    sg = group(member)
    r = rule(member, sg["id"], protocol="udp")
    ids = {x["id"] for x in reader.get("/v2.0/security-group-rules")[1]["security_group_rules"]}
    assert r["id"] in ids
    error(_post(reader, sg["id"], protocol="tcp"), 403, "PolicyNotAuthorized")
    error(reader.delete(f"/v2.0/security-group-rules/{r['id']}"), 403, "PolicyNotAuthorized")


def test_admin_adds_rules_to_another_projects_group(member: Client, admin: Client) -> None:
    sg = group(member)
    got = rule(admin, sg["id"], protocol="tcp", port_range_min=5, port_range_max=5,
               project_id=sg["project_id"])
    assert got["project_id"] == sg["project_id"]
    ids = {x["id"] for x in member.get("/v2.0/security-group-rules")[1]["security_group_rules"]}
    assert got["id"] in ids


def test_listing_rules_makes_the_default_group_and_filters(member: Client) -> None:
    rules = member.get("/v2.0/security-group-rules")[1]["security_group_rules"]
    assert len(rules) == 4 and all(r["belongs_to_default_sg"] for r in rules)
    sg = group(member)
    in_default = member.get("/v2.0/security-group-rules?belongs_to_default_sg=true")[1]
    assert {r["security_group_id"] for r in in_default["security_group_rules"]} == \
        {default_group(member)["id"]}
    outside = member.get("/v2.0/security-group-rules?belongs_to_default_sg=false")[1]
    assert {r["security_group_id"] for r in outside["security_group_rules"]} == {sg["id"]}
    rule(member, sg["id"], remote_ip_prefix="10.2.3.4/16")
    by_cidr = member.get("/v2.0/security-group-rules?normalized_cidr=10.2.0.0/16")[1]
    assert [r["remote_ip_prefix"] for r in by_cidr["security_group_rules"]] == ["10.2.3.4/16"]
    egress = member.get(f"/v2.0/security-group-rules?security_group_id={sg['id']}"
                        "&direction=egress&fields=ethertype")[1]["security_group_rules"]
    assert sorted(r["ethertype"] for r in egress) == ["IPv4", "IPv6"]
