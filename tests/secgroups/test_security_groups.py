"""Security groups over the API: the default group, CRUD, policy, extensions."""
from __future__ import annotations

import uuid

import pytest

from tests.api._helpers import ZERO_UUID, error
from tests.conftest import Client, Server
from tests.secgroups.conftest import default_group, group, network_with_subnet, rule

ALIASES = ("security-group", "address-group", "security-groups-remote-address-group",
           "security-groups-normalized-cidr", "stateful-security-group",
           "port-security-groups-filtering", "security-groups-rules-belongs-to-default-sg")


def _shape(rules: list[dict]) -> set[tuple]:
    return {(r["direction"], r["ethertype"], r["remote_group_id"]) for r in rules}


@pytest.mark.parametrize("alias", ALIASES)
def test_security_group_extensions_are_listed_as_upstream(admin: Client, alias: str) -> None:
    import json
    from pathlib import Path
    ref = json.loads(Path("/work/shared/conformance/reference/GET-v2.0-extensions.json")
                     .read_text()) if Path("/work/shared/conformance/reference").exists() else None
    status, body = admin.get(f"/v2.0/extensions/{alias}")
    assert status == 200, body
    if ref is not None:
        (expected,) = [e for e in ref["extensions"] if e["alias"] == alias]
        assert body["extension"] == expected


def test_listing_groups_makes_the_projects_default_group_once(member: Client) -> None:
    first = default_group(member)
    assert first["description"] == "Default security group"
    assert first["stateful"] is True and first["shared"] is False
    assert first["tags"] == [] and first["revision_number"] >= 1
    sg_id = first["id"]
    assert _shape(first["security_group_rules"]) == {
        ("egress", "IPv4", None), ("egress", "IPv6", None),
        ("ingress", "IPv4", sg_id), ("ingress", "IPv6", sg_id)}
    for r in first["security_group_rules"]:
        assert r["belongs_to_default_sg"] is True
        assert r["protocol"] is None and r["remote_ip_prefix"] is None
        assert r["project_id"] == member.session.headers["X-Project-Id"]
    assert default_group(member)["id"] == sg_id
    assert len(member.get("/v2.0/security-groups")[1]["security_groups"]) == 1


def test_creating_a_group_makes_the_default_too_and_gives_egress_rules(member: Client) -> None:
    sg = group(member, description="web")
    assert sg["description"] == "web" and sg["stateful"] is True
    assert _shape(sg["security_group_rules"]) == {("egress", "IPv4", None),
                                                  ("egress", "IPv6", None)}
    assert all(r["belongs_to_default_sg"] is False for r in sg["security_group_rules"])
    names = sorted(g["name"] for g in member.get("/v2.0/security-groups")[1]["security_groups"])
    assert names == sorted(["default", sg["name"]])


def test_creating_a_network_makes_the_projects_default_group(server: Server) -> None:
    project = uuid.uuid4().hex
    client = Client(server.url, project, "member")
    network_with_subnet(client)
    status, body = Client(server.url).get(f"/v2.0/security-groups?project_id={project}"
                                          "&name=default")
    assert status == 200 and len(body["security_groups"]) == 1


def test_admin_listing_another_project_makes_its_default(project_admin: Client) -> None:
    other = uuid.uuid4().hex
    body = project_admin.get(f"/v2.0/security-groups?project_id={other}")[1]
    assert [g["name"] for g in body["security_groups"]] == ["default"]
    assert body["security_groups"][0]["project_id"] == other
    again = project_admin.get(f"/v2.0/security-groups?project_id={other}")[1]
    assert again == body


def test_no_second_group_may_be_named_default(member: Client) -> None:
    for name in ("default", "Default"):
        msg = error(member.post("/v2.0/security-groups", {"security_group": {"name": name}}),
                    409, "SecurityGroupDefaultAlreadyExists")
        assert msg == "Default security group already exists."
    sg = group(member)
    error(member.put(f"/v2.0/security-groups/{sg['id']}",
                     {"security_group": {"name": "DEFAULT"}}),
          409, "SecurityGroupDefaultAlreadyExists")


def test_default_group_keeps_its_name_but_its_description_may_change(member: Client) -> None:
    sg = default_group(member)
    msg = error(member.put(f"/v2.0/security-groups/{sg['id']}",
                           {"security_group": {"name": "renamed"}}),
                409, "SecurityGroupCannotUpdateDefault")
    assert msg == "Updating default security group not allowed."
    status, body = member.put(f"/v2.0/security-groups/{sg['id']}",
                              {"security_group": {"description": "mine"}})
    assert status == 200 and body["security_group"]["description"] == "mine"
    assert body["security_group"]["revision_number"] == sg["revision_number"] + 1


def test_only_admins_delete_the_default_group_and_it_comes_back(member: Client,
                                                                admin: Client) -> None:
    sg = default_group(member)
    msg = error(member.delete(f"/v2.0/security-groups/{sg['id']}"),
                409, "SecurityGroupCannotRemoveDefault")
    assert msg == "Insufficient rights for removing default security group."
    assert admin.delete(f"/v2.0/security-groups/{sg['id']}")[0] == 204
    again = default_group(member)
    assert again["id"] != sg["id"]


def test_update_and_delete_a_group(member: Client) -> None:
    sg = group(member)
    status, body = member.put(f"/v2.0/security-groups/{sg['id']}", {"security_group": {
        "name": "renamed", "description": "d", "stateful": False}})
    assert status == 200, body
    got = body["security_group"]
    assert (got["name"], got["description"], got["stateful"]) == ("renamed", "d", False)
    assert member.get(f"/v2.0/security-groups/{sg['id']}")[1]["security_group"]["name"] == \
        "renamed"
    assert member.delete(f"/v2.0/security-groups/{sg['id']}")[0] == 204
    msg = error(member.get(f"/v2.0/security-groups/{sg['id']}"), 404, "SecurityGroupNotFound")
    assert msg == f"Security group {sg['id']} does not exist"


def test_deleting_a_group_deletes_its_rules_and_rules_naming_it(member: Client) -> None:
    target, other = group(member), group(member)
    own = rule(member, target["id"], protocol="tcp", port_range_min=22, port_range_max=22)
    naming = rule(member, other["id"], remote_group_id=target["id"])
    assert member.delete(f"/v2.0/security-groups/{target['id']}")[0] == 204
    for r in (own, naming):
        error(member.get(f"/v2.0/security-group-rules/{r['id']}"), 404)


def test_missing_groups_are_404(member: Client) -> None:
    for method in ("get", "delete"):
        error(getattr(member, method)(f"/v2.0/security-groups/{ZERO_UUID}"), 404,
              "SecurityGroupNotFound")
    error(member.put(f"/v2.0/security-groups/{ZERO_UUID}", {"security_group": {"name": "x"}}),
          404, "SecurityGroupNotFound")


def test_other_projects_groups_are_invisible_and_404(member: Client, other: Client) -> None:
    sg = group(member)
    error(other.get(f"/v2.0/security-groups/{sg['id']}"), 404, "SecurityGroupNotFound")
    error(other.put(f"/v2.0/security-groups/{sg['id']}", {"security_group": {"name": "x"}}),
          404, "SecurityGroupNotFound")
    error(other.delete(f"/v2.0/security-groups/{sg['id']}"), 404, "SecurityGroupNotFound")
    ids = {g["id"] for g in other.get("/v2.0/security-groups")[1]["security_groups"]}
    assert sg["id"] not in ids


def test_admin_sees_every_projects_groups(member: Client, admin: Client) -> None:
    sg = group(member)
    status, body = admin.get(f"/v2.0/security-groups/{sg['id']}")
    assert status == 200 and body["security_group"]["id"] == sg["id"]
    listed = admin.get(f"/v2.0/security-groups?id={sg['id']}")[1]["security_groups"]
    assert [g["id"] for g in listed] == [sg["id"]]


def test_reader_sees_but_cannot_create_or_change(member: Client, reader: Client) -> None:
    sg = group(member)
    assert reader.get(f"/v2.0/security-groups/{sg['id']}")[0] == 200
    error(reader.post("/v2.0/security-groups", {"security_group": {"name": "r"}}), 403,
          "PolicyNotAuthorized")
    error(reader.put(f"/v2.0/security-groups/{sg['id']}", {"security_group": {"name": "r"}}),
          403, "PolicyNotAuthorized")
    error(reader.delete(f"/v2.0/security-groups/{sg['id']}"), 403, "PolicyNotAuthorized")


def test_member_cannot_create_groups_for_another_project(member: Client) -> None:
    error(member.post("/v2.0/security-groups", {"security_group": {
        "name": "x", "project_id": uuid.uuid4().hex}}), 400, "HTTPBadRequest")


def test_admin_creates_a_group_for_another_project(admin: Client) -> None:
    project = uuid.uuid4().hex
    sg = group(admin, project_id=project)
    assert sg["project_id"] == project and sg["tenant_id"] == project
    names = {g["name"] for g in admin.get(f"/v2.0/security-groups?project_id={project}")[1]
             ["security_groups"]}
    assert names == {"default", sg["name"]}


def test_groups_carry_tags_and_filter_by_them(member: Client) -> None:
    sg = group(member, tags=["blue"])
    assert sg["tags"] == ["blue"]
    assert member.put(f"/v2.0/security-groups/{sg['id']}/tags/red")[0] == 201
    found = member.get("/v2.0/security-groups?tags=blue,red")[1]["security_groups"]
    assert [g["id"] for g in found] == [sg["id"]]


def test_list_filters_sorting_paging_and_fields(member: Client) -> None:
    made = [group(member, name=f"page-{i}") for i in range(3)]
    body = member.get("/v2.0/security-groups?name=page-1&fields=id&fields=name")[1]
    assert body["security_groups"] == [{"id": made[1]["id"], "name": "page-1"}]
    page = member.get("/v2.0/security-groups?sort_key=name&sort_dir=desc&limit=2")[1]
    assert [g["name"] for g in page["security_groups"]] == ["page-2", "page-1"]
    assert page["security_groups_links"][0]["rel"] == "next"
    stateless = group(member, stateful=False)
    found = member.get("/v2.0/security-groups?stateful=false")[1]["security_groups"]
    assert [g["id"] for g in found] == [stateless["id"]]


def test_if_match_revision_guards_updates(member: Client) -> None:
    sg = group(member)
    rev = sg["revision_number"]
    stale = member.req("PUT", f"/v2.0/security-groups/{sg['id']}",
                       {"security_group": {"description": "x"}},
                       headers={"If-Match": f"revision_number={rev + 5}"})
    error(stale, 412, "RevisionNumberConstraintFailed")
    ok = member.req("PUT", f"/v2.0/security-groups/{sg['id']}",
                    {"security_group": {"description": "x"}},
                    headers={"If-Match": f"revision_number={rev}"})
    assert ok[0] == 200


@pytest.mark.parametrize("stateful", [True, False])
def test_bulk_create_takes_items_wrapped_in_the_singular_key(member: Client, other: Client,
                                                             admin: Client,
                                                             stateful: bool) -> None:
    """Upstream's test_create_bulk_sec_groups (stateful and stateless): the
    client wraps each item as {"security_group": {...}}; bare items mix in."""
    names = [f"bulk-{uuid.uuid4().hex[:8]}" for _ in range(3)]
    items = [{"security_group": {"name": names[0], "stateful": stateful}},
             {"security_group": {"name": names[1], "stateful": stateful}},
             {"name": names[2], "stateful": stateful}]
    status, body = member.post("/v2.0/security-groups", {"security_groups": items})
    assert status == 201, body
    made = body["security_groups"]
    assert [g["name"] for g in made] == names
    assert {g["stateful"] for g in made} == {stateful}
    assert all(len(g["security_group_rules"]) == 2 for g in made)
    for g in made:
        assert member.get(f"/v2.0/security-groups/{g['id']}")[0] == 200
        assert other.get(f"/v2.0/security-groups/{g['id']}")[0] == 404
    # an admin creates in bulk for another project the same way
    project = uuid.uuid4().hex
    status, body = admin.post("/v2.0/security-groups", {"security_groups": [
        {"security_group": {"name": names[0], "project_id": project}}]})
    assert status == 201 and body["security_groups"][0]["project_id"] == project, body


def test_bulk_item_wrapped_around_no_object_is_400_and_creates_nothing(member: Client) -> None:
    name = f"bulk-{uuid.uuid4().hex[:8]}"
    for inner, message in ((None, "Unable to find 'security_group' in request body"),
                           ("x", "Object 'security_group' contains invalid data")):
        items = [{"name": name}, {"security_group": inner}]
        assert error(member.post("/v2.0/security-groups", {"security_groups": items}),
                     400, "HTTPBadRequest") == message
    assert member.get(f"/v2.0/security-groups?name={name}")[1]["security_groups"] == []
    assert error(member.post("/v2.0/security-groups", {"security_group": "x"}), 400,
                 "HTTPBadRequest") == "Object 'security_group' contains invalid data"
