"""``metering`` labels and rules over real HTTP, as upstream 29 answers."""
from __future__ import annotations

import uuid

import pytest

from tests.api import _helpers as h
from tests.conftest import Client

LABELS = "/v2.0/metering/metering-labels"
RULES = "/v2.0/metering/metering-label-rules"


def label(client, **attrs):
    attrs.setdefault("name", h.unique("ml"))
    return h.created(client.post(LABELS, {"metering_label": attrs}), "metering_label")


def rule(client, label_id, **attrs):
    attrs.setdefault("direction", "ingress")
    return h.created(client.post(RULES, {"metering_label_rule": {
        "metering_label_id": label_id, **attrs}}), "metering_label_rule")


def post_rule(client, label_id, **attrs):
    return client.post(RULES, {"metering_label_rule": {"metering_label_id": label_id, **attrs}})


def test_label_has_upstreams_fields(admin):
    lab = label(admin, description="counted")
    assert set(lab) == {"id", "name", "description", "shared", "project_id", "tenant_id"}
    assert (lab["description"], lab["shared"]) == ("counted", False)
    status, body = admin.get(f"{LABELS}/{lab['id']}")
    assert status == 200 and body["metering_label"] == lab
    assert lab["id"] in [x["id"] for x in admin.get(LABELS)[1]["metering_labels"]]


def test_labels_and_rules_cannot_be_updated(admin):
    lab = label(admin)
    msg = h.error(admin.put(f"{LABELS}/{lab['id']}", {"metering_label": {"name": "x"}}),
                  400, "HTTPBadRequest")
    assert msg == "Cannot update read-only attribute name"
    r = rule(admin, lab["id"], remote_ip_prefix="10.0.0.0/24")
    h.error(admin.put(f"{RULES}/{r['id']}", {"metering_label_rule": {"excluded": True}}),
            400, "HTTPBadRequest")
    status, _ = admin.put(f"{RULES}/{r['id']}", {"metering_label_rule": {
        "source_ip_prefix": "10.3.0.0/24"}})
    assert status == 501


def test_rule_has_upstreams_fields_and_normalised_prefixes(admin):
    lab = label(admin)
    r = rule(admin, lab["id"], direction="egress", source_ip_prefix="10.0.0.0/24",
             destination_ip_prefix="10.1.0.5")
    assert r == {"id": r["id"], "metering_label_id": lab["id"], "direction": "egress",
                 "remote_ip_prefix": None, "source_ip_prefix": "10.0.0.0/24",
                 "destination_ip_prefix": "10.1.0.5/32", "excluded": False}
    assert admin.get(f"{RULES}/{r['id']}")[1]["metering_label_rule"] == r
    r2 = rule(admin, lab["id"], remote_ip_prefix="10.77.0.7/24", excluded="yes")
    assert (r2["remote_ip_prefix"], r2["excluded"]) == ("10.77.0.7/24", True)


def test_rule_validation_as_upstream(admin):
    lab = label(admin)
    msg = h.error(post_rule(admin, lab["id"], direction="egress"), 400, "Invalid")
    assert msg == ("You must define at least one of the following parameters "
                   "'remote_ip_prefix', or 'source_ip_prefix' or 'destination_ip_prefix'.")
    msg = h.error(post_rule(admin, lab["id"], direction="egress", remote_ip_prefix="10.9.0.0/24",
                            source_ip_prefix="10.0.0.0/24"), 400, "Invalid")
    assert msg == ("Cannot use 'remote-ip-prefix' in conjunction with 'source-ip-prefix' "
                   "or 'destination-ip-prefix'.")
    msg = h.error(post_rule(admin, lab["id"], direction="egress", source_ip_prefix="garbage"),
                  400, "Invalid")
    assert msg == ("source_ip_prefix: garbage is invalid ['garbage' does not appear to be "
                   "an IPv4 or IPv6 interface].")
    h.error(post_rule(admin, lab["id"], direction="sideways", remote_ip_prefix="10.0.0.0/24"),
            400, "HTTPBadRequest")
    msg = h.error(post_rule(admin, lab["id"], remote_ip_prefix="10.0.0.0/24"),
                  400, "HTTPBadRequest")
    assert msg == "Failed to parse request. Required attribute 'direction' not specified"
    msg = h.error(post_rule(admin, h.ZERO_UUID, direction="egress", remote_ip_prefix="10.0.0.0/8"),
                  404, "MeteringLabelNotFound")
    assert msg == f"Metering label '{h.ZERO_UUID}' does not exist."
    assert admin.get(f"{RULES}?metering_label_id={lab['id']}")[1]["metering_label_rules"] == []


def test_overlapping_remote_prefixes_of_one_direction_are_refused(admin):
    lab = label(admin)
    rule(admin, lab["id"], remote_ip_prefix="10.0.0.0/24")
    msg = h.error(post_rule(admin, lab["id"], direction="ingress",
                            remote_ip_prefix="10.0.0.128/25"), 409, "MeteringLabelRuleOverlaps")
    assert msg == ("Metering label rule with remote_ip_prefix '10.0.0.128/25' overlaps "
                   "another.")
    # other direction, excluded, other family and source prefixes are not compared
    rule(admin, lab["id"], direction="egress", remote_ip_prefix="10.0.0.128/25")
    rule(admin, lab["id"], remote_ip_prefix="10.0.0.128/25", excluded=True)
    rule(admin, lab["id"], remote_ip_prefix="::/0")
    rule(admin, lab["id"], source_ip_prefix="10.0.0.0/24")
    rule(admin, lab["id"], source_ip_prefix="10.0.0.0/24")


def test_deleting_a_label_deletes_its_rules(admin):
    lab = label(admin)
    r = rule(admin, lab["id"], remote_ip_prefix="10.0.0.0/24")
    assert admin.delete(f"{LABELS}/{lab['id']}")[0] == 204
    h.error(admin.get(f"{RULES}/{r['id']}"), 404, "MeteringLabelRuleNotFound")
    msg = h.error(admin.delete(f"{LABELS}/{lab['id']}"), 404, "MeteringLabelNotFound")
    assert msg == f"Metering label '{lab['id']}' does not exist."
    r2 = rule(admin, label(admin)["id"], remote_ip_prefix="10.0.0.0/24")
    assert admin.delete(f"{RULES}/{r2['id']}")[0] == 204
    h.error(admin.delete(f"{RULES}/{r2['id']}"), 404, "MeteringLabelRuleNotFound")


def test_filters_and_sorting(admin):
    project = uuid.uuid4().hex
    a = label(admin, name="a", tenant_id=project)
    b = label(admin, name="b", tenant_id=project, shared=True)
    listed = admin.get(f"{LABELS}?tenant_id={project}&sort_key=name&sort_dir=desc")[1]
    assert [x["id"] for x in listed["metering_labels"]] == [b["id"], a["id"]]
    shared = admin.get(f"{LABELS}?project_id={project}&shared=true")[1]["metering_labels"]
    assert [x["id"] for x in shared] == [b["id"]]
    r = rule(admin, a["id"], remote_ip_prefix="10.0.0.0/24")
    rule(admin, a["id"], direction="egress", remote_ip_prefix="10.0.0.0/24")
    got = admin.get(f"{RULES}?metering_label_id={a['id']}&direction=ingress")[1]
    assert [x["id"] for x in got["metering_label_rules"]] == [r["id"]]
    h.error(admin.get(f"{RULES}?project_id={project}"), 400, "HTTPBadRequest")


@pytest.fixture
def owned(admin, project_id):
    lab = label(admin, tenant_id=project_id)
    return lab, rule(admin, lab["id"], remote_ip_prefix="10.0.0.0/24")


def test_members_read_their_projects_labels_but_only_managers_write(owned, member, server,
                                                                 project_id):
    lab, r = owned
    assert member.get(f"{LABELS}/{lab['id']}")[0] == 200
    assert [x["id"] for x in member.get(LABELS)[1]["metering_labels"]] == [lab["id"]]
    assert member.get(f"{RULES}/{r['id']}")[1]["metering_label_rule"]["id"] == r["id"]
    assert [x["id"] for x in member.get(RULES)[1]["metering_label_rules"]] == [r["id"]]
    h.error(member.post(LABELS, {"metering_label": {"name": "m"}}), 403, "PolicyNotAuthorized")
    h.error(post_rule(member, lab["id"], direction="egress", remote_ip_prefix="10.5.0.0/24"),
            403, "PolicyNotAuthorized")
    h.error(member.delete(f"{LABELS}/{lab['id']}"), 403, "PolicyNotAuthorized")
    manager = Client(server.url, project_id, "manager")
    mine = label(manager)
    assert rule(manager, mine["id"], remote_ip_prefix="10.6.0.0/24")["metering_label_id"] == \
        mine["id"]
    assert manager.delete(f"{LABELS}/{mine['id']}")[0] == 204


def test_other_projects_labels_do_not_exist_for_them(owned, other, server):
    lab, r = owned
    h.error(other.get(f"{LABELS}/{lab['id']}"), 404, "MeteringLabelNotFound")
    h.error(other.get(f"{RULES}/{r['id']}"), 404, "MeteringLabelRuleNotFound")
    assert other.get(LABELS)[1]["metering_labels"] == []
    assert other.get(RULES)[1]["metering_label_rules"] == []
    shared = label(Client(server.url), shared=True)
    h.error(other.get(f"{LABELS}/{shared['id']}"), 404, "MeteringLabelNotFound")
    manager = Client(server.url, uuid.uuid4().hex, "manager")
    h.error(post_rule(manager, lab["id"], direction="egress", remote_ip_prefix="10.5.0.0/24"),
            404, "MeteringLabelNotFound")


def test_extensions_are_listed_and_paging_links_keep_the_prefix(admin):
    aliases = {e["alias"] for e in admin.get("/v2.0/extensions")[1]["extensions"]}
    assert {"metering", "metering_source_and_destination_fields"} <= aliases
    project = uuid.uuid4().hex
    for _ in range(2):
        label(admin, tenant_id=project)
    body = admin.get(f"{LABELS}?tenant_id={project}&limit=1")[1]
    assert len(body["metering_labels"]) == 1
    assert "/v2.0/metering/metering-labels?" in body["metering_labels_links"][0]["href"]
