"""The tag API: ``/v2.0/<plural>/{id}/tags[/{tag}]`` (standard-attr-tag)."""
from __future__ import annotations

from typing import Any

import falcon

from neutrino import errors
from neutrino.api.controller import Api, Member, send
from neutrino.api.hooks import body as body_mod
from neutrino.api.hooks.policy import Targets
from neutrino.context import Context
from neutrino.resources import validators as v
from neutrino.resources.attributes import ResourceDef

_tag = v.string(255)


def _valid_tag(tag: Any) -> str:
    try:
        value = _tag(tag)
    except v.Invalid as exc:
        raise errors.InvalidInput(error_message=f"Invalid input for tags. Reason: {exc}") from None
    if not value:
        raise errors.InvalidInput(error_message=f"Invalid input for tags. Reason: "
                                                f"'{value}' is not a valid tag")
    return value


class _Base:
    def __init__(self, api: Api, rdef: ResourceDef) -> None:
        self.api, self.rdef = api, rdef
        self.member = Member(api, rdef)

    def _authorize(self, ctx: Context, rid: str, verb: str) -> dict[str, Any]:
        """Tags are authorised on the object as found: upstream answers 403
        (``rule:<verb>_<resource>:tags``), not 404, for another project's
        object; only an id that does not exist at all is 404."""
        targets = Targets(self.api.plugin, ctx)
        item = self.api.plugin_for(self.rdef.plural).get(ctx, self.rdef.plural, rid)
        action = f"{verb}_{self.rdef.policy_singular}:tags"
        self.api.policy.enforce(ctx, action, targets.for_rules(self.api.policy, [action], item))
        return item


class Tags(_Base):
    def on_get(self, req: falcon.Request, resp: falcon.Response, rid: str) -> None:
        item = self._authorize(req.context.neutron, rid, "get")
        send(resp, 200, {"tags": item.get("tags", [])})

    def on_put(self, req: falcon.Request, resp: falcon.Response, rid: str) -> None:
        ctx = req.context.neutron
        raw = body_mod.parse_json(req.bounded_stream.read())
        if not isinstance(raw, dict) or not isinstance(raw.get("tags"), list):
            raise errors.BadRequest(resource="tags", msg="Invalid tags body")
        tags = [_valid_tag(t) for t in raw["tags"]]
        duplicates = sorted({t for t in tags if tags.count(t) > 1})
        if duplicates:
            raise errors.InvalidInput(error_message="Duplicate items in the list: "
                                                    + ", ".join(f"'{t}'" for t in duplicates))
        self._authorize(ctx, rid, "update")
        send(resp, 200, {"tags": self.api.plugin_for(self.rdef.plural).set_tags(ctx, self.rdef.plural, rid,
                                                          replace=tags)})

    def on_delete(self, req: falcon.Request, resp: falcon.Response, rid: str) -> None:
        ctx = req.context.neutron
        self._authorize(ctx, rid, "delete")
        self.api.plugin_for(self.rdef.plural).set_tags(ctx, self.rdef.plural, rid, replace=[])
        send(resp, 204)


class Tag(_Base):
    def on_get(self, req: falcon.Request, resp: falcon.Response, rid: str, tag: str) -> None:
        item = self._authorize(req.context.neutron, rid, "get")
        if tag not in item.get("tags", []):
            raise errors.TagNotFound(tag=tag, resource=self.rdef.singular, resource_id=rid)
        send(resp, 204)

    def on_put(self, req: falcon.Request, resp: falcon.Response, rid: str, tag: str) -> None:
        ctx = req.context.neutron
        self._authorize(ctx, rid, "update")
        self.api.plugin_for(self.rdef.plural).set_tags(ctx, self.rdef.plural, rid, add=[_valid_tag(tag)])
        send(resp, 201)

    def on_delete(self, req: falcon.Request, resp: falcon.Response, rid: str, tag: str) -> None:
        ctx = req.context.neutron
        self._authorize(ctx, rid, "delete")
        self.api.plugin_for(self.rdef.plural).set_tags(ctx, self.rdef.plural, rid, remove=[tag])
        send(resp, 204)
