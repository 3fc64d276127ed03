"""A third-party extension package, as an operator would install one.

It brings one service plugin with the three kinds of extension: a resource
extension (a new ``widgets`` collection and an ``example:color`` attribute
on networks), an action extension (``PUT /v2.0/widgets/{id}/polish``) and a
request extension (annotates network responses). Storage is in memory: this
package exists to exercise neutrino's extension points, not to persist data.
"""
from __future__ import annotations

import threading
import uuid
from typing import Any

from oslo_policy import policy

from neutrino import errors
from neutrino.plugins.base import ApiExtension, AttributeHandler, RequestHook, ServicePlugin
from neutrino.resources import validators as v
from neutrino.resources.attributes import ResourceDef, attr, standard_attributes
from neutrino.resources.extensions import ExtensionDescriptor

ALIAS = "example-widgets"
OWNER = "(rule:admin_only) or (role:member and project_id:%(project_id)s)"


class Widgets:
    """The ``widgets`` collection."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, Any]] = {}
        self.lock = threading.Lock()

    def create(self, ctx: Any, plural: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        with self.lock:
            for item in items:
                row = {"id": str(uuid.uuid4()), "name": item.get("name", ""),
                       "description": item.get("description", ""),
                       "project_id": item["project_id"], "tenant_id": item["project_id"],
                       "size": item.get("size", 1), "polished": False, "tags": [],
                       "created_at": None, "updated_at": None, "revision_number": 0}
                self.rows[row["id"]] = row
                out.append(dict(row))
        return out

    def get(self, ctx: Any, plural: str, rid: str) -> dict[str, Any]:
        if rid not in self.rows:
            raise errors.NotFound(message=f"Widget {rid} could not be found.")
        return dict(self.rows[rid])

    def list(self, ctx: Any, plural: str, query: Any) -> tuple[list[dict[str, Any]], bool]:
        rows = [dict(r) for r in self.rows.values()]
        for key, values in query.filters.items():
            rows = [r for r in rows if r.get(key) in values]
        return rows, False

    def update(self, ctx: Any, plural: str, rid: str, data: dict[str, Any],
               revision: int | None = None) -> dict[str, Any]:
        self.get(ctx, plural, rid)
        self.rows[rid].update(data)
        return dict(self.rows[rid])

    def delete(self, ctx: Any, plural: str, rid: str, revision: int | None = None) -> None:
        self.get(ctx, plural, rid)
        del self.rows[rid]

    def polish(self, ctx: Any, rid: str, body: Any) -> dict[str, Any]:
        self.get(ctx, "widgets", rid)
        self.rows[rid]["polished"] = True
        return {"widget": dict(self.rows[rid])}


class NetworkColor(AttributeHandler):
    """``example:color`` on networks."""

    def __init__(self) -> None:
        self.colors: dict[str, str] = {}

    def process(self, ctx: Any, plural: str, data: dict[str, Any], result: dict[str, Any],
                creating: bool) -> None:
        if "example:color" in data and (creating or data["example:color"] is not None):
            self.colors[result["id"]] = data["example:color"]
        result["example:color"] = self.colors.get(result["id"], "none")

    def extend(self, ctx: Any, plural: str, items: list[dict[str, Any]]) -> None:
        for item in items:
            item["example:color"] = self.colors.get(item["id"], "none")

    def delete(self, ctx: Any, plural: str, resource_id: str) -> None:
        self.colors.pop(resource_id, None)


class Annotate(RequestHook):
    """Marks every network response, to show request extensions run."""

    def on_response(self, ctx: Any, method: str, plural: str, payload: Any) -> None:
        if plural != "networks":
            return
        for item in payload.get("networks", [payload.get("network")]):
            if isinstance(item, dict):
                item["example:annotated"] = True


def _widget_def() -> ResourceDef:
    r = ResourceDef("widget", "widgets")
    r.add(*standard_attributes())
    r.add(attr("size", v.integer(1, 10), default=1, allow_post=True, allow_put=True,
               is_filter=True))
    r.add(attr("polished", is_filter=True))
    r.has_tags = False
    return r


class ExampleServicePlugin(ServicePlugin):
    """Example widgets from a third-party package."""

    service_type = "EXAMPLE"
    supported_extension_aliases = (ALIAS,)

    def __init__(self, conf: Any, db: Any) -> None:
        super().__init__(conf, db)
        self.widgets = Widgets()

    def collections(self) -> dict[str, Any]:
        return {"widgets": self.widgets}

    def extensions(self) -> list[ApiExtension]:
        rules = [policy.RuleDefault(f"{verb}_widget", OWNER)
                 for verb in ("create", "get", "update", "delete")]
        rules += [policy.RuleDefault("polish", OWNER),
                  policy.RuleDefault("create_network:example:color", "rule:admin_only"),
                  policy.RuleDefault("update_network:example:color", "rule:admin_only")]
        return [ApiExtension(
            descriptor=ExtensionDescriptor(ALIAS, "Example widgets",
                                           "Widgets from a third-party package.",
                                           "2026-11-29T00:00:00-00:00"),
            resources=[_widget_def()],
            attributes={"networks": [attr("example:color", v.values("red", "green", "blue"),
                                          default="none", allow_post=True, allow_put=True)]},
            attribute_handler=NetworkColor(),
            actions={"widgets": {"polish": self.widgets.polish}},
            request_hooks=[Annotate()],
            policies=rules)]
