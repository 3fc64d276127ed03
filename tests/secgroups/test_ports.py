"""Security groups on ports: the default group, given groups, port security."""
from __future__ import annotations

from tests.api._helpers import ZERO_UUID, error, port
from tests.conftest import Client
from tests.secgroups.conftest import default_group, group, network_with_subnet


def test_a_port_gets_its_projects_default_group(member: Client) -> None:
    net = network_with_subnet(member)
    created = port(member, net["id"])
    assert created["security_groups"] == [default_group(member)["id"]]
    shown = member.get(f"/v2.0/ports/{created['id']}")[1]["port"]
    assert shown["security_groups"] == created["security_groups"]


def test_given_groups_replace_the_default_and_empty_or_null_means_none(member: Client) -> None:
    net = network_with_subnet(member)
    a, b = group(member), group(member)
    given = port(member, net["id"], security_groups=[a["id"], b["id"]])
    assert sorted(given["security_groups"]) == sorted([a["id"], b["id"]])
    assert port(member, net["id"], security_groups=[])["security_groups"] == []
    assert port(member, net["id"], security_groups=None)["security_groups"] == []


def test_ports_of_the_network_itself_get_no_groups(member: Client, admin: Client) -> None:
    net = network_with_subnet(member)
    for owner in ("network:dhcp", "network:router_interface"):
        made = port(admin, net["id"], device_owner=owner)
        assert made["security_groups"] == []


def test_changing_a_ports_groups(member: Client) -> None:
    net = network_with_subnet(member)
    made = port(member, net["id"])
    sg = group(member)
    status, body = member.put(f"/v2.0/ports/{made['id']}", {"port": {"security_groups": [sg["id"]]}})
    assert status == 200 and body["port"]["security_groups"] == [sg["id"]]
    status, body = member.put(f"/v2.0/ports/{made['id']}", {"port": {"security_groups": []}})
    assert status == 200 and body["port"]["security_groups"] == []
    status, body = member.put(f"/v2.0/ports/{made['id']}", {"port": {"name": "x"}})
    assert body["port"]["security_groups"] == []


def test_unknown_or_foreign_groups_are_404_and_nothing_is_made(member: Client,
                                                               other: Client) -> None:
    net = network_with_subnet(member)
    theirs = group(other)
    for wanted in ([ZERO_UUID], [theirs["id"]]):
        msg = error(member.post("/v2.0/ports", {"port": {"network_id": net["id"],
                                                        "security_groups": wanted}}),
                    404, "SecurityGroupNotFound")
        assert msg == f"Security group {wanted[0]} does not exist"
    assert member.get(f"/v2.0/ports?network_id={net['id']}")[1]["ports"] == []
    made = port(member, net["id"])
    error(member.put(f"/v2.0/ports/{made['id']}", {"port": {"security_groups": [theirs["id"]]}}),
          404, "SecurityGroupNotFound")
    shown = member.get(f"/v2.0/ports/{made['id']}")[1]["port"]
    assert shown["security_groups"] == [default_group(member)["id"]]


def test_bad_security_group_lists_are_400(member: Client) -> None:
    net = network_with_subnet(member)
    sg = group(member)
    cases = [("bad", "'bad' is not a list"), (["bad"], "'bad' is not a valid UUID"),
             ([sg["id"], sg["id"]], f"Duplicate items in the list: '{sg['id']}'")]
    for value, reason in cases:
        msg = error(member.post("/v2.0/ports", {"port": {"network_id": net["id"],
                                                        "security_groups": value}}),
                    400, "HTTPBadRequest")
        assert msg == f"Invalid input for security_groups. Reason: {reason}."


def test_stateful_and_stateless_groups_do_not_mix_on_a_port(member: Client) -> None:
    net = network_with_subnet(member)
    a, b = group(member), group(member, stateful=False)
    error(member.post("/v2.0/ports", {"port": {"network_id": net["id"],
                                              "security_groups": [a["id"], b["id"]]}}),
          409, "SecurityGroupConflict")


def test_a_group_in_use_cannot_be_deleted_nor_change_statefulness(member: Client) -> None:
    net = network_with_subnet(member)
    sg = group(member)
    made = port(member, net["id"], security_groups=[sg["id"]])
    msg = error(member.delete(f"/v2.0/security-groups/{sg['id']}"), 409, "SecurityGroupInUse")
    assert msg == f"Security Group {sg['id']} in use."
    error(member.put(f"/v2.0/security-groups/{sg['id']}", {"security_group": {"stateful": False}}),
          409, "SecurityGroupInUse")
    assert member.delete(f"/v2.0/ports/{made['id']}")[0] == 204
    assert member.delete(f"/v2.0/security-groups/{sg['id']}")[0] == 204


def test_ports_filter_by_security_group(member: Client) -> None:
    net = network_with_subnet(member)
    a, b = group(member), group(member)
    pa = port(member, net["id"], security_groups=[a["id"]])
    pb = port(member, net["id"], security_groups=[b["id"]])
    port(member, net["id"], security_groups=[])
    one = member.get(f"/v2.0/ports?security_groups={a['id']}")[1]["ports"]
    assert [p["id"] for p in one] == [pa["id"]]
    both = member.get(f"/v2.0/ports?security_groups={a['id']}&security_groups={b['id']}")[1]
    assert sorted(p["id"] for p in both["ports"]) == sorted([pa["id"], pb["id"]])


# -- with the port_security extension driver -------------------------------------------

def test_no_groups_without_port_security(ps_member: Client) -> None:
    net = network_with_subnet(ps_member)
    sg = group(ps_member)
    msg = error(ps_member.post("/v2.0/ports", {"port": {
        "network_id": net["id"], "port_security_enabled": False,
        "security_groups": [sg["id"]]}}), 400, "PortSecurityAndIPRequiredForSecurityGroups")
    assert msg == ("Port security must be enabled and port must have an IP address in order "
                   "to use security groups.")
    off = port(ps_member, net["id"], port_security_enabled=False)
    assert off["security_groups"] == []
    error(ps_member.put(f"/v2.0/ports/{off['id']}", {"port": {"security_groups": [sg["id"]]}}),
          400, "PortSecurityAndIPRequiredForSecurityGroups")
    on = ps_member.put(f"/v2.0/ports/{off['id']}", {"port": {"port_security_enabled": True}})[1]
    assert on["port"]["security_groups"] == []  # turning it on adds no default


def test_a_network_without_port_security_gives_ports_no_groups(ps_member: Client) -> None:
    net = network_with_subnet(ps_member, port_security_enabled=False)
    assert port(ps_member, net["id"])["security_groups"] == []


def test_port_security_stays_on_while_the_port_has_groups(ps_member: Client) -> None:
    net = network_with_subnet(ps_member)
    made = port(ps_member, net["id"])
    assert made["port_security_enabled"] is True and len(made["security_groups"]) == 1
    msg = error(ps_member.put(f"/v2.0/ports/{made['id']}",
                              {"port": {"port_security_enabled": False}}),
                409, "PortSecurityPortHasSecurityGroup")
    assert msg == ("Port has security group associated. Cannot disable port security or IP "
                   "address until security group is removed.")
    shown = ps_member.get(f"/v2.0/ports/{made['id']}")[1]["port"]
    assert shown["port_security_enabled"] is True
    status, body = ps_member.put(f"/v2.0/ports/{made['id']}", {"port": {
        "port_security_enabled": False, "security_groups": []}})
    assert status == 200, body
    assert body["port"]["port_security_enabled"] is False
    assert body["port"]["security_groups"] == []
