"""``fwaas_v2``: /v2.0/fwaas/firewall_rules, firewall_policies and firewall_groups
as upstream's neutron-fwaas (agent driver) and its default policy answer them:
the owner's, hidden from other projects unless shared, an admin's over all."""
from __future__ import annotations

import uuid
from typing import Any

import sqlalchemy as sa

from neutrino.db import tables
from neutrino.db.engine import make_engine
from neutrino.plugins.ml2.agents_db import AGENT_TYPE_OVS
from tests.conftest import Client
from tests.ml2.binding_helpers import report_agent

RULES = "/v2.0/fwaas/firewall_rules"
POLICIES = "/v2.0/fwaas/firewall_policies"
GROUPS = "/v2.0/fwaas/firewall_groups"


def _project(client: Client) -> str:
    return str(client.session.headers["X-Project-Id"])


def _error(body: Any) -> tuple[str, str]:
    return body["NeutronError"]["type"], body["NeutronError"]["message"]


def _rule(client: Client, **attrs: Any) -> dict[str, Any]:
    status, body = client.post(RULES, {"firewall_rule": attrs})
    assert status == 201, body
    return dict(body["firewall_rule"])


def _policy(client: Client, **attrs: Any) -> dict[str, Any]:
    status, body = client.post(POLICIES, {"firewall_policy": attrs})
    assert status == 201, body
    return dict(body["firewall_policy"])


def _group(client: Client, **attrs: Any) -> dict[str, Any]:
    status, body = client.post(GROUPS, {"firewall_group": attrs})
    assert status == 201, body
    return dict(body["firewall_group"])


def _router_port(client: Client, cidr: str = "10.81.0.0/24") -> str:
    """A router interface of the caller's project."""
    status, net = client.post("/v2.0/networks", {"network": {"name": "n"}})
    assert status == 201, net
    status, sub = client.post("/v2.0/subnets", {"subnet": {
        "network_id": net["network"]["id"], "cidr": cidr, "ip_version": 4}})
    assert status == 201, sub
    status, router = client.post("/v2.0/routers", {"router": {"name": "r"}})
    assert status == 201, router
    status, intf = client.put(f"/v2.0/routers/{router['router']['id']}/add_router_interface",
                              {"subnet_id": sub["subnet"]["id"]})
    assert status == 200, intf
    return str(intf["port_id"])


# -- rules --------------------------------------------------------------------------------

def test_a_rule_takes_upstreams_defaults_and_shows_its_policies(owner: Client) -> None:
    rule = _rule(owner, name="ssh", protocol="TCP", destination_port="22", action="ALLOW")
    assert {k: rule[k] for k in ("name", "protocol", "ip_version", "action", "enabled",
                                 "shared", "source_port", "destination_port",
                                 "source_ip_address", "destination_ip_address",
                                 "firewall_policy_id", "revision_number", "tags",
                                 "project_id", "tenant_id")} == {
        "name": "ssh", "protocol": "tcp", "ip_version": 4, "action": "allow",
        "enabled": True, "shared": False, "source_port": None, "destination_port": "22",
        "source_ip_address": None, "destination_ip_address": None,
        "firewall_policy_id": None, "revision_number": 0, "tags": [],
        "project_id": _project(owner), "tenant_id": _project(owner)}
    policy = _policy(owner, firewall_rules=[rule["id"]])
    # the show (only) names the policies holding the rule, as upstream
    assert owner.get(f"{RULES}/{rule['id']}")[1]["firewall_rule"]["firewall_policy_id"] == [
        policy["id"]]
    listed = [r for r in owner.get(RULES)[1]["firewall_rules"] if r["id"] == rule["id"]]
    assert listed[0]["firewall_policy_id"] is None
    status, body = owner.put(f"{RULES}/{rule['id']}", {"firewall_rule": {
        "destination_port": "1000:2000", "source_ip_address": "10.0.0.0/8"}})
    assert status == 200, body
    assert (body["firewall_rule"]["destination_port"], body["firewall_rule"]["source_ip_address"],
            body["firewall_rule"]["revision_number"]) == ("1000:2000", "10.0.0.0/8", 1)


def test_rules_upstream_refuses_are_400(owner: Client) -> None:
    cases = [
        ({"protocol": "icmp", "destination_port": "22"}, (
            "FirewallRuleInvalidICMPParameter",
            "Source, destination port are not allowed when protocol is set to ICMP.")),
        ({"destination_port": "22"}, (
            "FirewallRuleWithPortWithoutProtocolInvalid",
            "Source/destination port requires a protocol.")),
        ({"ip_version": 6, "source_ip_address": "10.0.0.1"}, (
            "FirewallIpAddressConflict",
            "Invalid input - IP addresses do not agree with IP Version.")),
        ({"protocol": "tcp", "destination_port": "30:20"}, (
            "FirewallRuleInvalidPortValue", "Invalid value for port 30:20.")),
    ]
    for attrs, expected in cases:
        status, body = owner.post(RULES, {"firewall_rule": attrs})
        assert status == 400 and _error(body) == expected, (attrs, body)
    for attrs in ({"action": "drop"}, {"protocol": "gre"}, {"ip_version": 5},
                  {"destination_port": "70000", "protocol": "tcp"}):
        status, body = owner.post(RULES, {"firewall_rule": attrs})
        assert status == 400, (attrs, body)
    # the whole rule is checked on update too, nothing written
    rule = _rule(owner, protocol="tcp", destination_port="80")
    status, body = owner.put(f"{RULES}/{rule['id']}", {"firewall_rule": {"protocol": "icmp"}})
    assert status == 400 and _error(body)[0] == "FirewallRuleInvalidICMPParameter"
    assert owner.get(f"{RULES}/{rule['id']}")[1]["firewall_rule"]["protocol"] == "tcp"


def test_rules_are_the_owners_unless_shared_and_only_admins_share(
        owner: Client, other: Client, reader: Client, admin: Client) -> None:
    mine = _rule(owner, name="mine")
    status, body = other.get(f"{RULES}/{mine['id']}")
    assert status == 404 and _error(body) == (
        "FirewallRuleNotFound", f"Firewall rule {mine['id']} could not be found.")
    assert mine["id"] not in [r["id"] for r in other.get(RULES)[1]["firewall_rules"]]
    assert other.put(f"{RULES}/{mine['id']}", {"firewall_rule": {"name": "x"}})[0] == 404
    assert other.delete(f"{RULES}/{mine['id']}")[0] == 404
    status, body = owner.post(RULES, {"firewall_rule": {"shared": True}})
    assert status == 403, body
    # a reader of the project sees, and changes nothing
    assert reader.get(f"{RULES}/{mine['id']}")[0] == 200
    assert reader.post(RULES, {"firewall_rule": {}})[0] == 403
    assert reader.put(f"{RULES}/{mine['id']}", {"firewall_rule": {"name": "x"}})[0] == 403
    shared = _rule(admin, name="everyone", shared=True)
    assert other.get(f"{RULES}/{shared['id']}")[1]["firewall_rule"]["shared"] is True
    assert other.put(f"{RULES}/{shared['id']}", {"firewall_rule": {"name": "x"}})[0] == 403
    assert admin.get(f"{RULES}/{mine['id']}")[0] == 200


def test_a_rule_in_a_policy_is_in_use(owner: Client) -> None:
    rule = _rule(owner)
    policy = _policy(owner, firewall_rules=[rule["id"]])
    status, body = owner.delete(f"{RULES}/{rule['id']}")
    assert status == 409 and _error(body) == (
        "FirewallRuleInUse", f"Firewall rule {rule['id']} is being used.")
    assert owner.delete(f"{POLICIES}/{policy['id']}")[0] == 204
    assert owner.delete(f"{RULES}/{rule['id']}")[0] == 204
    assert owner.get(f"{RULES}/{rule['id']}")[0] == 404


# -- policies ---------------------------------------------------------------------------

def test_a_policy_orders_its_rules_and_any_change_clears_audited(owner: Client) -> None:
    a, b, c, d = (_rule(owner, name=n)["id"] for n in "abcd")
    policy = _policy(owner, firewall_rules=[a], audited=True)
    assert (policy["firewall_rules"], policy["audited"]) == ([a], True)
    pid = policy["id"]
    status, body = owner.put(f"{POLICIES}/{pid}/insert_rule",
                             {"firewall_rule_id": b, "insert_before": a})
    # the bare policy, as upstream answers the action
    assert status == 200 and (body["firewall_rules"], body["audited"]) == ([b, a], False), body
    body = owner.put(f"{POLICIES}/{pid}/insert_rule",
                     {"firewall_rule_id": c, "insert_after": b})[1]
    assert body["firewall_rules"] == [b, c, a]
    body = owner.put(f"{POLICIES}/{pid}/insert_rule", {"firewall_rule_id": d})[1]
    assert body["firewall_rules"] == [d, b, c, a]
    body = owner.put(f"{POLICIES}/{pid}/remove_rule", {"firewall_rule_id": c})[1]
    assert body["firewall_rules"] == [d, b, a]
    assert owner.put(f"{POLICIES}/{pid}", {"firewall_policy": {"audited": True}})[1][
        "firewall_policy"]["audited"] is True
    body = owner.put(f"{POLICIES}/{pid}", {"firewall_policy": {"name": "p2"}})[1]
    assert (body["firewall_policy"]["name"], body["firewall_policy"]["audited"]) == ("p2", False)
    owner.put(f"{POLICIES}/{pid}", {"firewall_policy": {"audited": True}})
    assert owner.put(f"{RULES}/{a}", {"firewall_rule": {"enabled": False}})[0] == 200
    assert owner.get(f"{POLICIES}/{pid}")[1]["firewall_policy"]["audited"] is False
    body = owner.put(f"{POLICIES}/{pid}", {"firewall_policy": {"firewall_rules": [a, d]}})[1]
    assert body["firewall_policy"]["firewall_rules"] == [a, d]
    listed = owner.get(f"{POLICIES}?firewall_rules={d}")[1]["firewall_policies"]
    assert [p["id"] for p in listed] == [pid]


def test_insert_and_remove_refusals(owner: Client, other: Client) -> None:
    a, b = _rule(owner)["id"], _rule(owner)["id"]
    pid = _policy(owner, firewall_rules=[a])["id"]
    cases = [
        ("insert_rule", {"firewall_rule_id": a}, 409, (
            "FirewallRuleAlreadyAssociated",
            f"Operation cannot be performed since firewall rule {a} is already associated "
            f"with firewall policy {pid}.")),
        ("insert_rule", {"firewall_rule_id": b, "insert_before": b}, 400, (
            "FirewallRuleNotAssociatedWithPolicy",
            f"Firewall rule {b} is not associated with firewall policy {pid}.")),
        ("remove_rule", {"firewall_rule_id": b}, 400, (
            "FirewallRuleNotAssociatedWithPolicy",
            f"Firewall rule {b} is not associated with firewall policy {pid}.")),
        ("insert_rule", {}, 400, (
            "FirewallRuleInfoMissing",
            "Missing rule info argument for insert/remove rule operation.")),
        ("remove_rule", {"firewall_rule_id": "nope"}, 404, (
            "FirewallRuleNotFound", "Firewall rule nope could not be found.")),
    ]
    for action, body, code, expected in cases:
        status, answer = owner.put(f"{POLICIES}/{pid}/{action}", body)
        assert status == code and _error(answer) == expected, (action, body, answer)
    theirs = _rule(other)["id"]
    status, body = owner.put(f"{POLICIES}/{pid}/insert_rule", {"firewall_rule_id": theirs})
    assert status == 404 and _error(body)[0] == "FirewallRuleNotFound"
    # another project's policy is not found for the caller's actions
    status, body = other.put(f"{POLICIES}/{pid}/insert_rule", {"firewall_rule_id": theirs})
    assert status == 404 and _error(body)[0] == "FirewallPolicyNotFound"
    assert owner.get(f"{POLICIES}/{pid}")[1]["firewall_policy"]["firewall_rules"] == [a]


def test_policies_share_only_shared_rules(owner: Client, other: Client, admin: Client) -> None:
    private = _rule(admin)["id"]
    status, body = admin.post(POLICIES, {"firewall_policy": {
        "shared": True, "firewall_rules": [private]}})
    assert status == 404 and _error(body)[0] == "FirewallRuleSharingConflict", body
    pid = _policy(admin, firewall_rules=[private])["id"]
    status, body = admin.put(f"{POLICIES}/{pid}", {"firewall_policy": {"shared": True}})
    assert status == 409 and _error(body) == (
        "FirewallPolicySharingConflict",
        f"Operation cannot be performed. Before sharing firewall policy {pid}, share "
        f"associated firewall rule {private}.")
    public = _rule(admin, shared=True)["id"]
    shared = _policy(admin, shared=True, firewall_rules=[public])
    # another project sees it, uses its rules in a policy of its own, changes nothing
    assert other.get(f"{POLICIES}/{shared['id']}")[0] == 200
    assert _policy(other, firewall_rules=[public])["firewall_rules"] == [public]
    assert other.put(f"{POLICIES}/{shared['id']}", {"firewall_policy": {"name": "x"}})[0] == 403
    # an admin putting another project's unshared rule in a policy
    theirs = _rule(owner)["id"]
    status, body = admin.put(f"{POLICIES}/{pid}", {"firewall_policy": {
        "firewall_rules": [theirs]}})
    assert status == 409 and _error(body)[0] == "FirewallRuleConflict"
    status, body = owner.post(POLICIES, {"firewall_policy": {"shared": True}})
    assert status == 403, body
    status, body = owner.post(POLICIES, {"firewall_policy": {"firewall_rules": [private]}})
    assert status == 404 and _error(body) == (
        "FirewallRuleNotFound", f"Firewall rule {private} could not be found.")


def test_a_policy_used_by_a_group_stays(owner: Client) -> None:
    pid = _policy(owner)["id"]
    gid = _group(owner, ingress_firewall_policy_id=pid)["id"]
    status, body = owner.delete(f"{POLICIES}/{pid}")
    assert status == 409 and _error(body) == (
        "FirewallPolicyInUse", f"Firewall policy {pid} is being used.")
    assert owner.delete(f"{GROUPS}/{gid}")[0] == 204
    assert owner.delete(f"{POLICIES}/{pid}")[0] == 204


# -- groups -----------------------------------------------------------------------------

def test_every_project_has_a_default_group_it_cannot_change_or_delete(
        owner: Client, admin: Client) -> None:
    listed = owner.get(GROUPS)[1]["firewall_groups"]
    assert [g["name"] for g in listed] == ["default"]
    default = listed[0]
    assert (default["status"], default["ports"], default["description"]) == (
        "INACTIVE", [], "Default firewall group")
    mine = f"?project_id={_project(owner)}"
    policies = {p["name"]: p for p in owner.get(POLICIES + mine)[1]["firewall_policies"]}
    assert set(policies) == {"default ingress", "default egress"}
    assert default["ingress_firewall_policy_id"] == policies["default ingress"]["id"]
    rules = {r["id"]: r for r in owner.get(RULES + mine)[1]["firewall_rules"]}
    ingress = [rules[r] for r in policies["default ingress"]["firewall_rules"]]
    egress = [rules[r] for r in policies["default egress"]["firewall_rules"]]
    assert [(r["name"], r["action"], r["ip_version"]) for r in ingress] == [
        ("default ingress ipv4", "deny", 4), ("default ingress ipv6", "deny", 6)]
    assert [(r["name"], r["action"], r["ip_version"]) for r in egress] == [
        ("default egress ipv4", "allow", 4), ("default egress ipv6", "allow", 6)]
    status, body = owner.post(GROUPS, {"firewall_group": {"name": "default"}})
    assert status == 409 and _error(body) == (
        "FirewallDefaultParameterExists",
        "Operation cannot be performed since 'default' is a reserved name for Firewall Group.")
    status, body = owner.put(f"{GROUPS}/{default['id']}", {"firewall_group": {
        "description": "mine"}})
    assert status == 409 and _error(body)[0] == "FirewallDefaultObjectUpdateRestricted"
    status, body = owner.delete(f"{GROUPS}/{default['id']}")
    assert status == 409 and _error(body) == (
        "FirewallGroupCannotRemoveDefault", "Deleting default firewall group not allowed.")
    status, body = owner.put(f"{POLICIES}/{policies['default ingress']['id']}",
                             {"firewall_policy": {"name": "x"}})
    assert status == 409 and _error(body)[0] == "FirewallDefaultObjectUpdateRestricted"
    status, body = owner.post(POLICIES, {"firewall_policy": {"name": "default egress"}})
    assert status == 409 and _error(body)[0] == "FirewallDefaultParameterExists"
    # an admin changes all but its name, and deletes it with its policies
    assert admin.put(f"{GROUPS}/{default['id']}", {"firewall_group": {
        "description": "by admin"}})[0] == 200
    assert admin.put(f"{GROUPS}/{default['id']}", {"firewall_group": {
        "name": "x"}})[0] == 409
    assert admin.delete(f"{GROUPS}/{default['id']}")[0] == 204
    assert admin.get(f"{POLICIES}/{policies['default ingress']['id']}")[0] == 404


def test_a_group_on_router_ports_waits_for_its_agents(owner: Client) -> None:
    port = _router_port(owner)
    pid = _policy(owner, firewall_rules=[_rule(owner, action="allow")["id"]])["id"]
    empty = _group(owner, name="e", ingress_firewall_policy_id=pid)
    assert (empty["status"], empty["ports"], empty["admin_state_up"]) == ("INACTIVE", [], True)
    group = _group(owner, name="g", ingress_firewall_policy_id=pid, ports=[port])
    assert (group["status"], group["ports"]) == ("PENDING_CREATE", [port])
    gid = group["id"]
    # pending for an agent: no change, to it nor to its policy and rules
    status, body = owner.put(f"{GROUPS}/{gid}", {"firewall_group": {"ports": []}})
    assert status == 409 and _error(body) == (
        "FirewallGroupInPendingState",
        f"Operation cannot be performed since associated firewall group {gid} is in "
        f"PENDING_CREATE.")
    status, body = owner.put(f"{POLICIES}/{pid}", {"firewall_policy": {"firewall_rules": []}})
    assert status == 409 and _error(body)[0] == "FirewallGroupInPendingState"
    status, body = owner.delete(f"{GROUPS}/{gid}")
    assert status == 409 and _error(body) == (
        "FirewallGroupInUse", f"Firewall group {gid} is still active.")
    listed = owner.get(f"{GROUPS}?ports={port}")[1]["firewall_groups"]
    assert [g["id"] for g in listed] == [gid]


def test_a_groups_ports_are_the_callers_router_interfaces_in_no_other_group(
        owner: Client, other: Client) -> None:
    port = _router_port(owner, "10.82.0.0/24")
    _group(owner, ports=[port])
    status, body = owner.post(GROUPS, {"firewall_group": {"ports": [port]}})
    assert status == 409 and _error(body) == (
        "FirewallGroupPortInUse",
        f"Port(s) ['{port}'] provided already associated with other firewall group(s).")
    net = owner.post("/v2.0/networks", {"network": {}})[1]["network"]["id"]
    plain = owner.post("/v2.0/ports", {"port": {"network_id": net}})[1]["port"]["id"]
    status, body = owner.post(GROUPS, {"firewall_group": {"ports": [plain]}})
    assert status == 409 and _error(body) == (
        "FirewallGroupPortInvalid", f"Port {plain} of firewall group is invalid.")
    vm = owner.post("/v2.0/ports", {"port": {"network_id": net,
                                             "device_owner": "compute:nova"}})[1]["port"]["id"]
    status, body = owner.post(GROUPS, {"firewall_group": {"ports": [vm]}})
    assert status == 409 and _error(body) == (
        "FirewallGroupPortNotSupported",
        f"Port {vm} is not supported by firewall driver 'fwaas_db'.")
    status, body = other.post(GROUPS, {"firewall_group": {"ports": [port]}})
    assert status == 404 and _error(body) == (
        "PortNotFound", f"Port {port} could not be found.")


def test_a_group_uses_its_projects_policies_or_shared_ones(
        owner: Client, other: Client, admin: Client) -> None:
    theirs = _policy(other)["id"]
    status, body = owner.post(GROUPS, {"firewall_group": {"egress_firewall_policy_id": theirs}})
    assert status == 404 and _error(body) == (
        "FirewallPolicyNotFound", f"Firewall policy {theirs} could not be found.")
    status, body = admin.post(GROUPS, {"firewall_group": {"egress_firewall_policy_id": theirs}})
    assert status == 404 and _error(body)[0] == "FirewallPolicyConflict"
    shared = _policy(admin, shared=True)["id"]
    group = _group(owner, egress_firewall_policy_id=shared)
    assert group["egress_firewall_policy_id"] == shared
    # unsharing a policy another project's group uses is refused
    status, body = admin.put(f"{POLICIES}/{shared}", {"firewall_policy": {"shared": False}})
    assert status == 409 and _error(body)[0] == "FirewallPolicyInUse"
    assert other.get(f"{GROUPS}/{group['id']}")[0] == 404
    status, body = owner.post(GROUPS, {"firewall_group": {"shared": True}})
    assert status == 403, body


def test_tags_on_firewall_resources(owner: Client) -> None:
    rule = _rule(owner)
    status, body = owner.put(f"/v2.0/firewall_rules/{rule['id']}/tags", {"tags": ["a", "b"]})
    assert status == 200 and body["tags"] == ["a", "b"], body
    assert owner.get(f"{RULES}/{rule['id']}")[1]["firewall_rule"]["tags"] == ["a", "b"]
    listed = owner.get(f"{RULES}?tags=a")[1]["firewall_rules"]
    assert [r["id"] for r in listed] == [rule["id"]]


def test_fwaas_v2_is_listed(owner: Client) -> None:
    aliases = {e["alias"]: e for e in owner.get("/v2.0/extensions")[1]["extensions"]}
    assert aliases["fwaas_v2"]["name"] == "FWaaS v2"
    providers = owner.get("/v2.0/service-providers")[1]["service_providers"]
    assert {"service_type": "FIREWALL_V2", "name": "fwaas_db", "default": True} in providers


def _agent_reports(server: Any, group_id: str, status: str) -> None:
    """A group's status as its agent's ``set_firewall_group_status`` leaves it."""
    engine = make_engine(f"sqlite:///{server.tmp / 'var' / 'neutrino.sqlite'}")
    try:
        with engine.begin() as conn:
            conn.execute(sa.update(tables.firewall_groups_v2).where(
                tables.firewall_groups_v2.c.id == group_id).values(status=status))
    finally:
        engine.dispose()


def _default_group(client: Client) -> dict[str, Any]:
    listed = client.get(f"{GROUPS}?name=default")[1]["firewall_groups"]
    assert len(listed) == 1, listed
    return dict(listed[0])


def _instance_port(owner: Client, admin: Client, fw_server: Any, extensions: list[str],
                   leave_default: bool = True, **attrs: Any) -> str:
    """An instance's port of the owner, bound to OVS on a host whose Open
    vSwitch agent reports ``extensions``; unless ``leave_default`` is false,
    taken out of the default group it may have joined."""
    host = f"fw-host-{uuid.uuid4().hex[:8]}"
    report_agent(fw_server, AGENT_TYPE_OVS, host, {"bridge_mappings": {},
                                                    "tunnel_types": ["vxlan"],
                                                    "extensions": extensions})
    net = owner.post("/v2.0/networks", {"network": {}})[1]["network"]["id"]
    status, body = admin.post("/v2.0/ports", {"port": {
        "network_id": net, "project_id": _project(owner), "device_owner": "compute:nova",
        "binding:host_id": host, **attrs}})
    assert status == 201 and body["port"]["binding:vif_type"] == "ovs", body
    if leave_default:
        default = _default_group(owner)
        _agent_reports(fw_server, default["id"], "ACTIVE")
        ports = [p for p in default["ports"] if p != body["port"]["id"]]
        status, put = owner.put(f"{GROUPS}/{default['id']}", {"firewall_group": {"ports": ports}})
        assert status == 200, put
    return str(body["port"]["id"])


def test_an_instance_port_joins_a_group_where_its_ovs_agent_runs_the_extension(
        owner: Client, other: Client, admin: Client, fw_server: Any) -> None:
    port = _instance_port(owner, admin, fw_server, ["fwaas_v2"])
    egress = _policy(owner, firewall_rules=[_rule(owner, action="allow")["id"]])["id"]
    status, body = other.post(GROUPS, {"firewall_group": {"ports": [port]}})
    assert status == 404 and _error(body) == (
        "PortNotFound", f"Port {port} could not be found.")
    group = _group(owner, ports=[port], egress_firewall_policy_id=egress)
    assert group["ports"] == [port] and group["status"] == "PENDING_CREATE"
    status, body = owner.post(GROUPS, {"firewall_group": {"ports": [port]}})
    assert status == 409 and _error(body)[0] == "FirewallGroupPortInUse"
    # an admin may put another project's instance port in a group of its own
    theirs = _instance_port(owner, admin, fw_server, ["fwaas_v2"])
    assert _group(admin, ports=[theirs])["ports"] == [theirs]
    listed = owner.get(f"{GROUPS}?ports={port}")[1]["firewall_groups"]
    assert [g["id"] for g in listed] == [group["id"]]


def test_an_instance_port_whose_agent_lacks_the_extension_is_not_supported(
        owner: Client, admin: Client, fw_server: Any) -> None:
    port = _instance_port(owner, admin, fw_server, ["qos"])
    for client in (owner, admin):
        status, body = client.post(GROUPS, {"firewall_group": {"ports": [port]}})
        assert status == 409 and _error(body) == (
            "FirewallGroupPortNotSupported",
            f"Port {port} is not supported by firewall driver 'fwaas_db'.")
    group = _group(owner)
    status, body = owner.put(f"{GROUPS}/{group['id']}", {"firewall_group": {"ports": [port]}})
    assert status == 409 and _error(body)[0] == "FirewallGroupPortNotSupported"
    assert owner.get(f"{GROUPS}/{group['id']}")[1]["firewall_group"]["ports"] == []


def test_a_new_instance_port_joins_its_projects_default_group_where_it_is_served(
        owner: Client, admin: Client, other: Client, fw_server: Any) -> None:
    port = _instance_port(owner, admin, fw_server, ["fwaas_v2"], leave_default=False)
    default = _default_group(owner)
    assert default["ports"] == [port] and default["status"] == "PENDING_UPDATE"
    assert [g["id"] for g in owner.get(f"{GROUPS}?ports={port}")[1]["firewall_groups"]] == [
        default["id"]]
    assert other.get(f"{GROUPS}?ports={port}")[1]["firewall_groups"] == []
    # not served by the L2 extension, or without port security: left alone
    unserved = _instance_port(owner, admin, fw_server, ["qos"], leave_default=False)
    insecure = _instance_port(owner, admin, fw_server, ["fwaas_v2"], leave_default=False,
                              port_security_enabled=False)
    assert _default_group(owner)["ports"] == [port]
    status, body = owner.post(GROUPS, {"firewall_group": {"ports": [insecure]}})
    assert status == 409 and _error(body)[0] == "FirewallGroupPortNotSupported"
    assert owner.get(f"{GROUPS}?ports={unserved}")[1]["firewall_groups"] == []


def test_an_instance_port_bound_later_joins_the_default_group_then(
        owner: Client, admin: Client, fw_server: Any) -> None:
    host = f"fw-host-{uuid.uuid4().hex[:8]}"
    report_agent(fw_server, AGENT_TYPE_OVS, host, {"bridge_mappings": {},
                                                    "tunnel_types": ["vxlan"],
                                                    "extensions": ["fwaas_v2"]})
    net = owner.post("/v2.0/networks", {"network": {}})[1]["network"]["id"]
    status, body = owner.post("/v2.0/ports", {"port": {"network_id": net,
                                                       "device_owner": "compute:nova"}})
    assert status == 201, body
    port = body["port"]["id"]
    assert port not in _default_group(owner)["ports"]
    status, body = admin.put(f"/v2.0/ports/{port}", {"port": {"binding:host_id": host}})
    assert status == 200 and body["port"]["binding:vif_type"] == "ovs", body
    assert _default_group(owner)["ports"] == [port]
