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
# Upstream's limit, counted on the tags a request names (``tagging.py``).
MAX_TAGS = 50


def _valid_tag(tag: Any) -> str:
    """One tag, as upstream's ``validate_tag``: any string up to 255
    characters (an empty one included)."""
    try:
        return _tag(tag)
    except v.Invalid as exc:
        raise errors.InvalidInput(error_message=str(exc)) from None


def _valid_body(raw: Any) -> list[str]:
    """``{"tags": [...]}``: a list of unique strings, checked in upstream's
    order (a list, then duplicates, then each item)."""
    if not isinstance(raw, dict) or "tags" not in raw:
        raise errors.InvalidInput(error_message="Invalid tags body")
    tags = raw["tags"]
    if not isinstance(tags, list):
        raise errors.InvalidInput(error_message=f"'{tags}' is not a list")
    seen: list[Any] = []
    duplicates: list[Any] = []
    for tag in tags:
        if tag in seen and tag not in duplicates:
            duplicates.append(tag)
        seen.append(tag)
    if duplicates:
        raise errors.InvalidInput(error_message="Duplicate items in the list: '"
                                                + ", ".join(str(t) for t in duplicates) + "'")
    return [_valid_tag(t) for t in tags]


def _within_limit(plural: str, tags: list[str]) -> None:
    if len(set(tags)) > MAX_TAGS:
        raise errors.BadRequest(resource=plural, msg=f"The number of tags exceed the "
                                                     f"per-resource limit of {MAX_TAGS}")


class _Base:
    def __init__(self, api: Api, rdef: ResourceDef) -> None:
        self.api, self.rdef = api, rdef
        self.member = Member(api, rdef)

    def _authorize(self, ctx: Context, rid: str, verb: str) -> dict[str, Any]:
        """Tags are authorised on the object as found: upstream answers 403
        (``rule:<verb>_<resource>:tags``), not 404, for another project's
        object; only an id that does not exist at all is 404."""
        targets = Targets(self.api.plugin, ctx)
        plugin = self.api.plugin_for(self.rdef.plural)
        try:
            item = plugin.get(ctx, self.rdef.plural, rid)
        except errors.NotFound:
            # One the caller does not see (a network: ``get_for``) is read
            # as upstream reads it here, elevated; the rules then decide.
            item = plugin.get(Context.admin(), self.rdef.plural, rid)
        action = f"{verb}_{self.rdef.policy_singular}:tags"
        self.api.policy.enforce(ctx, action, targets.for_rules(self.api.policy, [action], item))
        return item


class Tags(_Base):
    def on_get(self, req: falcon.Request, resp: falcon.Response, rid: str) -> None:
        item = self._authorize(req.context.neutron, rid, "get")
        send(resp, 200, {"tags": item.get("tags", [])})

    def on_post(self, req: falcon.Request, resp: falcon.Response, rid: str) -> None:
        """``tag-creation``: adds the tags given to those the resource has
        and answers with the body as sent, as upstream."""
        ctx = req.context.neutron
        tags = _valid_body(body_mod.parse_json(req.bounded_stream.read()))
        self._authorize(ctx, rid, "create")
        _within_limit(self.rdef.plural, tags)
        self.api.plugin_for(self.rdef.plural).set_tags(ctx, self.rdef.plural, rid, add=tags)
        send(resp, 200, {"tags": tags})

    def on_put(self, req: falcon.Request, resp: falcon.Response, rid: str) -> None:
        ctx = req.context.neutron
        tags = _valid_body(body_mod.parse_json(req.bounded_stream.read()))
        self._authorize(ctx, rid, "update")
        _within_limit(self.rdef.plural, tags)
        send(resp, 200, {"tags": self.api.plugin_for(self.rdef.plural).set_tags(ctx, self.rdef.plural, rid,
                                                          replace=tags)})

    def on_delete(self, req: falcon.Request, resp: falcon.Response, rid: str) -> None:
        ctx = req.context.neutron
        self._authorize(ctx, rid, "delete")
        self.api.plugin_for(self.rdef.plural).set_tags(ctx, self.rdef.plural, rid, replace=[])
        send(resp, 204)


class Tag(_Base):
    def on_get(self, req: falcon.Request, resp: falcon.Response, rid: str, tag: str) -> None:
        _valid_tag(tag)
        item = self._authorize(req.context.neutron, rid, "get")
        if tag not in item.get("tags", []):
            raise errors.TagNotFound(tag=tag, resource=self.rdef.singular, resource_id=rid)
        send(resp, 204)

    # Upstream's router sends a POST on one tag to the show (204 or 404).
    on_post = on_get

    def on_put(self, req: falcon.Request, resp: falcon.Response, rid: str, tag: str) -> None:
        ctx = req.context.neutron
        _valid_tag(tag)
        item = self._authorize(ctx, rid, "update")
        _within_limit(self.rdef.plural, [*item.get("tags", []), tag])
        self.api.plugin_for(self.rdef.plural).set_tags(ctx, self.rdef.plural, rid, add=[tag])
        send(resp, 201)

    def on_delete(self, req: falcon.Request, resp: falcon.Response, rid: str, tag: str) -> None:
        ctx = req.context.neutron
        _valid_tag(tag)
        self._authorize(ctx, rid, "delete")
        self.api.plugin_for(self.rdef.plural).set_tags(ctx, self.rdef.plural, rid, remove=[tag])
        send(resp, 204)
