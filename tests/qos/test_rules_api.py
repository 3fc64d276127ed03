"""QoS rules under their policy, and the ``qos-rules-alias`` collections.

Messages and types are upstream Neutron 29's, as observed: one rule per
type and direction (``QoSRulesConflict``), a bandwidth limit never below a
minimum of the same direction (``QoSRuleParameterConflict``), values
validated before anything is written.
"""
from __future__ import annotations

import uuid

import pytest

from tests.conftest import Client, Server
from tests.qos._qos import RULES, error, manager, policy, reader, rule

ZERO = "00000000-0000-0000-0000-000000000000"


@pytest.fixture
def owner(server: Server) -> Client:
    return manager(server.url)


@pytest.fixture
def pid(owner: Client) -> str:
    return policy(owner)["id"]


@pytest.mark.parametrize("rule_type, given, shown", [
    ("bandwidth_limit", {"max_kbps": 1000},
     {"max_kbps": 1000, "max_burst_kbps": 0, "direction": "egress"}),
    ("bandwidth_limit", {"max_kbps": 10, "max_burst_kbps": 5, "direction": "ingress"},
     {"max_kbps": 10, "max_burst_kbps": 5, "direction": "ingress"}),
    ("dscp_marking", {"dscp_mark": 46}, {"dscp_mark": 46}),
    ("minimum_bandwidth", {"min_kbps": 100, "direction": "ingress"},
     {"min_kbps": 100, "direction": "ingress"}),
    ("minimum_packet_rate", {"min_kpps": 1000, "direction": "any"},
     {"min_kpps": 1000, "direction": "any"}),
    ("packet_rate_limit", {"max_kpps": 7}, {"max_kpps": 7, "max_burst_kpps": 0,
                                            "direction": "egress"}),
])
def test_each_rule_type_round_trips(owner: Client, pid: str, rule_type: str, given: dict,
                                    shown: dict) -> None:
    made = rule(owner, pid, rule_type, **given)
    assert made == {"id": made["id"], **shown}
    path = RULES.format(pid, rule_type)
    assert owner.get(f"{path}/{made['id']}")[1] == {f"{rule_type}_rule": made}
    assert owner.get(path)[1] == {f"{rule_type}_rules": [made]}
    assert owner.delete(f"{path}/{made['id']}")[0] == 204
    assert owner.get(path)[1] == {f"{rule_type}_rules": []}


def test_values_are_validated_as_upstream(owner: Client, pid: str) -> None:
    path = RULES.format(pid, "bandwidth_limit")
    cases = [
        ({}, "HTTPBadRequest",
         "Failed to parse request. Required attribute 'max_kbps' not specified"),
        ({"max_kbps": -1}, "HTTPBadRequest",
         "Invalid input for max_kbps. Reason: '-1' is too small - must be at least '0'."),
        ({"max_kbps": "abc"}, "InvalidInput",
         "Invalid input for operation: 'abc' is not an integer."),
        ({"max_kbps": 10, "direction": "up"}, "HTTPBadRequest",
         "Invalid input for direction. Reason: up is not in valid_values."),
        ({"max_kbps": 2 ** 31}, "HTTPBadRequest",
         "Invalid input for max_kbps. Reason: '2147483648' is too large - must be no larger "
         "than '2147483647'."),
    ]
    for body, kind, message in cases:
        assert error(owner.post(path, {"bandwidth_limit_rule": body}), 400, kind) == message
    message = error(owner.post(RULES.format(pid, "dscp_marking"),
                               {"dscp_marking_rule": {"dscp_mark": 17}}), 400, "HTTPBadRequest")
    assert message == "Invalid input for dscp_mark. Reason: 17 is not in valid_values."
    error(owner.post(RULES.format(pid, "minimum_bandwidth"),
                     {"minimum_bandwidth_rule": {"min_kbps": 1, "direction": "any"}}), 400,
          "HTTPBadRequest")
    assert owner.get(f"/v2.0/qos/policies/{pid}")[1]["policy"]["rules"] == []


def test_one_rule_per_type_and_direction(owner: Client, pid: str) -> None:
    first = rule(owner, pid, "bandwidth_limit", max_kbps=1000)
    message = error(owner.post(RULES.format(pid, "bandwidth_limit"),
                               {"bandwidth_limit_rule": {"max_kbps": 5}}), 409, "QoSRulesConflict")
    assert message == (f"Rule bandwidth_limit conflicts with rule {first['id']} which already "
                       f"exists in QoS Policy {pid}.")
    ingress = rule(owner, pid, "bandwidth_limit", max_kbps=2000, direction="ingress")
    # Turning the egress rule into a second ingress one is the same conflict.
    message = error(owner.put(f"{RULES.format(pid, 'bandwidth_limit')}/{first['id']}",
                              {"bandwidth_limit_rule": {"direction": "ingress"}}), 409,
                    "QoSRulesConflict")
    assert ingress["id"] in message
    dscp = rule(owner, pid, "dscp_marking", dscp_mark=16)
    message = error(owner.post(RULES.format(pid, "dscp_marking"),
                               {"dscp_marking_rule": {"dscp_mark": 18}}), 409, "QoSRulesConflict")
    assert dscp["id"] in message


def test_bandwidth_limit_never_below_the_minimum(owner: Client, pid: str) -> None:
    limit = rule(owner, pid, "bandwidth_limit", max_kbps=2000, direction="ingress")
    message = error(owner.post(RULES.format(pid, "minimum_bandwidth"),
                               {"minimum_bandwidth_rule": {"min_kbps": 5000,
                                                           "direction": "ingress"}}),
                    409, "QoSRuleParameterConflict")
    assert message == (f"Unable to add the rule with value 5000 to the policy {pid} as the "
                       "existing rule of type bandwidth_limit has value 2000.")
    # Another direction is another matter.
    rule(owner, pid, "minimum_bandwidth", min_kbps=5000)
    rule(owner, pid, "minimum_bandwidth", min_kbps=100, direction="ingress")
    message = error(owner.put(f"{RULES.format(pid, 'bandwidth_limit')}/{limit['id']}",
                              {"bandwidth_limit_rule": {"max_kbps": 50}}), 409,
                    "QoSRuleParameterConflict")
    assert message.endswith("existing rule of type minimum_bandwidth has value 100.")


def test_minimum_packet_rate_is_directional_or_any_not_both(owner: Client, pid: str) -> None:
    rule(owner, pid, "minimum_packet_rate", min_kpps=100)
    message = error(owner.post(RULES.format(pid, "minimum_packet_rate"),
                               {"minimum_packet_rate_rule": {"min_kpps": 100, "direction": "any"}}),
                    409, "QoSRuleParameterConflict")
    assert message == (f"Unable to add the rule with value any to the policy {pid} as the "
                       "existing rule of type minimum_packet_rate has value egress.")
    rule(owner, pid, "minimum_packet_rate", min_kpps=100, direction="ingress")


def test_rules_are_found_only_under_their_own_policy(owner: Client, pid: str) -> None:
    made = rule(owner, pid, "bandwidth_limit", max_kbps=1)
    elsewhere = policy(owner)["id"]
    for path in (f"{RULES.format(elsewhere, 'bandwidth_limit')}/{made['id']}",
                 f"{RULES.format(pid, 'dscp_marking')}/{made['id']}"):
        message = error(owner.get(path), 404, "QosRuleNotFound")
        assert message == (f"QoS rule {made['id']} for policy {path.split('/')[4]} could not "
                           "be found.")
        error(owner.delete(path), 404, "QosRuleNotFound")
    message = error(owner.get(f"{RULES.format(ZERO, 'bandwidth_limit')}"), 404,
                    "QosPolicyNotFound")
    assert message == f"QoS policy {ZERO} could not be found."
    error(owner.post(RULES.format(ZERO, "bandwidth_limit"),
                     {"bandwidth_limit_rule": {"max_kbps": 1}}), 404, "QosPolicyNotFound")


def test_rules_follow_their_policys_owner(server: Server, owner: Client, pid: str,
                                          admin: Client) -> None:
    made = rule(owner, pid, "dscp_marking", dscp_mark=8)
    path = f"{RULES.format(pid, 'dscp_marking')}/{made['id']}"
    project = owner.session.headers["X-Project-Id"]
    # A reader of the project reads, a member may not write (manager needed).
    assert reader(server.url, project).get(path)[0] == 200
    member = Client(server.url, project, "member")
    message = error(member.put(path, {"dscp_marking_rule": {"dscp_mark": 10}}), 403,
                    "PolicyNotAuthorized")
    assert message == "rule:update_policy_dscp_marking_rule is disallowed by policy"
    # Another project does not see the policy, hence no rules.
    error(manager(server.url).get(path), 404, "QosPolicyNotFound")
    # Admins manage every project's rules.
    status, body = admin.put(path, {"dscp_marking_rule": {"dscp_mark": 10}})
    assert status == 200 and body["dscp_marking_rule"]["dscp_mark"] == 10


def test_rules_alias_reaches_a_rule_by_id_alone(server: Server, owner: Client, pid: str) -> None:
    made = rule(owner, pid, "minimum_bandwidth", min_kbps=100)
    alias = f"/v2.0/qos/alias_minimum_bandwidth_rules/{made['id']}"
    status, body = owner.get(alias)
    assert status == 200 and body == {"alias_minimum_bandwidth_rule": made}
    status, body = owner.put(alias, {"alias_minimum_bandwidth_rule": {"min_kbps": 200}})
    assert status == 200 and body["alias_minimum_bandwidth_rule"]["min_kbps"] == 200
    assert owner.get(f"/v2.0/qos/policies/{pid}")[1]["policy"]["rules"][0]["min_kbps"] == 200
    # Of the wrong type, or another project's: not found, as upstream words it.
    message = error(owner.get(f"/v2.0/qos/alias_dscp_marking_rules/{made['id']}"), 404,
                    "QosRuleNotFound")
    assert message == f"QoS rule {made['id']} for policy  could not be found."
    error(manager(server.url).get(alias), 404, "QosRuleNotFound")
    error(Client(server.url, owner.session.headers["X-Project-Id"], "member").delete(alias),
          403, "PolicyNotAuthorized")
    assert owner.delete(alias)[0] == 204
    assert owner.get(f"/v2.0/qos/policies/{pid}")[1]["policy"]["rules"] == []
    error(owner.get(alias), 404, "QosRuleNotFound")


def test_rule_of_an_unknown_project_member_cannot_be_created(server: Server, pid: str) -> None:
    # Upstream checks the create against the policy's owner, seen or not: 403.
    stranger = Client(server.url, uuid.uuid4().hex, "manager")
    error(stranger.post(RULES.format(pid, "bandwidth_limit"),
                        {"bandwidth_limit_rule": {"max_kbps": 1}}), 403, "PolicyNotAuthorized")
