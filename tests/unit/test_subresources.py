"""Sub-resources: collections under a parent (``/v2.0/boxes/{id}/items``).

Upstream serves QoS rules under their policy and port forwardings under
their floating IP this way: the parent must exist and be visible to the
caller, children are only reachable under their own parent, and a child
without an owner of its own is owned, for policy, by its parent's project.
"""
from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from oslo_policy import policy

from neutrino import errors
from neutrino.plugins.base import ApiExtension, ServicePlugin
from neutrino.resources import validators as v
from neutrino.resources.attributes import ResourceDef, attr, standard_attributes
from neutrino.resources.extensions import ExtensionDescriptor
from tests.inprocess import CountingApp

OWNER = "(rule:admin_only) or (role:member and project_id:%(project_id)s)"
P1, P2 = "a" * 32, "b" * 32


class Rows:
    def __init__(self, singular: str) -> None:
        self.singular, self.rows = singular, {}

    def create(self, ctx: Any, plural: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for item in items:
            row = {**item, "id": str(uuid.uuid4())}
            self.rows[row["id"]] = row
            out.append(dict(row))
        return out

    def get(self, ctx: Any, plural: str, rid: str) -> dict[str, Any]:
        if rid not in self.rows:
            raise errors.NotFound(message=f"{self.singular} {rid} could not be found.")
        return dict(self.rows[rid])

    def list(self, ctx: Any, plural: str, query: Any) -> tuple[list[dict[str, Any]], bool]:
        rows = [dict(r) for r in self.rows.values()]
        for key, values in query.filters.items():
            rows = [r for r in rows if r.get(key) in values]
        return rows, False

    def update(self, ctx: Any, plural: str, rid: str, data: dict[str, Any],
               revision: int | None = None) -> dict[str, Any]:
        self.rows[rid].update(data)
        return dict(self.rows[rid])

    def delete(self, ctx: Any, plural: str, rid: str, revision: int | None = None) -> None:
        del self.rows[rid]


class BoxPlugin(ServicePlugin):
    """Boxes holding items, to exercise sub-resources."""

    service_type = "BOXES"

    def __init__(self, conf: Any, db: Any) -> None:
        super().__init__(conf, db)
        self.boxes, self.items = Rows("Box"), Rows("Item")

    def collections(self) -> dict[str, Any]:
        return {"boxes": self.boxes, "items": self.items}

    def extensions(self) -> list[ApiExtension]:
        box = ResourceDef("box", "boxes", has_tags=False)
        box.add(*standard_attributes())
        item = ResourceDef("item", "items", parent="boxes", parent_key="box_id",
                           policy_name="box_item", has_tags=False)
        item.add(attr("id", v.uuid), attr("weight", v.integer(1, 100), allow_post=True,
                                           allow_put=True, default=1, is_filter=True),
                 attr("box_id", is_visible=False))
        rules = [policy.RuleDefault(f"{verb}_box", OWNER)
                 for verb in ("create", "get", "update", "delete")]
        # Items are writable by admins only, readable by the box's project.
        rules += [policy.RuleDefault("get_box_item", OWNER)]
        rules += [policy.RuleDefault(f"{verb}_box_item", "rule:admin_only")
                  for verb in ("create", "update", "delete")]
        return [ApiExtension(
            descriptor=ExtensionDescriptor("boxes", "Boxes", "Boxes with items.",
                                           "2026-11-29T00:00:00-00:00"),
            resources=[box, item], policies=rules)]


@pytest.fixture
def app(tmp_path: Path) -> CountingApp:
    return CountingApp(tmp_path, "[DEFAULT]\nservice_plugins = "
                                 "tests.unit.test_subresources:BoxPlugin\n")


def call(app: CountingApp, method: str, path: str, project: str | None = None,
         roles: str = "admin", body: Any = None) -> Any:
    headers = {"X-Roles": roles}
    if project:
        headers.update({"X-Project-Id": project, "X-User-Id": "u"})
    return app.client.simulate_request(method, path, json=body, headers=headers)


def test_children_are_created_under_and_listed_within_their_parent(app: CountingApp) -> None:
    b1 = call(app, "POST", "/v2.0/boxes", body={"box": {"name": "one", "project_id": P1}}).json
    b2 = call(app, "POST", "/v2.0/boxes", body={"box": {"name": "two", "project_id": P1}}).json
    b1, b2 = b1["box"]["id"], b2["box"]["id"]
    made = call(app, "POST", f"/v2.0/boxes/{b1}/items", body={"item": {"weight": 7}})
    assert made.status_code == 201, made.text
    assert made.json == {"item": {"id": made.json["item"]["id"], "weight": 7}}
    call(app, "POST", f"/v2.0/boxes/{b2}/items", body={"item": {"weight": 9}})
    listed = call(app, "GET", f"/v2.0/boxes/{b1}/items").json["items"]
    assert [i["weight"] for i in listed] == [7]
    item = made.json["item"]["id"]
    assert call(app, "GET", f"/v2.0/boxes/{b1}/items/{item}").json["item"]["weight"] == 7
    # Reached through the wrong parent, a child does not exist.
    assert call(app, "GET", f"/v2.0/boxes/{b2}/items/{item}").status_code == 404
    assert call(app, "DELETE", f"/v2.0/boxes/{b2}/items/{item}").status_code == 404
    updated = call(app, "PUT", f"/v2.0/boxes/{b1}/items/{item}", body={"item": {"weight": 8}})
    assert updated.json["item"]["weight"] == 8
    assert call(app, "DELETE", f"/v2.0/boxes/{b1}/items/{item}").status_code == 204
    assert call(app, "GET", f"/v2.0/boxes/{b1}/items").json["items"] == []


def test_an_unknown_parent_is_not_found(app: CountingApp) -> None:
    missing = str(uuid.uuid4())
    result = call(app, "GET", f"/v2.0/boxes/{missing}/items")
    assert result.status_code == 404
    assert missing in result.json["NeutronError"]["message"]


def test_children_follow_their_parents_owner_and_their_own_rule_names(app: CountingApp) -> None:
    box = call(app, "POST", "/v2.0/boxes", P1, "member",
               {"box": {"name": "mine"}}).json["box"]["id"]
    item = call(app, "POST", f"/v2.0/boxes/{box}/items", body={"item": {}}).json["item"]["id"]
    # The owner reads the items of its box (get_box_item: owner via the parent) ...
    assert call(app, "GET", f"/v2.0/boxes/{box}/items/{item}", P1, "member").status_code == 200
    # ... but create_box_item is admin-only.
    denied = call(app, "POST", f"/v2.0/boxes/{box}/items", P1, "member", {"item": {}})
    assert denied.status_code == 403
    # Another project cannot see the box, so its items are "not found".
    assert call(app, "GET", f"/v2.0/boxes/{box}/items", P2, "member").status_code == 404
    assert call(app, "GET", f"/v2.0/boxes/{box}/items/{item}", P2, "member").status_code == 404
